//! Helpers shared by the integration tests.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

mod components;
pub use components::*;

/// Whether expected files should be rewritten (`MCP_RESOLVE_BLESS=1`).
pub fn bless() -> bool {
    std::env::var_os("MCP_RESOLVE_BLESS").is_some_and(|v| v != "0")
}

/// Compares `actual` with the file at `path`; rewrites it when blessing.
pub fn expect_file(path: &Path, actual: &str) {
    if bless() {
        std::fs::write(path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(path)
        .unwrap_or_else(|_| panic!("missing {}; run with MCP_RESOLVE_BLESS=1", path.display()));
    if expected != actual {
        panic!(
            "{} is stale (run with MCP_RESOLVE_BLESS=1 to update)\n--- expected\n{expected}\n--- actual\n{actual}",
            path.display()
        );
    }
}

/// An empty directory `group/name` under cargo's scratch space for
/// integration tests (removed and made again on every call).
pub fn scratch(group: &str, name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(group)
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A copy of the script `source` where Node resolves its imports from the
/// packages installed at `installed` (a component the test command shares
/// between runs and clones: nothing is written into it): a scratch
/// directory of this copy's own, whose `node_modules` links to the
/// installation's. Node resolves a script's imports from the directories
/// above it, and a package's own from where it really is.
pub fn beside_packages(installed: &Path, source: impl AsRef<Path>) -> PathBuf {
    static COPIES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let source = source.as_ref();
    let n = COPIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let stem = source.file_stem().unwrap().to_string_lossy();
    let dir = scratch(
        "node-scripts",
        &format!("{stem}-{}-{n}", std::process::id()),
    );
    std::os::unix::fs::symlink(installed.join("node_modules"), dir.join("node_modules")).unwrap();
    let script = dir.join(source.file_name().unwrap());
    std::fs::copy(source, &script).unwrap();
    script
}

/// Files with extension `ext` in `dir`, sorted.
pub fn files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    out.sort();
    out
}

/// The bundled example servers' rules files (`rules/*.yaml`, `*.rules`),
/// sorted.
pub fn bundled_rules() -> Vec<PathBuf> {
    let mut out = files("rules", "yaml");
    out.extend(files("rules", "rules"));
    out.sort();
    out
}

/// The compiled `mcp-resolve` binary.
pub fn bin() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_mcp-resolve"))
}

/// The Python with the MCP SDK (and the JOSE library) that
/// `scripts/test.sh` installs.
pub fn mcp_python(what: &str) -> Option<String> {
    component("MCP_RESOLVE_MCP_PYTHON", what).map(|p| p.to_string_lossy().into_owned())
}

/// Waits up to `limit` for `child` to exit; its status code (-1 when a
/// signal ended it). Kills it and fails the test when it does not exit.
pub fn wait_for(child: &mut std::process::Child, limit: std::time::Duration) -> i32 {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code().unwrap_or(-1);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("the process did not exit within {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Where `scripts/test.sh` installed the real servers from npm and PyPI.
pub fn real_servers(what: &str) -> Option<PathBuf> {
    component("MCP_RESOLVE_REAL_SERVERS", what)
}

/// The processes other than `mcp-resolve` itself with `marker` in their
/// command line (Linux).
pub fn pids_with(marker: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).into_owned();
            (cmdline.contains(marker) && !cmdline.starts_with(env!("CARGO_BIN_EXE_mcp-resolve")))
                .then_some(pid)
        })
        .collect()
}

/// How many processes other than `mcp-resolve` itself have `marker` in
/// their command line (Linux).
pub fn processes_with(marker: &str) -> usize {
    pids_with(marker).len()
}

