//! Shell completions, colour, the progress indicator and stage times.

use super::*;

/// `completions SHELL` prints a script each shell accepts; the bash one,
/// sourced into a real bash, completes subcommands and their options.
#[test]
fn completion_scripts_complete_commands_in_a_real_shell() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let o = run(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}");
        let text = String::from_utf8(o.stdout).unwrap();
        for word in ["check", "signature", "diff", "completions"] {
            assert!(text.contains(word), "{shell}: no `{word}`");
        }
    }
    let script = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mcp-resolve-completion-{}", std::process::id()));
    std::fs::write(&script, run(&["completions", "bash"]).stdout).unwrap();
    let complete = |line: &str| -> Vec<String> {
        let words: Vec<&str> = line.split(' ').collect();
        let program = format!(
            "source {script}; COMP_WORDS=({words}); COMP_CWORD={cword}; COMP_LINE='{line}'; COMP_POINT={point}; \
             _mcp__resolve mcp-resolve \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script = script.display(),
            words = words
                .iter()
                .map(|w| format!("'{w}'"))
                .collect::<Vec<_>>()
                .join(" "),
            cword = words.len() - 1,
            point = line.len(),
        );
        let o = std::process::Command::new("bash")
            .args(["--norc", "--noprofile", "-c", &program])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .map(String::from)
            .collect()
    };
    let commands = complete("mcp-resolve ");
    for c in ["check", "diff", "explain", "completions", "proxy"] {
        assert!(commands.iter().any(|w| w == c), "{c} not in {commands:?}");
    }
    assert_eq!(complete("mcp-resolve dif"), ["diff"]);
    let formats = complete("mcp-resolve diff a.json b.json --format ");
    assert_eq!(formats, ["human", "json", "markdown"]);
    let _ = std::fs::remove_file(&script);
}

