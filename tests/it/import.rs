//! `mcp-resolve import`: a published `tools/list` becomes rules that pass
//! `check`, whose signature the server's own answer verifies against, in
//! both syntaxes; bad input is a clear error and nothing is overwritten.

use crate::common;

use std::path::PathBuf;

use mcp_resolve::emit::signature::signature;
use mcp_resolve::emit::tools::tools_list;
use mcp_resolve_host::{Signature, verify_tools_list};
use mcp_resolve_runtime::Dialect;
use serde_json::Value;

const LISTING: &str = "tests/fixtures/import/tools-list.json";

fn scratch(name: &str) -> PathBuf {
    common::scratch("import", name)
}

fn run(args: &[&str]) -> std::process::Output {
    common::bin().args(args).output().unwrap()
}

#[test]
fn an_import_checks_clean_and_its_signature_verifies_the_servers_own_listing() {
    let listed: Value = serde_json::from_str(&std::fs::read_to_string(LISTING).unwrap()).unwrap();
    let dir = scratch("round-trip");
    for ext in ["yaml", "rules"] {
        let out_path = dir.join(format!("server.{ext}"));
        let out = run(&["import", LISTING, "-o", out_path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("`get_me.x-vendor` is not a member of MCP's Tool"),
            "{stderr}"
        );
        assert!(
            stderr.contains("imported 2 tools (1 with variants)"),
            "{stderr}"
        );

        let project = mcp_resolve::load(std::slice::from_ref(&out_path)).unwrap();
        let errors: Vec<_> = project
            .diagnostics
            .iter()
            .filter(|d| d.severity != mcp_resolve::diagnostic::Severity::Info)
            .collect();
        assert!(errors.is_empty(), "{ext}: {errors:?}");
        let server = project.single_server().unwrap();
        let names: Vec<&str> = server.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["issue_write", "get_me"]);
        assert_eq!(server.tools[0].variants.len(), 2);

        let doc = signature(server);
        let fp = doc["fingerprint"].as_str().unwrap().to_string();
        let sig = Signature::pinned(doc, &fp).unwrap();
        // The server's own answer, marker and vendor member included.
        verify_tools_list(&sig, &listed["result"]).unwrap();
        // And what the imported rules list, in every dialect.
        for dialect in Dialect::ALL {
            verify_tools_list(&sig, &tools_list(server, dialect)).unwrap();
        }
        let text = std::fs::read_to_string(&out_path).unwrap();
        assert!(
            text.contains(
                "consider `annotations: { readOnlyHint: false, destructiveHint: false }`"
            ),
            "{text}"
        );
    }
}

#[test]
fn bad_input_is_a_clear_error_and_nothing_is_overwritten() {
    let dir = scratch("errors");
    let out_path = dir.join("out.yaml");
    let out = out_path.to_str().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let cases = [
        (write("not-json.json", "{tools"), "is not JSON"),
        (
            write("no-tools.json", "{\"result\": {}}"),
            "expected a tools/list result",
        ),
        (
            write(
                "no-name.json",
                "[{\"inputSchema\": {\"type\": \"object\"}}]",
            ),
            "tool 0: no string `name`",
        ),
        (
            write("no-schema.json", "[{\"name\": \"a\"}]"),
            "`a` has no object `inputSchema`",
        ),
    ];
    for (input, message) in &cases {
        let r = run(&["import", input, "-o", out]);
        assert_ne!(r.status.code(), Some(0), "{input}");
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert!(stderr.contains(message), "{input}: {stderr}");
        assert!(!out_path.exists());
    }
    // A tool the rules format refuses (an outputSchema that is not an object schema).
    let bad = write(
        "bad-output.json",
        "[{\"name\": \"a\", \"inputSchema\": {\"type\": \"object\"}, \"outputSchema\": {\"type\": \"array\"}}]",
    );
    let r = run(&["import", &bad, "-o", out]);
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("invalid-schema"));
    assert!(!out_path.exists());

    // An existing file is kept unless --force.
    std::fs::write(&out_path, "mine").unwrap();
    let r = run(&["import", LISTING, "-o", out]);
    assert_eq!(r.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&out_path).unwrap(), "mine");
    let r = run(&["import", LISTING, "-o", out, "--force"]);
    assert_eq!(r.status.code(), Some(0));
    assert!(
        std::fs::read_to_string(&out_path)
            .unwrap()
            .starts_with("# Imported")
    );

    // An empty listing imports to an empty, valid rules file.
    let empty = write("empty.json", "{\"tools\": []}");
    let empty_out = dir.join("empty.yaml");
    let r = run(&["import", &empty, "-o", empty_out.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(0), "{r:?}");
    let project = mcp_resolve::load(std::slice::from_ref(&empty_out)).unwrap();
    assert!(!project.has_errors(), "{:?}", project.diagnostics);
}
