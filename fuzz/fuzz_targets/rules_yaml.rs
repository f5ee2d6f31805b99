//! The YAML rules pipeline: parse, lower, check and analyse any text; a file
//! without errors also yields its signature. Never a panic or a hang. And
//! the YAML front end's fast path (the parser's events straight to the tree)
//! gives, where it answers, serde-saphyr's tree, spans included; read in
//! pieces, where it can be, the same tree.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_resolve::internals::parse::{yaml, yaml_fast};

const MAX: usize = 8 * 1024 * 1024;

fuzz_target!(|text: &str| {
    let fast = yaml_fast::parse(text, 4_000_000, 8_000_000);
    if let Some(cut) = yaml_fast::parse_cut(text, 4_000_000, 8_000_000, 2) {
        assert_eq!(Some(&cut), fast.as_ref());
    }
    if let Some(fast) = fast {
        assert_eq!(Ok(fast), yaml::parse_reference(text, MAX));
    }
    let project = mcp_resolve::load_str("fuzz.yaml", text);
    if !project.has_errors() {
        for server in &project.servers {
            let _ = mcp_resolve::emit::signature::signature(server);
        }
    }
});
