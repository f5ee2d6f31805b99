//! The `.rules` pipeline: parse, lower, check and analyse any text; a file
//! without errors also yields its signature. Never a panic or a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let project = mcp_resolve::load_str("fuzz.rules", text);
    if !project.has_errors() {
        for server in &project.servers {
            let _ = mcp_resolve::emit::signature::signature(server);
        }
    }
});
