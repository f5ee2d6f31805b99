//! What the tests that drive the built server with real clients share: the
//! interpreter or runtime they need, a sandbox, and a server on a loopback
//! port that is killed when the test ends.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The Python interpreter with `mcp`, `rfc8785` and `jsonschema`
/// (`MCP_RESOLVE_MCP_PYTHON`, else a `python3` that has them). Without one,
/// `None` locally; under CI (`CI` set) the test fails instead of skipping.
pub fn python(test: &str) -> Option<String> {
    if let Some(p) = std::env::var_os("MCP_RESOLVE_MCP_PYTHON") {
        return Some(p.to_string_lossy().into_owned());
    }
    let ok = Command::new("python3")
        .args(["-c", "import mcp.client, rfc8785, jsonschema"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some("python3".to_string());
    }
    skip(
        test,
        "the Python `mcp` package (MCP_RESOLVE_MCP_PYTHON; scripts/test.sh installs it)",
    );
    None
}

/// The TypeScript SDK's installation (`MCP_RESOLVE_TS_CLIENT`, a directory
/// whose `node_modules` has `@modelcontextprotocol/client`;
/// `scripts/install-ts-client.sh` makes one). Without it, `None` locally;
/// under CI the test fails instead of skipping.
pub fn ts_client(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("MCP_RESOLVE_TS_CLIENT").map(PathBuf::from);
    if let Some(dir) = dir.filter(|d| d.join("node_modules/@modelcontextprotocol/client").is_dir())
    {
        return Some(dir);
    }
    skip(
        test,
        "the TypeScript SDK (MCP_RESOLVE_TS_CLIENT; scripts/install-ts-client.sh installs it)",
    );
    None
}

/// A test without the component it drives: a failure under CI (`CI` set);
/// elsewhere a note on the terminal, past libtest's output capture, so a
/// plain `cargo test` says what it skipped.
fn skip(test: &str, needs: &str) {
    use std::io::Write as _;
    assert!(
        std::env::var_os("CI").is_none(),
        "{test}: CI must provide {needs}"
    );
    let _ =
        std::io::stderr().write_all(format!("\nnote: skipped {test}: needs {needs}\n").as_bytes());
}

/// A fresh sandbox directory with `notes.txt`.
pub fn sandbox(name: &str) -> PathBuf {
    let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("file-server-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).expect("create the sandbox");
    std::fs::write(root.join("notes.txt"), "first line").expect("write notes.txt");
    root
}

/// The file server serving streamable HTTP on a free loopback port; killed
/// on drop.
pub struct HttpServer {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl HttpServer {
    pub fn start(root: &Path, extra: &[&str]) -> HttpServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_file-server"))
            .args(["--root", root.to_str().expect("UTF-8 path")])
            .args(["--http", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start file-server --http");
        let mut line = String::new();
        let stderr = child.stderr.take().expect("stderr");
        BufReader::new(stderr)
            .read_line(&mut line)
            .expect("read the server's first line");
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in the server's first line: {line:?}"))
            .to_string();
        HttpServer { child, url }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
