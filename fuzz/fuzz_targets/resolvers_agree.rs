//! A differential oracle over the bundled rules: for any arguments, the
//! library resolver, the matcher compiled at load time (the proxy's) and the
//! generated code (`generated/`, compiled by the golden crate) give the same
//! variant, annotations and scopes, or the same error. The first byte picks
//! the server and the tool; the rest is the arguments, as JSON when it is
//! JSON and as a string otherwise.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcp_resolve::Resolver;
use mcp_resolve::ir::Server;
use mcp_resolve_golden::goldens;
use mcp_resolve_runtime::{Dialect, Resolved, RpcError};
use serde_json::Value;

type Generated = fn(&str, &Value) -> Result<&'static Resolved, RpcError>;

const SERVERS: &[(&str, Generated)] = &[
    ("file-server", goldens::file_server::resolve),
    ("filesystem", goldens::filesystem::resolve),
    ("github-api", goldens::github_api::resolve),
    ("issue-tracker", goldens::issue_tracker::resolve),
    ("coding-agent", goldens::coding_agent::resolve),
    (
        "real-server-filesystem",
        goldens::real_server_filesystem::resolve,
    ),
];

fn servers() -> &'static [Server] {
    static SERVERS_IR: OnceLock<Vec<Server>> = OnceLock::new();
    SERVERS_IR.get_or_init(|| {
        SERVERS
            .iter()
            .map(|(name, _)| {
                let path = format!("{}/../rules/{name}.yaml", env!("CARGO_MANIFEST_DIR"));
                let project = mcp_resolve::load(&[path.into()]).expect("bundled rules load");
                project.single_server().expect("one server").clone()
            })
            .collect()
    })
}

/// The library resolver and the matcher of each server, made once.
fn resolvers() -> &'static [(Resolver<'static>, mcp_resolve_runtime::matcher::Matcher)] {
    static RESOLVERS: OnceLock<Vec<(Resolver<'static>, mcp_resolve_runtime::matcher::Matcher)>> =
        OnceLock::new();
    RESOLVERS.get_or_init(|| {
        servers()
            .iter()
            .map(|server| {
                (
                    Resolver::new(server).expect("resolver"),
                    mcp_resolve::matcher::compile(server, Dialect::Extension).expect("matcher"),
                )
            })
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let servers = servers();
    let index = usize::from(selector) % servers.len();
    let server = &servers[index];
    let generated = SERVERS[index].1;
    let tool = match usize::from(selector / 8) % (server.tools.len() + 1) {
        i if i < server.tools.len() => server.tools[i].name.clone(),
        _ => "no-such-tool".to_string(),
    };
    let arguments: Value = serde_json::from_slice(rest)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(rest).into_owned()));
    let (resolver, matcher) = &resolvers()[index];
    let library = resolver.resolve(&tool, &arguments);
    let matched = matcher.resolve(&tool, &arguments);
    let ours = generated(&tool, &arguments);
    match (&library, &matched, &ours) {
        (Ok(l), Ok(m), Ok(g)) => {
            assert_eq!(m.resolution(), l, "matcher: {tool} {arguments}");
            assert_eq!(&g.to_resolution(), l, "generated: {tool} {arguments}");
        }
        (Err(l), Err(m), Err(g)) => {
            assert_eq!(m, l, "matcher error: {tool} {arguments}");
            assert_eq!(
                (g.code, &g.message, &g.data),
                (l.code, &l.message, &l.data),
                "generated error: {tool} {arguments}"
            );
        }
        _ => panic!(
            "{tool} {arguments}: library {library:?}, matcher {matched:?}, generated {ours:?}"
        ),
    }
});
