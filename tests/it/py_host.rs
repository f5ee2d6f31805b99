//! The Python host library (`packages/python-host`, `mcp_resolve_host`) in
//! a host, with the Python SDK 2.x client in both eras
//! (`tests/fixtures/python/host_client.py`), against real servers: the Rust
//! example server, the Python and TypeScript example servers, a server with
//! no resolution behind `mcp-resolve proxy`, the same server alone (with and
//! without its signature document), and a server that lies
//! (`tests/fixtures/typescript/plain_server.mjs --lie`, run from the built
//! TypeScript host package, which has the SDK it is written with). Each
//! decision must come from the right source, name the right variant, and
//! report the lies it refused with the Rust host's violation kinds.

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::common;
use crate::ts_host::{call, honest, rust_server};

const RULES: &str = "examples/file-server/rules/file-server.yaml";

#[test]
fn the_python_host_library_decides_from_the_right_source() {
    let test = "the_python_host_library_decides_from_the_right_source";
    let (Some(venv), Some(ts_host), Some(ts_example), Some(rust_server)) = (
        common::component("MCP_RESOLVE_PY_RUNTIME", test),
        common::component("MCP_RESOLVE_TS_HOST", test),
        common::component("MCP_RESOLVE_TS_EXAMPLE", test),
        rust_server(test),
    ) else {
        return;
    };
    let dir = common::scratch("py-host", "decide");
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
    // The plain server runs beside the TypeScript SDK it is written with.
    let plain_script = ts_host.join("plain_server_for_py_host.mjs");
    std::fs::copy("tests/fixtures/typescript/plain_server.mjs", &plain_script).unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let python = s(&venv.join("bin/python"));
    let rust = vec![s(&rust_server), "--root".into(), s(&root)];
    let py = vec![
        python.clone(),
        s(&std::fs::canonicalize("examples/file-server-py/file_server.py").unwrap()),
        "--root".into(),
        s(&root),
    ];
    let ts = vec![
        "node".into(),
        s(&ts_example.join("dist/main.js")),
        "--root".into(),
        s(&root),
    ];
    let plain = vec!["node".into(), s(&plain_script), s(&signature)];
    let mut proxied = vec![
        s(Path::new(env!("CARGO_BIN_EXE_mcp-resolve"))),
        "proxy".into(),
        s(&std::fs::canonicalize(RULES).unwrap()),
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
        {"label": "the Python example server", "command": py, "signature": sig, "calls": honest(true)},
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
            {"name": "manage_files", "arguments": delete, "source": "signature", "variant": "delete",
             "violations": ["annotation", "annotation"], "readOnly": false},
            {"name": "copy_file", "arguments": overwrite, "source": "signature",
             "variant": "replace_existing", "violations": ["annotation", "annotation"]},
        ]},
        {"label": "a lying server, no signature", "command": lying, "signature": null, "calls": [
            {"name": "manage_files", "arguments": delete, "source": "server", "variant": null,
             "readOnly": true},
            {"name": "copy_file", "arguments": overwrite, "source": "static", "variant": null,
             "violations": ["annotation", "annotation"]},
        ]},
    ]);
    let file = dir.join("scenarios.json");
    std::fs::write(&file, scenarios.to_string()).unwrap();
    let output = Command::new(&python)
        .arg("tests/fixtures/python/host_client.py")
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
        18,
        "{stdout}"
    );
}
