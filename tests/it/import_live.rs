//! `mcp-resolve import` from a live server, against a scripted server
//! (`tests/fixtures/import/fake_server.py`) that misbehaves on request:
//! pages, log lines on stdout, a `ping` to the client, a crash, silence, a
//! server that ignores the end of its stdin and has a child of its own. The
//! import answers every case with the tools or a clear error, and no process
//! it started outlives it.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const FAKE: &str = "tests/fixtures/import/fake_server.py";

fn scratch(name: &str) -> PathBuf {
    common::scratch("import-live", name)
}

fn import(out: &Path, args: &[&str]) -> (Option<i32>, String) {
    let output = common::bin()
        .arg("import")
        .arg("-o")
        .arg(out)
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Whether `pid` names a live process (a zombie counts as gone).
/// Whether process `pid` is gone within ten seconds: a group the import
/// signalled as it exited dies when the kernel next runs it, which on a
/// loaded machine is not at once (nothing waits for a grandchild).
fn gone(pid: &str) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while alive(pid) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    !alive(pid)
}

fn alive(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit(") ").next().unwrap_or("").chars().next();
            state != Some('Z')
        }
        Err(_) => false,
    }
}

#[test]
fn a_live_server_is_paged_through_and_its_noise_tolerated() {
    let dir = scratch("pages");
    let out = dir.join("fake.yaml");
    let saved = dir.join("fake.json");
    let (code, stderr) = import(
        &out,
        &[
            "--save-list",
            saved.to_str().unwrap(),
            "--",
            "python3",
            FAKE,
            "--pages",
            "3",
            "--garbage",
            "--ping",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("imported 5 tools (5 with variants) from fake-server 1.2.3"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "warning: the server wrote something that is not JSON-RPC: this line is a log message"
        ),
        "{stderr}"
    );
    let project = mcp_resolve::load(std::slice::from_ref(&out)).unwrap();
    assert!(!project.has_errors());
    let server = project.single_server().unwrap();
    assert_eq!(server.name, "fake-server");
    assert_eq!(server.version, "1.2.3");
    let names: Vec<&str> = server.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["tool_0", "tool_1", "tool_2", "tool_3", "tool_4"]);
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    assert_eq!(saved["tools"].as_array().unwrap().len(), 5);

    // Nothing is overwritten without --force, the snapshot included.
    let (code, stderr) = import(
        &dir.join("other.yaml"),
        &[
            "--save-list",
            dir.join("fake.json").to_str().unwrap(),
            "--",
            "python3",
            FAKE,
        ],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("exists; give `--force`"), "{stderr}");
    assert!(!dir.join("other.yaml").exists());
}

