//! The YAML policy parser and its Cedar translation: any text gives a policy
//! or diagnostics; a policy's translation is Cedar the engine loads, and it
//! decides every call as the YAML policy's first match does.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use mcp_resolve::source::SourceMap;
use mcp_resolve_policy::cedar::Engine;
use mcp_resolve_policy::{Call, Policy, Principal};
use mcp_resolve_runtime::Annotations;

static SERVER: LazyLock<mcp_resolve::ir::Server> = LazyLock::new(|| {
    let project = mcp_resolve::load_str(
        "file-server.yaml",
        include_str!("../../rules/file-server.yaml"),
    );
    project.servers.into_iter().next().expect("the example rules load")
});

fuzz_target!(|text: &str| {
    let mut sources = SourceMap::new();
    let file = sources.add(std::path::Path::new("policy.yaml"), text.to_string());
    let server = &*SERVER;
    let Ok(policy) = Policy::for_server(text, file, server) else {
        return;
    };
    let engine = Engine::from_yaml(server, &policy, None)
        .unwrap_or_else(|e| panic!("the translation of a valid policy does not load: {e}"));
    let alice = Principal {
        sub: Some("alice".into()),
        client_id: Some("ci-bot".into()),
        ..Principal::default()
    };
    for bits in 0..16u8 {
        let annotations = Annotations {
            read_only: bits & 1 != 0,
            destructive: bits & 2 != 0,
            idempotent: bits & 4 != 0,
            open_world: bits & 8 != 0,
            ..Annotations::defaults()
        };
        for (tool, variant, described) in [
            ("manage_files", None, true),
            ("manage_files", Some("read"), true),
            ("other", None, false),
        ] {
            for principal in [None, Some(&alice)] {
                let call = Call {
                    tool,
                    arguments: None,
                    variant,
                    annotations: &annotations,
                    scopes: &["files:write".to_string()],
                    described,
                    principal,
                    session: None,
                };
                let yaml = policy.decide(&call);
                let cedar = engine.decide_without_input(&call);
                assert_eq!(
                    (yaml.decision, yaml.rule),
                    (cedar.decision, cedar.policies.first().map(String::as_str)),
                    "{text}"
                );
            }
        }
    }
});
