//! The TypeScript host library (`packages/host`, `@mcp-resolve/host`) in a
//! host, with the TypeScript SDK v2 and v1 clients
//! (`tests/fixtures/typescript/host_client.mjs`), against real servers: the
//! Rust example server, the TypeScript example server, a server with no
//! resolution behind `mcp-resolve proxy`, the same server alone (with and
//! without its signature document), and a server that lies
//! (`tests/fixtures/typescript/plain_server.mjs --lie`). Each decision must
//! come from the right source — the server's `tools/resolve`, the signature,
//! or the static annotations — name the right variant, and report the lies
//! it refused with the Rust host's violation kinds.
//!
//! Needs the host library built (`MCP_RESOLVE_TS_HOST`), the TypeScript
//! example (`MCP_RESOLVE_TS_EXAMPLE`) and the Rust example server, which
//! `cargo test --workspace` builds beside this binary.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::common;

const RULES: &str = "examples/file-server/rules/file-server.yaml";

/// The Rust example server, built by `cargo test --workspace` beside the
/// `mcp-resolve` binary: a failure under CI without it, else `None` with a
/// note (a test run of this package alone does not build it).
pub(crate) fn rust_server(test: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_BIN_EXE_mcp-resolve")).with_file_name("file-server");
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{} is missing: build the workspace first (`cargo test --workspace` does)",
        path.display()
    );
    common::note_skipped(&format!(
        "skipped {test}: {} is missing (`cargo test --workspace` builds it)",
        path.display()
    ));
    None
}

pub(crate) fn call(name: &str, arguments: Value, source: &str, variant: Option<&str>) -> Value {
    json!({"name": name, "arguments": arguments, "source": source, "variant": variant})
}

/// The calls every honest resolving server is asked, with the signature.
pub(crate) fn honest(with_signature: bool) -> Vec<Value> {
    let named = |v: &'static str| with_signature.then_some(v);
    vec![
        {
            let mut c = call(
                "manage_files",
                json!({"path": "notes.txt", "action": "read"}),
                "server",
                named("read"),
            );
            c["readOnly"] = json!(true);
            c
        },
        call(
            "manage_files",
            json!({"path": "notes.txt", "action": "delete"}),
            "server",
            named("delete"),
        ),
        call(
            "copy_file",
            json!({"source": "a", "destination": "b", "overwrite": true}),
            "server",
            named("replace_existing"),
        ),
        // Not resolvable: the static annotations.
        call("list_directory", json!({"path": "."}), "static", None),
        // Invalid arguments: the call is refused, no annotation applies.
        json!({"name": "manage_files", "arguments": {"path": "notes.txt"}, "error": -32602}),
    ]
}