/// How many processes [`processes_with`] `marker` are still there after
/// waiting up to ten seconds for them to go: a server the proxy stopped
/// (`SIGKILL` included) leaves the process table a moment later, on a
/// loaded machine a long moment; one it left behind stays.
pub fn outlived(marker: &str) -> usize {
    let start = std::time::Instant::now();
    loop {
        let left = processes_with(marker);
        if left == 0 || start.elapsed() > std::time::Duration::from_secs(10) {
            return left;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Kills (`SIGKILL`) the processes [`pids_with`] finds; how many.
pub fn kill_processes_with(marker: &str) -> usize {
    pids_with(marker)
        .into_iter()
        .filter_map(rustix::process::Pid::from_raw)
        .filter(|&pid| rustix::process::kill_process(pid, rustix::process::Signal::KILL).is_ok())
        .count()
}

/// The lines `reader` gives, read on a thread of their own.
pub fn lines_of(reader: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(reader).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

/// The port a test server started as `child` (stdout piped) prints as its
/// first line; the child is killed, and the test fails, when it prints none.
pub fn port_line(child: &mut Child) -> u16 {
    let mut line = String::new();
    if let Some(stdout) = child.stdout.take() {
        let _ = BufReader::new(stdout).read_line(&mut line);
    }
    line.trim().parse().unwrap_or_else(|_| {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the server printed no port: {line:?}")
    })
}

/// A proxy serving hosts over HTTP (`--listen 127.0.0.1:0`); the address it
/// bound is read from its first line on stderr.
pub struct Listening {
    /// The proxy process.
    pub child: Child,
    /// `http://ADDR/mcp`.
    pub url: String,
    /// `ADDR`.
    pub addr: String,
    /// Its stderr, line by line.
    pub stderr: mpsc::Receiver<String>,
}

impl Drop for Listening {
    /// A proxy a failing test did not stop is stopped here, as `stop` does
    /// (`SIGTERM`, so it stops its servers), then killed: it never outlives
    /// the test.
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_some() {
            return;
        }
        if let Some(pid) = rustix::process::Pid::from_raw(self.child.id() as i32) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        }
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_secs(20) {
            if self.child.try_wait().ok().flatten().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Listening {
    /// `mcp-resolve proxy ARGS --no-probe --listen 127.0.0.1:0 [-- SERVER]`.
    pub fn start(args: &[&str], server: &[&str]) -> Listening {
        let mut command = bin();
        command
            .arg("proxy")
            .args(args)
            .args(["--no-probe", "--listen", "127.0.0.1:0"]);
        if !server.is_empty() {
            command.arg("--").args(server);
        }
        Listening::spawn(command)
    }

    /// A listening proxy started by `command` (which listens on
    /// `127.0.0.1:0`), once it says where.
    pub fn spawn(mut command: std::process::Command) -> Listening {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = lines_of(child.stderr.take().unwrap());
        let first = stderr
            .recv_timeout(Duration::from_secs(30))
            .expect("the proxy says where it listens");
        let url = first
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {first:?}"))
            .to_string();
        let addr = url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_string();
        Listening {
            child,
            url,
            addr,
            stderr,
        }
    }

    /// Stops the proxy as a service manager would (`SIGTERM`); its status
    /// and stderr.
    pub fn stop(mut self) -> (i32, Vec<String>) {
        let pid = rustix::process::Pid::from_raw(self.child.id() as i32).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
        let status = wait_for(&mut self.child, Duration::from_secs(30));
        let mut stderr = Vec::new();
        while let Ok(line) = self.stderr.recv_timeout(Duration::from_secs(10)) {
            stderr.push(line);
        }
        (status, stderr)
    }
}

/// Serves `body` as JSON to each of `requests` connections on a loopback
/// port of its own; the `http://` URL of `path` there.
pub fn serve_json(body: String, requests: usize, path: &str) -> String {
    let addr = serve_routes(move |_| Some(body.clone()), requests);
    format!("http://{addr}{path}")
}

/// Serves what `route` gives for each request's path (as JSON; `404`
/// for `None`) to `requests` connections on a loopback port of its own;
/// the address.
pub fn serve_routes(
    route: impl Fn(&str) -> Option<String> + Send + 'static,
    requests: usize,
) -> std::net::SocketAddr {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(requests) {
            let Ok(mut stream) = stream else { return };
            // The whole request, body included: a socket closed with bytes
            // unread is reset, and the client could lose the answer.
            let mut request = Vec::new();
            let mut chunk = [0u8; 4096];
            let path = loop {
                let Ok(n) = stream.read(&mut chunk) else {
                    break None;
                };
                if n == 0 {
                    break None;
                }
                request.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&request);
                let Some((head, body)) = text.split_once("\r\n\r\n") else {
                    continue;
                };
                let length = head
                    .lines()
                    .filter_map(|l| l.split_once(':'))
                    .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
                    .and_then(|(_, v)| v.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                if body.len() >= length {
                    break head.split_whitespace().nth(1).map(str::to_owned);
                }
            };
            let Some(path) = path else { continue };
            let answer = match route(&path) {
                Some(body) => format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                ),
                None => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    .to_owned(),
            };
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    addr
}