/// Diagnostics are coloured on request (`--color always`, even into a pipe),
/// never with `--color never`, and with `auto` not into a pipe.
#[test]
fn color_follows_the_flag_and_the_stream() {
    let bad = "rules: [";
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mcp-resolve-color-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.yaml");
    std::fs::write(&file, bad).unwrap();
    let f = file.to_str().unwrap();
    let escape = |o: &Output| o.stdout.contains(&0x1b);
    assert!(escape(&run(&["check", f, "--color", "always"])));
    assert!(escape(&run(&["--color", "always", "check", f])));
    assert!(!escape(&run(&["check", f, "--color", "never"])));
    assert!(!escape(&run(&["check", f])));
    let o = run(&["check", f, "--color", "sometimes"]);
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A long run on a terminal shows which stage it is in on standard error
/// (run under a pseudo-terminal with util-linux's `script`), then clears it;
/// with standard error not a terminal, nothing is written there.
#[test]
fn progress_shows_on_a_terminal_only() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mcp-resolve-progress-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut rules = String::from("version: 1\nserver: { name: big, version: 1.0.0 }\ntools:\n");
    for i in 0..600 {
        rules.push_str(&format!(
            "  - name: tool_{i}\n    inputSchema: {{ type: object, properties: {{ action: {{ enum: [a, b, c] }}, path: {{ type: string, pattern: '^[a-z]+/[0-9]{{1,4}}$' }} }} }}\n    annotations: {{ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false }}\n    variants:\n      - {{ name: a, when: {{ action: a, path: {{ pattern: '^x' }} }}, annotations: {{ readOnlyHint: true }} }}\n      - {{ name: b, when: {{ action: b }}, annotations: {{ destructiveHint: false }} }}\n"
        ));
    }
    let file = dir.join("big.yaml");
    std::fs::write(&file, rules).unwrap();
    let bin = env!("CARGO_BIN_EXE_mcp-resolve");
    // The shell keeps the terminal open a moment after the run: `script`
    // can lose what a child wrote just before the terminal closed.
    let command = format!(
        "{bin} check {} --format json > {}; status=$?; sleep 1; exit $status",
        file.display(),
        dir.join("out.json").display()
    );
    // With no delay the indicator is drawn by the run's own thread, from
    // its first stage: a helper thread could be scheduled too late on a
    // busy machine (an empty capture, seen in CI-like runs).
    let o = std::process::Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .env("TERM", "xterm")
        // Shown from the start, so how fast this machine is does not matter.
        .env("MCP_RESOLVE_PROGRESS_DELAY_MS", "0")
        .output()
        .expect("util-linux `script` (a pseudo-terminal for this test)");
    assert!(
        o.status.success(),
        "{}: {}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let terminal = String::from_utf8_lossy(&o.stdout);
    assert!(
        [
            "parsing 1 file",
            "checking 600 tools",
            "analysing the patterns of 600 tools"
        ]
        .iter()
        .any(|stage| terminal.contains(stage)),
        "{terminal:?}"
    );
    // Cleared at the end: the last thing on the terminal erases the line.
    assert!(
        terminal.trim_end_matches(' ').ends_with("\r\u{1b}[2K") || terminal.ends_with("\u{1b}[2K"),
        "{:?}",
        &terminal[terminal.len().saturating_sub(80)..]
    );
    // The output itself is whole JSON.
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out.json")).unwrap()).unwrap();
    assert_eq!(report["summary"]["errors"], 0);

    // Through a pipe, no progress (the file has findings: no other line).
    let o = run(&["check", file.to_str().unwrap()]);
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `MCP_RESOLVE_STAGE_TIMES` prints every stage with its time on standard
/// error, on a pipe too; the output itself is unchanged.
#[test]
fn stage_times_go_to_standard_error_when_asked_for() {
    let plain = run(&["generate", "rules/file-server.yaml"]);
    let o = common::bin()
        .args(["generate", "rules/file-server.yaml"])
        .env("MCP_RESOLVE_STAGE_TIMES", "1")
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(o.stdout, plain.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    let stages: Vec<&str> = stderr.lines().collect();
    for (line, stage) in stages.iter().zip([
        "parsing 1 file",
        "checking 1 tool",
        "analysing the patterns of 1 tool",
        "generating the Rust resolver of 1 tool",
        "writing",
    ]) {
        assert!(line.starts_with('['), "{line}");
        assert!(line.contains(" s] ") || line.contains(" MiB] "), "{line}");
        assert!(line.ends_with(stage), "{stderr}");
    }
    assert_eq!(stages.len(), 5, "{stderr}");
    // Empty is unset.
    let o = common::bin()
        .args(["generate", "rules/file-server.yaml"])
        .env("MCP_RESOLVE_STAGE_TIMES", "")
        .output()
        .unwrap();
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A clean `check` says so in one line on standard error, on a terminal
/// and through a pipe; standard output stays empty for scripts.
#[test]
fn a_clean_check_says_so_on_standard_error() {
    let bin = env!("CARGO_BIN_EXE_mcp-resolve");
    // The shell keeps the terminal open a moment after the run: `script`
    // can lose what a child wrote just before the terminal closed.
    let command = format!("{bin} check rules/file-server.yaml; status=$?; sleep 1; exit $status");
    let o = std::process::Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .env("TERM", "xterm")
        .output()
        .expect("util-linux `script` (a pseudo-terminal for this test)");
    assert!(o.status.success(), "{o:?}");
    let terminal = String::from_utf8_lossy(&o.stdout);
    assert!(
        terminal.contains("checked 1 server, 1 tool: no problems found"),
        "{terminal:?}"
    );
    let o = run(&["check", "rules/file-server.yaml"]);
    assert!(o.status.success());
    assert!(
        o.stdout.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "checked 1 server, 1 tool: no problems found\n"
    );
    // A directory of several servers, clean: the same line, counted.
    let dir = common::scratch("cli", "clean-directory");
    for name in [
        "file-server.yaml",
        "issue-tracker.yaml",
        "repo-contents.rules",
    ] {
        std::fs::copy(std::path::Path::new("rules").join(name), dir.join(name)).unwrap();
    }
    let o = run(&["check", dir.to_str().unwrap()]);
    assert!(o.status.success());
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "checked 3 servers, 4 tools: no problems found\n"
    );
    // The machine formats carry their own summary, and nothing more.
    let o = run(&["check", "--format", "json", "rules/file-server.yaml"]);
    assert!(
        o.stderr.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["summary"]["errors"], 0);
}
