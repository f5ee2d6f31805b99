//! The malformed-input corpus: every file in `tests/fixtures/malformed`
//! (expressions in YAML `when:` strings and `.rules` files) gives exactly the
//! diagnostics in its `.expected` file (line:column, code, message), without
//! a panic, on a thread with a small stack.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

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
