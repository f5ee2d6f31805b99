//! The command from npm: `scripts/npm-package.sh` packs this build's binary
//! as the linux-x64 platform package and the `mcp-resolve` launcher; both
//! tarballs are installed with npm into an empty project (offline: nothing
//! but the two files), and the installed command answers as the binary does
//! — output, exit status, a signal sent to the launcher alone reaching the
//! binary (no process left behind) — and says what is wrong when the
//! platform package is missing.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn npm_available() -> bool {
    let found = Command::new("npm")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have npm (scripts/test.sh installs Node and npm)"
        );
        common::note_skipped("skipped npm_cli: npm is not installed");
    }
    found
}

/// The two tarballs of this build, packed once for every test here.
fn tarballs() -> &'static (PathBuf, PathBuf) {
    static PACKED: std::sync::OnceLock<(PathBuf, PathBuf)> = std::sync::OnceLock::new();
    PACKED.get_or_init(|| {
        let out = common::scratch("npm", "packed");
        let run = Command::new("scripts/npm-package.sh")
            .arg(env!("CARGO_BIN_EXE_mcp-resolve"))
            .arg("linux-x64")
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let printed = String::from_utf8(run.stdout).unwrap();
        let lines: Vec<&str> = printed.lines().collect();
        assert_eq!(lines.len(), 2, "{printed}");
        let (platform, launcher) = (PathBuf::from(lines[0]), PathBuf::from(lines[1]));
        assert!(
            platform.ends_with("mcp-resolve-cli-linux-x64-0.1.0.tgz"),
            "{printed}"
        );
        assert!(launcher.ends_with("mcp-resolve-0.1.0.tgz"), "{printed}");
        (platform, launcher)
    })
}

/// An empty npm project with `tarballs` installed (offline).
fn project(name: &str, tarballs: &[&Path], extra: &[&str]) -> PathBuf {
    let dir = common::scratch("npm", name);
    std::fs::write(dir.join("package.json"), r#"{"name":"app","private":true}"#).unwrap();
    let install = Command::new("npm")
        .args([
            "install",
            "--offline",
            "--no-audit",
            "--no-fund",
            "--silent",
        ])
        .args(extra)
        .args(tarballs)
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        install.status.success(),
        "npm install: {}",
        String::from_utf8_lossy(&install.stderr)
    );
    dir
}

fn launcher(dir: &Path) -> Command {
    let mut command = Command::new(dir.join("node_modules/.bin/mcp-resolve"));
    command.env_remove("MCP_RESOLVE_BINARY");
    command
}

#[test]
fn the_installed_command_answers_as_the_binary_does() {
    if !npm_available() {
        return;
    }
    let (platform, launcher_tgz) = tarballs();
    let dir = project("installed", &[platform, launcher_tgz], &[]);
    let rules = std::fs::canonicalize("rules").unwrap();
    for args in [
        vec!["check".to_string(), rules.display().to_string()],
        vec!["--version".into()],
        vec![
            "check".into(),
            rules.join("no-such-file.yaml").display().to_string(),
        ],
        vec!["no-such-command".into()],
    ] {
        let via_npm = launcher(&dir).args(&args).output().unwrap();
        let direct = common::bin().args(&args).output().unwrap();
        assert_eq!(via_npm.status.code(), direct.status.code(), "{args:?}");
        assert_eq!(via_npm.stdout, direct.stdout, "{args:?}");
        assert_eq!(via_npm.stderr, direct.stderr, "{args:?}");
    }
    // Standard input passes through too.
    let resolve = |mut command: Command| {
        use std::io::Write as _;
        let mut child = command
            .args([
                "resolve",
                "rules/file-server.yaml",
                "--tool",
                "manage_files",
                "--args",
                "-",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(br#"{"path":"a.txt","action":"read"}"#)
            .unwrap();
        drop(stdin);
        child.wait_with_output().unwrap()
    };
    let (via_npm, direct) = (resolve(launcher(&dir)), resolve(common::bin()));
    assert!(direct.status.success());
    assert_eq!(via_npm.status.code(), direct.status.code());
    assert_eq!(via_npm.stdout, direct.stdout);
    assert!(String::from_utf8_lossy(&via_npm.stdout).contains("readOnlyHint"));
}

/// The processes whose parent is `pid`.
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("children")).ok())
        .flat_map(|s| {
            s.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.split_whitespace().nth(2).is_none_or(|s| s != "Z"))
}

#[test]
fn a_signal_to_the_launcher_reaches_the_binary() {
    if !npm_available() {
        return;
    }
    let (platform, launcher_tgz) = tarballs();
    let dir = project("signal", &[platform, launcher_tgz], &[]);
    let rules = std::fs::canonicalize("rules/file-server.yaml").unwrap();
    // The proxy in front of a server that never answers: it runs until told.
    let mut child = launcher(&dir)
        .arg("proxy")
        .arg(&rules)
        .args(["--", "sleep", "600"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let node = child.id();
    let deadline = Instant::now() + Duration::from_secs(60);
    let binary = loop {
        if let Some(&pid) = children(node).first() {
            break pid;
        }
        assert!(Instant::now() < deadline, "the launcher started no binary");
        std::thread::sleep(Duration::from_millis(50));
    };
    // Signalled alone, not as a process group.
    let kill = Command::new("kill")
        .args(["-TERM", &node.to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert!(!status.success(), "{status:?}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while alive(binary) {
        assert!(
            Instant::now() < deadline,
            "the binary (pid {binary}) outlived its launcher"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_missing_platform_package_is_a_clear_error() {
    if !npm_available() {
        return;
    }
    let (_, launcher_tgz) = tarballs();
    let dir = project("no-platform", &[launcher_tgz], &["--omit=optional"]);
    let out = launcher(&dir).arg("--version").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("@mcp-resolve/cli-linux-x64 is not installed")
            && stderr.contains("cargo install --locked mcp-resolve-cli"),
        "{stderr}"
    );
    // An unknown platform is refused by the packing script.
    let refused = Command::new("scripts/npm-package.sh")
        .arg(env!("CARGO_BIN_EXE_mcp-resolve"))
        .arg("plan9-mips")
        .arg(common::scratch("npm", "refused"))
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
}
