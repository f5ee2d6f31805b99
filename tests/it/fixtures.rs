//! Every invalid fixture renders exactly its expected diagnostics (code, file,
//! line, column, message, help); every valid fixture and bundled rules file
//! compiles without findings.

use crate::common;

use std::collections::BTreeSet;

use mcp_resolve::diagnostic::{Code, render_human};

#[test]
fn invalid_fixtures_render_their_expected_diagnostics() {
    let fixtures = common::files("tests/fixtures/invalid", "yaml");
    assert!(fixtures.len() >= 25, "fixtures went missing");
    for path in fixtures {
        let project = mcp_resolve::load(std::slice::from_ref(&path)).unwrap();
        assert!(
            !project.diagnostics.is_empty(),
            "{} produced no diagnostics",
            path.display()
        );
        let rendered = render_human(&project.sources, &project.diagnostics, false);
        common::expect_file(&path.with_extension("expected"), &rendered);
    }
}

#[test]
fn every_diagnostic_code_has_a_fixture() {
    let mut seen = BTreeSet::new();
    let mut expected = common::files("tests/fixtures/invalid", "expected");
    expected.extend(common::files("tests/fixtures/analysis", "expected"));
    for path in expected {
        let text = std::fs::read_to_string(&path).unwrap();
        for code in Code::ALL {
            if text.contains(&format!("[{}]", code.as_str())) {
                seen.insert(code.as_str());
            }
        }
    }
    // Covered by tests that build their input in code (crates/compiler/tests/it/multi_file.rs),
    // and by `generate --lang typescript`'s own test (tests/it/typescript.rs).
    let later = ["pattern-too-complex", "server-mismatch", "not-portable"];
    let missing: Vec<&str> = Code::ALL
        .iter()
        .map(|c| c.as_str())
        .filter(|c| !seen.contains(c) && !later.contains(c))
        .collect();
    assert!(missing.is_empty(), "codes without a fixture: {missing:?}");
}

#[test]
fn valid_fixtures_and_bundled_rules_have_no_errors_or_warnings() {
    let mut paths = common::files("tests/fixtures/valid", "yaml");
    paths.extend(common::files("rules", "yaml"));
    paths.extend(common::files("rules", "rules"));
    paths.extend(common::files("tests/fixtures/forms", "yaml"));
    paths.extend(common::files("tests/fixtures/forms", "rules"));
    for path in paths {
        let project = mcp_resolve::load(std::slice::from_ref(&path)).unwrap();
        let rendered = render_human(&project.sources, &project.diagnostics, false);
        // Infos (a tool that leaves some calls to its static annotations) are fine.
        assert!(
            project
                .diagnostics
                .iter()
                .all(|d| d.severity == mcp_resolve::diagnostic::Severity::Info),
            "{}:\n{rendered}",
            path.display()
        );
    }
}
