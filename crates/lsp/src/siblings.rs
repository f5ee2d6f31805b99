//! A server written over several files: the other rules files in a
//! document's directory that declare the same server are checked with it
//! (a hint declared in one and used in another, a tool named twice), the
//! editor's unsaved text winning over what is on disk.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The largest sibling file read.
const MOST_BYTES: u64 = 8 * 1024 * 1024;

/// The server each file of a directory declares, by the file's modification
/// time (read again when it changes).
#[derive(Default)]
pub(crate) struct Siblings {
    names: RefCell<HashMap<PathBuf, (SystemTime, Option<String>)>>,
}

/// The server a rules text declares, read cheaply (no analysis).
pub(crate) fn server_name(path: &Path, text: &str) -> Option<String> {
    let options = mcp_resolve::LoadOptions::default();
    let project = mcp_resolve::load_str_with(&path.to_string_lossy(), text, false, &options);
    project.servers.first().map(|s| s.name.clone())
}

impl Siblings {
    /// The other files of `path`'s directory that declare `server`, with
    /// their texts (`open`'s for a file open in the editor), in path order.
    pub(crate) fn of(
        &self,
        path: &Path,
        server: &str,
        open: &dyn Fn(&Path) -> Option<String>,
    ) -> Vec<(PathBuf, String)> {
        let Some(directory) = path.parent().filter(|d| !d.as_os_str().is_empty()) else {
            return Vec::new();
        };
        let Ok(entries) = std::fs::read_dir(directory) else {
            return Vec::new();
        };
        let mut found: Vec<(PathBuf, String)> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p != path && crate::convert::is_rules_path(p))
            .filter_map(|p| {
                let text = match open(&p) {
                    Some(text) => text,
                    None => {
                        let metadata = std::fs::metadata(&p).ok()?;
                        if metadata.len() > MOST_BYTES {
                            return None;
                        }
                        std::fs::read_to_string(&p).ok()?
                    }
                };
                (self.name(&p, &text).as_deref() == Some(server)).then_some((p, text))
            })
            .collect();
        found.sort();
        found
    }

    fn name(&self, path: &Path, text: &str) -> Option<String> {
        let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
        let mut names = self.names.borrow_mut();
        if let (Some(modified), Some((at, name))) = (modified, names.get(path))
            && *at == modified
        {
            return name.clone();
        }
        if !crate::convert::is_rules(&path.to_string_lossy(), text) {
            return None;
        }
        let name = server_name(path, text);
        if let Some(modified) = modified {
            names.insert(path.to_path_buf(), (modified, name.clone()));
        }
        name
    }
}
