//! The policy file parser: any text gives a policy or diagnostics; a policy
//! decides any call.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_resolve::source::SourceMap;
use mcp_resolve_proxy::policy::{Call, Policy};
use mcp_resolve_runtime::Annotations;

fuzz_target!(|text: &str| {
    let mut sources = SourceMap::new();
    let file = sources.add(std::path::Path::new("policy.yaml"), text.to_string());
    let hints = [
        "readOnlyHint",
        "destructiveHint",
        "idempotentHint",
        "openWorldHint",
        "agencyHint",
    ];
    if let Ok(policy) = Policy::parse(text, file, &hints) {
        let annotations = Annotations::defaults();
        for variant in [None, Some("read")] {
            let _ = policy.decide(&Call {
                tool: "manage_files",
                variant,
                annotations: &annotations,
                scopes: &["files:write".to_string()],
                principal: None,
            });
        }
    }
});
