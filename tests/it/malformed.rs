//! The malformed-input corpus: every file in `tests/fixtures/malformed`
//! (expressions in YAML `when:` strings and `.rules` files) gives exactly the
//! diagnostics in its `.expected` file (line:column, code, message), without
//! a panic, on a thread with a small stack.

use crate::common;

const STACK: usize = 512 * 1024;

use std::path::PathBuf;

use mcp_resolve::diagnostic::Severity;

fn corpus() -> Vec<PathBuf> {
    let mut files = common::files("tests/fixtures/malformed", "yaml");
    files.extend(common::files("tests/fixtures/malformed", "rules"));
    files.sort();
    files
}

fn summary(path: &PathBuf) -> String {
    let project = mcp_resolve::load(std::slice::from_ref(path)).unwrap();
    let mut out = String::new();
    for d in &project.diagnostics {
        let (line, col) = d
            .span
            .and_then(|s| project.sources.get(s.file).map(|f| f.line_col(s.start)))
            .unwrap_or((0, 0));
        out.push_str(&format!(
            "{line}:{col} {}[{}]: {}\n",
            d.severity.as_str(),
            d.code,
            d.message
        ));
    }
    out
}

#[test]
fn malformed_inputs_give_their_expected_diagnostics() {
    let files = corpus();
    assert!(files.len() >= 30, "the corpus has {} files", files.len());
    for path in files {
        // A small caller stack: the front end must not depend on it.
        let p = path.clone();
        let rendered = std::thread::Builder::new()
            .stack_size(STACK)
            .spawn(move || summary(&p))
            .unwrap()
            .join()
            .unwrap_or_else(|_| panic!("{} panicked", path.display()));
        assert!(
            rendered.contains(" error["),
            "{} has no error:\n{rendered}",
            path.display()
        );
        common::expect_file(&path.with_extension("expected"), &rendered);
    }
}

#[test]
fn every_malformed_input_is_an_error_for_check() {
    for path in corpus() {
        let out = common::bin().arg("check").arg(&path).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", path.display());
        let project = mcp_resolve::load(std::slice::from_ref(&path)).unwrap();
        assert!(
            project
                .diagnostics
                .iter()
                .any(|d| d.severity == Severity::Error)
        );
    }
}

/// Runs `mcp-resolve check` on `paths`, killed after 30 s: the exit code
/// (`None` when it had to be killed) and what it printed.
fn check_with_deadline(paths: &[&std::path::Path]) -> (Option<i32>, String) {
    let mut child = common::bin()
        .arg("check")
        .args(paths)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(30) {
            child.kill().unwrap();
            child.wait().unwrap();
            return (None, String::new());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let printed = [out.stdout, out.stderr].concat();
    (
        out.status.code(),
        String::from_utf8_lossy(&printed).into_owned(),
    )
}

/// A device or a FIFO where a file is expected is refused at once: the size
/// limit used to trust `metadata().len()`, which is 0 for both, so
/// `/dev/zero` grew until memory ran out and a FIFO blocked for ever.
#[cfg(unix)]
#[test]
fn devices_and_fifos_are_refused_not_read() {
    let dir = common::scratch("malformed", "devices");
    let fifo = dir.join("schema.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    for schema in ["/dev/zero", fifo.to_str().unwrap()] {
        let rules = dir.join("rules.yaml");
        std::fs::write(
            &rules,
            format!(
                "version: 1\nserver: {{ name: s, version: \"1\" }}\ntools:\n  - name: a\n    inputSchemaFile: {schema}\n"
            ),
        )
        .unwrap();
        let (code, stderr) = check_with_deadline(&[&rules]);
        assert_eq!(code, Some(1), "{schema}: {stderr}");
        assert!(stderr.contains("not a regular file"), "{schema}: {stderr}");
    }
    // The rules file itself a FIFO.
    let rules = dir.join("rules-fifo.yaml");
    let made = std::process::Command::new("mkfifo")
        .arg(&rules)
        .status()
        .unwrap();
    assert!(made.success());
    let (code, stderr) = check_with_deadline(&[&rules]);
    assert!(matches!(code, Some(1 | 2)), "{code:?}: {stderr}");
    assert!(stderr.contains("not a regular file"), "{stderr}");
}

/// Keys within keys (`? ? ? … a:`): a mapping used as a mapping key was
/// turned into its JSON text, and each level escaped the level below again,
/// so 30 levels — 66 bytes — made a gigabyte and a policy file that
/// `proxy --policy` never finished reading (found by the `policy` fuzz
/// target). Such keys are now written in flow style, in linear size.
#[test]
fn keys_within_keys_stay_small() {
    use mcp_resolve::internals::parse::yaml;
    let text = format!("{}a: 1\n", "? ".repeat(30));
    let json = yaml::parse(&text).unwrap().to_json().to_string();
    assert!(json.len() < 1000, "{} bytes", json.len());
    let shallow = yaml::parse("? {a: [1, \"x\"]}\n: v\n").unwrap().to_json();
    assert_eq!(shallow, serde_json::json!({"{\"a\": [1, \"x\"]}": "v"}));

    // The fuzz target's input, as a policy file: refused with diagnostics.
    let dir = common::scratch("malformed", "keys-within-keys");
    let policy = dir.join("policy.yaml");
    std::fs::write(
        &policy,
        "? ? ? ? ? ?  ? ? ? ? ? ? ? ? ? ? ? ?  ? ? ? ? ? ? ? ?  ? ? ? Aversin:",
    )
    .unwrap();
    let out = common::bin()
        .args(["proxy", "--policy"])
        .arg(&policy)
        .args(["rules/file-server.yaml", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown key"));
    // And as a rules file.
    let (code, printed) = check_with_deadline(&[policy.as_path()]);
    assert!(matches!(code, Some(1) | Some(2)), "{printed}");
}