#[test]
fn the_typescript_host_library_decides_from_the_right_source() {
    let test = "the_typescript_host_library_decides_from_the_right_source";
    let (Some(host), Some(example), Some(rust_server)) = (
        common::component("MCP_RESOLVE_TS_HOST", test),
        common::component("MCP_RESOLVE_TS_EXAMPLE", test),
        rust_server(test),
    ) else {
        return;
    };
    let dir = common::scratch("ts-host", "decide");
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("notes.txt"), "first line").unwrap();
    let signature = dir.join("file-server.signature.json");
    let status = common::bin()
        .args(["signature", RULES, "-o"])
        .arg(&signature)
        .status()
        .unwrap();
    assert!(status.success());
    // The fixtures run beside the host library's packages.
    for fixture in ["host_client.mjs", "plain_server.mjs"] {
        std::fs::copy(
            Path::new("tests/fixtures/typescript").join(fixture),
            host.join(fixture),
        )
        .unwrap();
    }
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let rust = vec![s(&rust_server), "--root".into(), s(&root)];
    let ts = vec![
        "node".into(),
        s(&example.join("dist/main.js")),
        "--root".into(),
        s(&root),
    ];
    let plain = vec![
        "node".into(),
        s(&host.join("plain_server.mjs")),
        s(&signature),
    ];
    let mut proxied = vec![
        s(Path::new(env!("CARGO_BIN_EXE_mcp-resolve"))),
        "proxy".into(),
        RULES.into(),
        "--".into(),
    ];
    proxied.extend(plain.clone());
    let mut lying = plain.clone();
    lying.push("--lie".into());

    let sig = json!(s(&signature));
    let read = json!({"path": "notes.txt", "action": "read"});
    let delete = json!({"path": "notes.txt", "action": "delete"});
    let overwrite = json!({"source": "a", "destination": "b", "overwrite": true});
    let scenarios = json!([
        {"label": "the Rust example server", "command": rust, "signature": sig, "calls": honest(true)},
        {"label": "the Rust example server, no signature", "command": rust, "signature": null,
         "calls": honest(false)},
        {"label": "the TypeScript example server", "command": ts, "signature": sig, "calls": honest(true)},
        {"label": "a server behind mcp-resolve proxy", "command": proxied, "signature": sig,
         "calls": honest(true)},
        {"label": "a server with no resolution", "command": plain, "signature": sig, "calls": [
            call("manage_files", read.clone(), "signature", Some("read")),
            call("copy_file", overwrite.clone(), "signature", Some("replace_existing")),
            call("list_directory", json!({"path": "."}), "static", None),
            {"name": "manage_files", "arguments": {"path": "notes.txt"}, "error": -32602},
        ]},
        {"label": "a server with no resolution, no signature", "command": plain, "signature": null,
         "calls": [
            {"name": "manage_files", "arguments": read, "source": "static", "variant": null,
             "readOnly": false},
        ]},
        {"label": "a lying server", "command": lying, "signature": sig, "calls": [
            call("manage_files", read.clone(), "server", Some("read")),
            // A delete resolved read-only: the signature says otherwise.
            {"name": "manage_files", "arguments": delete, "source": "signature", "variant": "delete",
             "violations": ["annotation", "annotation"], "readOnly": false},
            // Open-world and not idempotent: outside the listed bound.
            {"name": "copy_file", "arguments": overwrite, "source": "signature",
             "variant": "replace_existing", "violations": ["annotation", "annotation"]},
        ]},
        {"label": "a lying server, no signature", "command": lying, "signature": null, "calls": [
            // Within the bound of its worst-case listing, a lie cannot be told
            // from the truth without the signature.
            {"name": "manage_files", "arguments": delete, "source": "server", "variant": null,
             "readOnly": true},
            {"name": "copy_file", "arguments": overwrite, "source": "static", "variant": null,
             "violations": ["annotation", "annotation"]},
        ]},
    ]);
    let file = dir.join("scenarios.json");
    std::fs::write(&file, scenarios.to_string()).unwrap();
    let output = Command::new("node")
        .arg(host.join("host_client.mjs"))
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("all checks passed"),
        "the host library failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("ok ")).count(),
        16,
        "{stdout}"
    );
}

/// A signature the host library cannot check as the Rust host does is
/// refused whole, naming why: here a draft-07 `inputSchema` with keywords
/// beside a `$ref`, which draft-07 (and the Rust validator) reads alone and
/// Ajv would apply. The Rust host resolves from the same signature.
#[test]
fn a_signature_with_keywords_beside_a_draft_07_ref_is_refused() {
    let Some(host) = common::component(
        "MCP_RESOLVE_TS_HOST",
        "a_signature_with_keywords_beside_a_draft_07_ref_is_refused",
    ) else {
        return;
    };
    let rules = "tests/fixtures/valid/draft-07-ref-siblings.yaml";
    let signature = common::bin().args(["signature", rules]).output().unwrap();
    assert!(signature.status.success());
    let dir = common::scratch("ts_host", "ref-siblings");
    std::fs::write(dir.join("signature.json"), &signature.stdout).unwrap();
    let index = host.join("dist/index.js");
    let script = format!(
        r#"import {{ readFileSync }} from "node:fs";
import {{ Signature }} from {index};
try {{
  new Signature(JSON.parse(readFileSync("signature.json", "utf8")));
  console.log("accepted");
}} catch (e) {{
  console.log(`${{e.name}}: ${{e.message}}`);
}}
"#,
        index = serde_json::to_string(&url_of(&index)).unwrap()
    );
    std::fs::write(dir.join("run.mjs"), script).unwrap();
    let out = Command::new("node")
        .arg("run.mjs")
        .current_dir(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The signature's members are in canonical order: `properties` comes
    // first of the three beside the `$ref`.
    assert!(
        stdout.starts_with(
            "SignatureError: tools[0] (tool `touch`): `inputSchema` has `properties` beside `$ref` at `#`,"
        ) && stdout.contains("cannot be evaluated in JavaScript exactly as in Rust"),
        "{stdout}"
    );
    // The Rust host reads it, and takes `{}` for `touch` (draft-07 reads the
    // `$ref` alone: `required` beside it does not apply).
    let document: Value = serde_json::from_slice(&signature.stdout).unwrap();
    let rust = mcp_resolve_host::Signature::from_value(document).unwrap();
    assert!(rust.expect("touch", &json!({})).is_ok());
}

fn url_of(path: &Path) -> String {
    format!("file://{}", path.display())
}
