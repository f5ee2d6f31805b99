//! Hostile Cedar policy text: the engine loads it or reports diagnostics,
//! never panics; what loads decides a call.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use mcp_resolve::source::FileId;
use mcp_resolve_policy::Call;
use mcp_resolve_policy::cedar::{Engine, Source};
use mcp_resolve_runtime::Annotations;

static SERVER: LazyLock<mcp_resolve::ir::Server> = LazyLock::new(|| {
    let project = mcp_resolve::load_str(
        "file-server.yaml",
        include_str!("../../rules/file-server.yaml"),
    );
    project.servers.into_iter().next().expect("the example rules load")
});

fuzz_target!(|text: &str| {
    let source = Source {
        file: FileId(0),
        name: "p.cedar",
        text,
    };
    let Ok(engine) = Engine::load(&SERVER, std::slice::from_ref(&source), None) else {
        return;
    };
    let annotations = Annotations::defaults();
    let arguments = serde_json::json!({"path": "/etc/x", "action": "read"});
    let _ = engine.decide(&Call {
        tool: "manage_files",
        arguments: Some(&arguments),
        variant: Some("read"),
        annotations: &annotations,
        scopes: &[],
        described: true,
        principal: None,
        session: None,
    });
});
