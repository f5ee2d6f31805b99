//! Every command of README.md's `sh` and `console` blocks, run as a
//! newcomer pastes it: read from the README (not copied here), run with
//! `sh` in a fresh copy of the repository's files (so what a command writes
//! lands there), with the `mcp-resolve` this build made first on `PATH` and
//! a home directory of its own. A command whose comment says `(needs …)` —
//! the network, a server, a build — is not run, and the README says so
//! beside it; every other one must exit 0.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common;

/// One command as the README writes it.
#[derive(Debug)]
struct Example {
    /// The README line it starts on.
    line: usize,
    /// The command, continuation lines joined.
    text: String,
    /// Its comments (the lines under it that are only a comment too).
    comment: String,
}

/// Where a `#` comment starts in `line`: outside quotes, at the start or
/// after blank space.
fn comment_start(line: &str) -> Option<usize> {
    let (mut single, mut double) = (false, false);
    let mut previous = ' ';
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && previous.is_whitespace() => return Some(i),
            _ => {}
        }
        previous = c;
    }
    None
}

/// The commands of the README's `sh` blocks (every line) and `console`
/// blocks (the lines after `$ `).
fn examples(readme: &str) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut block: Option<&str> = None;
    let mut continued = false;
    for (i, line) in readme.lines().enumerate() {
        if let Some(fence) = line.strip_prefix("```") {
            block = match block {
                None => Some(fence.trim()),
                Some(_) => None,
            };
            continued = false;
            continue;
        }
        let line = match block {
            Some("sh") => line,
            Some("console") => match line.strip_prefix("$ ") {
                Some(command) => command,
                None => continue,
            },
            _ => continue,
        };
        let (code, comment) = match comment_start(line) {
            Some(at) => (&line[..at], &line[at..]),
            None => (line, ""),
        };
        let code = code.trim_end();
        if code.trim().is_empty() {
            // A comment under the command it explains.
            if let Some(last) = out.last_mut() {
                last.comment.push_str(comment);
            }
            continue;
        }
        let (code, continues) = match code.strip_suffix('\\') {
            Some(code) => (code, true),
            None => (code, false),
        };
        match out.last_mut() {
            Some(last) if continued => {
                last.text.push(' ');
                last.text.push_str(code.trim());
                last.comment.push_str(comment);
            }
            _ => out.push(Example {
                line: i + 1,
                text: code.trim().to_string(),
                comment: comment.to_string(),
            }),
        }
        continued = continues;
    }
    out
}

/// A copy of the repository's tracked files, with `target` linked to this
/// build's (the example server the README's proxy line starts is there).
fn copy_of_the_repository(dir: &Path) -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let copy = dir.join("repo");
    let listed = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(repo)
        .output()
        .expect("git, to list the repository's files");
    assert!(listed.status.success(), "git ls-files: {listed:?}");
    for name in listed.stdout.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let name = std::str::from_utf8(name).unwrap();
        let from = repo.join(name);
        // A file deleted in the working tree but not yet in git's index.
        if !from.is_file() {
            continue;
        }
        let to = copy.join(name);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&from, &to).unwrap();
    }
    let target = Path::new(env!("CARGO_BIN_EXE_mcp-resolve"))
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    std::os::unix::fs::symlink(target, copy.join("target")).unwrap();
    copy
}

#[test]
fn the_readme_reads_its_commands_as_a_shell_would() {
    let readme = "\
```sh
mcp-resolve a    # one # comment
mcp-resolve b \\
    --x '{\"y\":\"#z\"}'   # it goes on
                    # and on (needs a server)
```
```console
$ mcp-resolve c   # (needs the network)
output, not a command
```
```toml
not = \"run\"
```
";
    let found = examples(readme);
    let got: Vec<(usize, &str, &str)> = found
        .iter()
        .map(|e| (e.line, e.text.as_str(), e.comment.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (2, "mcp-resolve a", "# one # comment"),
            (
                3,
                "mcp-resolve b --x '{\"y\":\"#z\"}'",
                "# it goes on# and on (needs a server)"
            ),
            (8, "mcp-resolve c", "# (needs the network)"),
        ]
    );
}

#[test]
fn every_readme_command_runs_as_written() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let examples = examples(&readme);
    let run: Vec<&Example> = examples
        .iter()
        .filter(|e| !e.comment.contains("(needs"))
        .collect();
    assert!(
        run.iter()
            .filter(|e| e.text.starts_with("mcp-resolve "))
            .count()
            >= 20,
        "{examples:#?}"
    );
    let dir = common::scratch("readme", "commands");
    let repo = copy_of_the_repository(&dir);
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_mcp-resolve"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut failed = Vec::new();
    for example in run {
        // Bounded: a command that waits for input it never gets is a
        // failure with its line, not a suite that never ends.
        let output = Command::new("timeout")
            .args(["120", "sh", "-c", &example.text])
            .current_dir(&repo)
            .env("PATH", &path)
            .env("HOME", &home)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        if !output.status.success() {
            failed.push(format!(
                "README.md:{}: `{}` exited {:?} (124: still running after 120 s)\n{}",
                example.line,
                example.text,
                output.status.code(),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    // What the examples wrote is where they say.
    for written in [
        "server.json",
        "server.yaml",
        "file-server.rules",
        "resolve.rs",
        "api.html",
    ] {
        assert!(repo.join(written).is_file(), "{written}");
    }
    assert!(
        home.join(".local/share/bash-completion/completions/mcp-resolve")
            .is_file()
    );
}
