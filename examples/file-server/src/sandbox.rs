//! File operations confined to one directory.
//!
//! Every path a client sends is relative to the sandbox root and is resolved
//! through [`cap_std::fs::Dir`], which opens each component relative to the
//! root's directory handle: absolute paths, `..` that climbs above the root
//! and symlinks whose target lies outside it are refused by the kernel-level
//! walk itself, with no check-then-open race. A lexical check first gives the
//! common escapes a clear message.

use std::io::{self, Read, Write};
use std::path::{Component, Path};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};

/// The largest file `read` returns, in bytes.
pub const MAX_READ_BYTES: u64 = 1 << 20;

/// The most entries `list` returns.
pub const MAX_LIST_ENTRIES: usize = 1000;

/// A directory the server may touch, and nothing outside it.
#[derive(Debug)]
pub struct Sandbox {
    root: Dir,
}

/// Why an operation was not carried out, worded for the client.
#[derive(Debug)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

type Result<T> = std::result::Result<T, Refused>;

impl Sandbox {
    /// Opens `root`, which must be an existing directory.
    pub fn open(root: &Path) -> io::Result<Sandbox> {
        let root = Dir::open_ambient_dir(root, ambient_authority())?;
        Ok(Sandbox { root })
    }

    /// The text of a file (UTF-8, at most [`MAX_READ_BYTES`]).
    pub fn read(&self, path: &str) -> Result<String> {
        let rel = relative(path)?;
        let file = self.root.open(rel).map_err(|e| failed(path, &e))?;
        let mut bytes = Vec::new();
        file.take(MAX_READ_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| failed(path, &e))?;
        if bytes.len() as u64 > MAX_READ_BYTES {
            return Err(Refused(format!(
                "{path}: larger than {MAX_READ_BYTES} bytes; not read"
            )));
        }
        String::from_utf8(bytes).map_err(|_| Refused(format!("{path}: not UTF-8 text")))
    }

    /// Appends `content` to a file, creating it if needed.
    pub fn append(&self, path: &str, content: &str) -> Result<()> {
        let rel = relative(path)?;
        let mut options = OpenOptions::new();
        options.append(true).create(true);
        let mut file = self
            .root
            .open_with(rel, &options)
            .map_err(|e| failed(path, &e))?;
        file.write_all(content.as_bytes())
            .map_err(|e| failed(path, &e))
    }

    /// Replaces the content of a file, creating it if needed.
    pub fn replace(&self, path: &str, content: &str) -> Result<()> {
        let rel = relative(path)?;
        self.root
            .write(rel, content.as_bytes())
            .map_err(|e| failed(path, &e))
    }

    /// Deletes a file (never a directory).
    pub fn delete(&self, path: &str) -> Result<()> {
        let rel = relative(path)?;
        self.root.remove_file(rel).map_err(|e| failed(path, &e))
    }

    /// Copies a file. Without `overwrite`, an existing destination is an
    /// error and is left as it was.
    pub fn copy(&self, source: &str, destination: &str, overwrite: bool) -> Result<u64> {
        let from = relative(source)?;
        let to = relative(destination)?;
        let mut input = self.root.open(from).map_err(|e| failed(source, &e))?;
        let meta = input.metadata().map_err(|e| failed(source, &e))?;
        if !meta.is_file() {
            return Err(Refused(format!("{source}: not a regular file")));
        }
        let mut options = OpenOptions::new();
        options.write(true);
        if overwrite {
            options.create(true).truncate(true);
        } else {
            options.create_new(true);
        }
        let mut output = self
            .root
            .open_with(to, &options)
            .map_err(|e| failed(destination, &e))?;
        io::copy(&mut input, &mut output).map_err(|e| failed(destination, &e))
    }

    /// The entries of a directory, sorted, directories marked with a `/`.
    pub fn list(&self, path: &str) -> Result<Vec<String>> {
        let rel = relative(path)?;
        let dir = if rel == Path::new(".") {
            self.root.try_clone().map_err(|e| failed(path, &e))?
        } else {
            self.root.open_dir(rel).map_err(|e| failed(path, &e))?
        };
        let mut names = Vec::new();
        for entry in dir.entries().map_err(|e| failed(path, &e))? {
            let entry = entry.map_err(|e| failed(path, &e))?;
            let mut name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                name.push('/');
            }
            names.push(name);
            if names.len() > MAX_LIST_ENTRIES {
                return Err(Refused(format!(
                    "{path}: more than {MAX_LIST_ENTRIES} entries; not listed"
                )));
            }
        }
        names.sort();
        Ok(names)
    }
}

/// Refuses a path that lexically leaves the root (absolute, `..` above the
/// root, NUL). Pure: no file system access, so resolution can run it too;
/// symlinks that leave the root are refused only when the call walks them.
pub fn check_path(path: &str) -> Result<()> {
    relative(path).map(|_| ())
}