#[test]
fn a_crash_is_reported_with_the_servers_last_words() {
    let dir = scratch("crash");
    let out = dir.join("x.yaml");
    let (code, stderr) = import(&out, &["--", "python3", FAKE, "--crash"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("the server exited before answering `tools/list` (exit status: 3)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("| boom: the fake server crashed"),
        "{stderr}"
    );
    assert!(!out.exists());
}

#[test]
fn a_command_that_does_not_exist_is_a_clear_error() {
    let dir = scratch("missing");
    let (code, stderr) = import(
        &dir.join("x.yaml"),
        &["--", "/nonexistent/mcp-server", "--flag"],
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot start `/nonexistent/mcp-server --flag`"),
        "{stderr}"
    );
}

#[test]
fn a_silent_server_times_out_and_is_stopped_with_its_children() {
    let dir = scratch("hang");
    let pids = dir.join("pids");
    // Long enough for Python to start and answer `initialize` on a loaded
    // machine: the timeout is every request's, and only `tools/list` is
    // left unanswered.
    let (code, stderr) = import(
        &dir.join("x.yaml"),
        &[
            "--timeout",
            "10",
            "--",
            "python3",
            FAKE,
            "--hang",
            "--ignore-eof",
            "--child-pid-file",
            pids.to_str().unwrap(),
        ],
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("no answer to `tools/list` within 10s (raise it with --timeout)"),
        "{stderr}"
    );
    let pids = std::fs::read_to_string(&pids).unwrap();
    for pid in pids.split_whitespace() {
        assert!(gone(pid), "process {pid} outlived the import");
    }
}

#[test]
fn a_server_that_ignores_the_end_of_its_stdin_is_stopped_with_its_children() {
    let dir = scratch("linger");
    let pids = dir.join("pids");
    let out = dir.join("x.yaml");
    let (code, stderr) = import(
        &out,
        &[
            "--",
            "python3",
            FAKE,
            "--ignore-eof",
            "--child-pid-file",
            pids.to_str().unwrap(),
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(out.exists());
    let pids = std::fs::read_to_string(&pids).unwrap();
    for pid in pids.split_whitespace() {
        assert!(gone(pid), "process {pid} outlived the import");
    }
}

/// The scripted server over streamable HTTP; killed when dropped.
struct HttpServer {
    child: std::process::Child,
    url: String,
}

impl HttpServer {
    fn start(extra: &[&str]) -> Self {
        let mut child = Command::new("python3")
            .arg(FAKE)
            .arg("--http")
            .args(extra)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the scripted server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        HttpServer {
            child,
            url: line.trim().to_owned(),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_streamable_http_server_is_imported_through_its_event_streams() {
    let server = HttpServer::start(&["--pages", "2"]);
    let dir = scratch("http");
    let out = dir.join("fake.rules");
    let (code, stderr) = import(&out, &["--url", &server.url]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("imported 5 tools (5 with variants) from fake-server 1.2.3"),
        "{stderr}"
    );
    let project = mcp_resolve::load(std::slice::from_ref(&out)).unwrap();
    assert!(!project.has_errors());
    assert_eq!(project.single_server().unwrap().tools.len(), 5);
}

#[test]
fn http_errors_are_clear() {
    let server = HttpServer::start(&["--http-fail"]);
    let dir = scratch("http-errors");
    let (code, stderr) = import(&dir.join("a.yaml"), &["--url", &server.url]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("answered 500 Internal Server Error: internal trouble"),
        "{stderr}"
    );
    assert!(!dir.join("a.yaml").exists());

    drop(server);
    // Nothing listening: an I/O error (exit 2) that says what happened and
    // what to check.
    let (code, stderr) = import(&dir.join("b.yaml"), &["--url", "http://127.0.0.1:9/mcp"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "POST http://127.0.0.1:9/mcp: connection refused; is the server running and listening at that address?"
        ),
        "{stderr}"
    );
    assert!(!dir.join("b.yaml").exists());

    let (code, stderr) = import(&dir.join("c.yaml"), &["--url", "ftp://example.invalid/mcp"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("is not an http or https URL"), "{stderr}");
}

#[test]
fn exactly_one_source_is_asked_for() {
    let dir = scratch("sources");
    let out = dir.join("x.yaml");
    let (code, stderr) = import(&out, &[]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("say where the tools come from"), "{stderr}");
    let (code, stderr) = import(
        &out,
        &[
            "tests/fixtures/import/tools-list.json",
            "--",
            "python3",
            FAKE,
        ],
    );
    assert_eq!(code, Some(2));
    assert!(stderr.contains("give only one of"), "{stderr}");
}

#[test]
fn an_interrupted_import_stops_the_server_and_its_children() {
    let dir = scratch("interrupt");
    let pids = dir.join("pids");
    let import = common::bin()
        .arg("import")
        .arg("-o")
        .arg(dir.join("x.yaml"))
        .args([
            "--timeout",
            "60",
            "--",
            "python3",
            FAKE,
            "--hang",
            "--ignore-eof",
        ])
        .arg("--child-pid-file")
        .arg(&pids)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::fs::read_to_string(&pids).map_or(true, |p| p.split_whitespace().count() < 2) {
        assert!(
            std::time::Instant::now() < deadline,
            "the server never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let status = Command::new("kill")
        .args(["-INT", &import.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = import.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("interrupted; the server was stopped"),
        "{stderr}"
    );
    // SIGKILL went to the group as the import exited.
    for pid in std::fs::read_to_string(&pids).unwrap().split_whitespace() {
        assert!(gone(pid), "process {pid} outlived the interrupted import");
    }
    assert!(!dir.join("x.yaml").exists());
}
