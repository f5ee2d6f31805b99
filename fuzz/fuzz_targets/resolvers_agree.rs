//! A differential oracle over every rules file that has generated code: for
//! any arguments, the library resolver, the matcher compiled at load time
//! (the proxy's) and the generated code give the same variant, annotations
//! and scopes, or the same error. The servers are the ten bundled ones
//! (`generated/`, compiled by the golden crate), the codegen fixture of
//! hostile names (`tests/fixtures/codegen/hostile.yaml`, built by the golden
//! crate's build script) and the golden crate's 40 random rule sets (the
//! differential test's). The first byte picks the server, the second the
//! tool (one past the last: a tool that does not exist); the rest is the
//! arguments, as JSON when it is JSON and as a string otherwise. Every
//! answer, in every dialect, must verify against the signature document of
//! the same rules (`Signature::verify_resolution`, the host's check); the
//! random sets give tools with and without `_meta`, icons, a title and an
//! output schema.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcp_resolve::Resolver;
use mcp_resolve::ir::Server;
use mcp_resolve_golden::{built, goldens, random};
use mcp_resolve_host::Signature;
use mcp_resolve_host::matcher::Matcher;
use mcp_resolve_runtime::{Dialect, Resolved, RpcError};
use serde_json::Value;

type Generated = fn(&str, &Value) -> Result<&'static Resolved, RpcError>;

/// The bundled servers, in the order of their files' names (`fuzz/seed.py`
/// writes its seeds in this order).
const BUNDLED: &[(&str, Generated)] = &[
    ("coding-agent.yaml", goldens::coding_agent::resolve),
    ("file-server.yaml", goldens::file_server::resolve),
    ("filesystem.yaml", goldens::filesystem::resolve),
    ("github-api.yaml", goldens::github_api::resolve),
    ("issue-tracker.yaml", goldens::issue_tracker::resolve),
    (
        "real-mcp-server-git.yaml",
        goldens::real_mcp_server_git::resolve,
    ),
    (
        "real-server-everything.yaml",
        goldens::real_server_everything::resolve,
    ),
    (
        "real-server-filesystem.yaml",
        goldens::real_server_filesystem::resolve,
    ),
    (
        "real-server-memory.yaml",
        goldens::real_server_memory::resolve,
    ),
    ("repo-contents.rules", goldens::repo_contents::resolve),
];

/// One rules file: its server, its signature, and the three resolvers of
/// it.
struct Case {
    server: &'static Server,
    signature: Signature,
    library: Resolver<'static>,
    matcher: Matcher,
    generated: Generated,
}

/// Every rules file with generated code, loaded and compiled once.
fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files: Vec<(PathBuf, Generated)> = BUNDLED
            .iter()
            .map(|&(name, generated)| (root.join("rules").join(name), generated))
            .collect();
        files.push((
            root.join("tests/fixtures/codegen/hostile.yaml"),
            built::hostile::resolve,
        ));
        files.extend(
            random::SETS
                .iter()
                .map(|&(path, generated)| (PathBuf::from(path), generated)),
        );
        files
            .into_iter()
            .map(|(path, generated)| {
                let project = mcp_resolve::load(std::slice::from_ref(&path))
                    .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
                // Made once per process; the resolver borrows it to the end.
                let server: &'static Server = Box::leak(Box::new(
                    project.single_server().expect("one server").clone(),
                ));
                Case {
                    signature: Signature::from_value(mcp_resolve::emit::signature::signature(
                        server,
                    ))
                    .expect("signature"),
                    library: Resolver::new(server).expect("resolver"),
                    matcher: mcp_resolve::matcher::compile(server, Dialect::Extension)
                        .expect("matcher"),
                    server,
                    generated,
                }
            })
            .collect()
    })
}

/// The host's check of an answer against the signature.
fn verifies(case: &Case, tool: &str, arguments: &Value, dialect: Dialect, answer: &Value) {
    if let Err(violations) = case.signature.verify_resolution(tool, arguments, answer) {
        panic!("the {dialect} answer for {tool} {arguments} does not verify: {violations}\n{answer}");
    }
}

fuzz_target!(|data: &[u8]| {
    let [which, tool, rest @ ..] = data else {
        return;
    };
    let cases = cases();
    let case = &cases[usize::from(*which) % cases.len()];
    let tools = &case.server.tools;
    let tool = match usize::from(*tool) % (tools.len() + 1) {
        i if i < tools.len() => tools[i].name.clone(),
        _ => "no-such-tool".to_string(),
    };
    let arguments: Value = serde_json::from_slice(rest)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(rest).into_owned()));
    let library = case.library.resolve(&tool, &arguments);
    let matched = case.matcher.resolve(&tool, &arguments);
    let ours = (case.generated)(&tool, &arguments);
    match (&library, &matched, &ours) {
        (Ok(l), Ok(m), Ok(g)) => {
            assert_eq!(m.resolution(), l, "matcher: {tool} {arguments}");
            assert_eq!(&g.to_resolution(), l, "generated: {tool} {arguments}");
            let matcher_answer: Value =
                serde_json::from_str(m.result_json(false)).expect("the matcher's answer is JSON");
            verifies(case, &tool, &arguments, Dialect::Extension, &matcher_answer);
            for dialect in Dialect::ALL {
                let answer: Value = serde_json::from_str(&g.result_json(dialect))
                    .expect("the generated answer is JSON");
                verifies(case, &tool, &arguments, dialect, &answer);
            }
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