/// `path` as a path relative to the root, refusing what lexically leaves it.
fn relative(path: &str) -> Result<&Path> {
    let p = Path::new(path);
    if path.contains('\0') {
        return Err(Refused(format!("{path:?}: contains a NUL byte")));
    }
    let mut depth: usize = 0;
    for component in p.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => {
                return Err(Refused(format!(
                    "{path}: absolute paths are refused; paths are relative to the sandbox directory"
                )));
            }
            Component::ParentDir => {
                depth = depth.checked_sub(1).ok_or_else(|| {
                    Refused(format!(
                        "{path}: refused: leads outside the sandbox directory"
                    ))
                })?;
            }
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
        }
    }
    Ok(p)
}

/// An I/O error as the client sees it. cap-std reports a walk that leaves the
/// root (through a symlink, say) as `PermissionDenied`.
fn failed(path: &str, error: &io::Error) -> Refused {
    match error.kind() {
        io::ErrorKind::PermissionDenied => Refused(format!("{path}: refused: {error}")),
        io::ErrorKind::NotFound => Refused(format!("{path}: no such file or directory")),
        io::ErrorKind::AlreadyExists => Refused(format!(
            "{path}: already exists (pass `overwrite: true` to replace it)"
        )),
        _ => Refused(format!("{path}: {error}")),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    struct Scratch(std::path::PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir = std::env::temp_dir()
                .join(format!("file-server-sandbox-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(dir.join("root/sub")).unwrap();
            std::fs::write(dir.join("outside.txt"), "secret").unwrap();
            Scratch(dir)
        }
        fn root(&self) -> std::path::PathBuf {
            self.0.join("root")
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn operations_change_files_under_the_root() {
        let s = Scratch::new("ops");
        let sandbox = Sandbox::open(&s.root()).unwrap();
        sandbox.replace("sub/a.txt", "one").unwrap();
        sandbox.append("sub/a.txt", " two").unwrap();
        assert_eq!(
            std::fs::read_to_string(s.root().join("sub/a.txt")).unwrap(),
            "one two"
        );
        assert_eq!(sandbox.read("sub/../sub/a.txt").unwrap(), "one two");
        assert_eq!(sandbox.copy("sub/a.txt", "b.txt", false).unwrap(), 7);
        let err = sandbox.copy("sub/a.txt", "b.txt", false).unwrap_err();
        assert!(err.0.contains("already exists"), "{err}");
        sandbox.replace("sub/a.txt", "three").unwrap();
        sandbox.copy("sub/a.txt", "b.txt", true).unwrap();
        assert_eq!(sandbox.read("b.txt").unwrap(), "three");
        assert_eq!(sandbox.list(".").unwrap(), ["b.txt", "sub/"]);
        sandbox.delete("b.txt").unwrap();
        assert!(!s.root().join("b.txt").exists());
        assert!(
            sandbox
                .read("b.txt")
                .unwrap_err()
                .0
                .contains("no such file")
        );
    }

    #[test]
    fn escapes_are_refused_and_nothing_outside_changes() {
        let s = Scratch::new("escape");
        let sandbox = Sandbox::open(&s.root()).unwrap();
        let outside = s.0.join("outside.txt");
        for path in [
            "../outside.txt",
            "sub/../../outside.txt",
            outside.to_str().unwrap(),
        ] {
            let err = sandbox.read(path).unwrap_err();
            assert!(err.0.contains("refused"), "{path}: {err}");
            assert!(sandbox.replace(path, "x").is_err(), "{path}");
            assert!(sandbox.delete(path).is_err(), "{path}");
        }
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "secret");
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_that_leave_the_root_are_refused() {
        let s = Scratch::new("symlink");
        std::os::unix::fs::symlink(s.0.join("outside.txt"), s.root().join("link.txt")).unwrap();
        std::os::unix::fs::symlink(&s.0, s.root().join("up")).unwrap();
        std::os::unix::fs::symlink("sub", s.root().join("inner")).unwrap();
        let sandbox = Sandbox::open(&s.root()).unwrap();
        for path in ["link.txt", "up/outside.txt"] {
            let err = sandbox.read(path).unwrap_err();
            assert!(err.0.contains("refused"), "{path}: {err}");
            assert!(sandbox.append(path, "x").is_err(), "{path}");
            assert!(sandbox.replace(path, "x").is_err(), "{path}");
            assert!(sandbox.copy("sub", path, true).is_err(), "{path}");
        }
        assert!(sandbox.list("up").is_err());
        assert_eq!(
            std::fs::read_to_string(s.0.join("outside.txt")).unwrap(),
            "secret"
        );
        // A symlink that stays inside the root is an ordinary path.
        sandbox.replace("inner/c.txt", "in").unwrap();
        assert_eq!(sandbox.read("sub/c.txt").unwrap(), "in");
    }
}
