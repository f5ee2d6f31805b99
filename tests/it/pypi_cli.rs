//! The command from PyPI: the wheel `scripts/pypi-wheel.sh` builds with
//! maturin's `bin` bindings (the test command builds its light build's
//! binary into `target/wheels` and names it in `MCP_RESOLVE_PYPI_WHEEL`)
//! holds the binary as a script of the distribution `mcp-resolve` at the
//! workspace's version, for linux x86-64; installed offline into a fresh
//! virtual environment, the command it puts on the environment's path
//! answers the compiler's commands as this build does, and uninstalling
//! removes it.

use crate::common;

use std::path::Path;
use std::process::Command;

fn wheel() -> Option<std::path::PathBuf> {
    common::component("MCP_RESOLVE_PYPI_WHEEL", "pypi_cli")
}

#[test]
fn the_wheel_holds_the_command_for_this_platform() {
    let Some(wheel) = wheel() else {
        return;
    };
    let name = wheel.file_name().unwrap().to_str().unwrap();
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        name.starts_with(&format!("mcp_resolve-{version}-py3-none-manylinux_"))
            && name.ends_with("_x86_64.whl"),
        "{name}"
    );
    let listing = Command::new("python3")
        .args(["-m", "zipfile", "-l"])
        .arg(&wheel)
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&listing.stdout);
    assert!(
        listing.contains(&format!("mcp_resolve-{version}.data/scripts/mcp-resolve ")),
        "{listing}"
    );
    let metadata = Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); \
             print(z.read(sys.argv[2]).decode())",
        ])
        .arg(&wheel)
        .arg(format!("mcp_resolve-{version}.dist-info/METADATA"))
        .output()
        .unwrap();
    let metadata = String::from_utf8_lossy(&metadata.stdout);
    assert!(metadata.contains("\nName: mcp-resolve\n"), "{metadata}");
    assert!(
        metadata.contains(&format!("\nVersion: {version}\n")),
        "{metadata}"
    );
}

#[test]
fn pip_installs_a_command_that_answers_as_this_build() {
    let Some(wheel) = wheel() else {
        return;
    };
    let dir = common::scratch("pypi", "venv");
    let venv = dir.join("env");
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let pip = |args: &[&str]| {
        let out = Command::new(venv.join("bin/python"))
            .args(["-m", "pip", "--disable-pip-version-check"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "pip {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    // Offline: nothing but the wheel.
    pip(&["install", "-q", "--no-index", wheel.to_str().unwrap()]);
    let installed = venv.join("bin/mcp-resolve");
    let run = |command: &Path, args: &[&str]| Command::new(command).args(args).output().unwrap();
    let this = Path::new(env!("CARGO_BIN_EXE_mcp-resolve"));
    for args in [
        &["--version"][..],
        &["check", "rules/"],
        &["check", "tests/fixtures/invalid/alias-bomb.yaml"],
        &["generate", "--lang", "python", "rules/file-server.yaml"],
        &["signature", "rules/file-server.yaml", "--fingerprint-only"],
        &["no-such-command"],
    ] {
        let (got, want) = (run(&installed, args), run(this, args));
        assert_eq!(got.status.code(), want.status.code(), "{args:?}");
        assert_eq!(got.stdout, want.stdout, "{args:?}");
        assert_eq!(got.stderr, want.stderr, "{args:?}");
    }
    assert_eq!(
        String::from_utf8_lossy(&run(&installed, &["--version"]).stdout).trim(),
        format!("mcp-resolve {}", env!("CARGO_PKG_VERSION"))
    );
    pip(&["uninstall", "-q", "-y", "mcp-resolve"]);
    assert!(!installed.exists(), "uninstalling left the command behind");
}
