//! The `file-server` command line: bad flags and a bad sandbox are clear
//! errors, not panics.

use std::process::{Command, Stdio};

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_file-server"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn a_missing_sandbox_directory_is_refused() {
    let o = run(&["--root", "/nonexistent/sandbox/dir"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("cannot open sandbox directory /nonexistent/sandbox/dir"),
        "{err}"
    );
}

#[test]
fn an_unknown_dialect_is_a_usage_error() {
    let o = run(&["--root", ".", "--dialect", "sep9999"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("unknown dialect `sep9999`"), "{err}");
}

#[test]
fn root_is_required() {
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--root"));
}

#[test]
fn stdio_session_ends_cleanly_when_the_client_goes_away() {
    // stdin is /dev/null: the transport sees end of input before any
    // `initialize` and the server exits instead of hanging.
    let o = run(&["--root", "."]);
    assert!(o.status.code().is_some(), "killed by a signal: {o:?}");
    assert!(o.stdout.is_empty());
}
