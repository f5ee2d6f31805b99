//! Generated resolvers against a hand-written `match`, the runtime matcher
//! (rules compiled at load time, as the proxy serves them) and the library
//! resolver, all in one run; dispatch cost at 10, 1,000 and 10,000 tools.
//! `cargo bench -p mcp-resolve-benches`; figures in docs/performance.md.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_resolve::Resolver;
use mcp_resolve_benches::{file_server, hand, synthetic};
use mcp_resolve_runtime::Dialect;
use serde_json::{Value, json};

fn calls() -> Vec<(&'static str, Value)> {
    vec![
        ("read", json!({"path": "notes.md", "action": "read"})),
        (
            "append",
            json!({"path": "notes.md", "action": "append", "content": "x"}),
        ),
        ("delete", json!({"path": "notes.md", "action": "delete"})),
    ]
}

fn matching(c: &mut Criterion) {
    let mut group = c.benchmark_group("matching");
    for (label, args) in calls() {
        let map = args.as_object().unwrap().clone();
        // Same answers first: the comparison is only fair if they agree.
        assert_eq!(
            hand::matching("manage_files", &map),
            Some(
                file_server::resolve_validated("manage_files", &map)
                    .unwrap()
                    .result_json(Dialect::Extension)
                    .as_ref()
            )
        );
        group.bench_function(format!("hand-written/{label}"), |b| {
            b.iter(|| hand::matching(black_box("manage_files"), black_box(&map)))
        });
        group.bench_function(format!("generated/{label}"), |b| {
            b.iter(|| {
                file_server::resolve_validated(black_box("manage_files"), black_box(&map))
                    .map(|r| r.result_json(Dialect::Extension))
            })
        });
    }
    group.finish();
}

fn full(c: &mut Criterion) {
    let project = mcp_resolve::load(&["../rules/file-server.yaml".into()]).unwrap();
    let server = project.single_server().unwrap();
    let resolver = Resolver::new(server).unwrap();
    // What the proxy resolves with: the rules compiled at load time.
    let matcher = mcp_resolve::matcher::compile(server, Dialect::Extension).unwrap();
    let mut group = c.benchmark_group("full");
    for (label, args) in calls() {
        assert_eq!(
            hand::full("manage_files", &args),
            file_server::resolve_json("manage_files", &args, Dialect::Extension)
                .ok()
                .as_deref()
        );
        group.bench_function(format!("hand-written/{label}"), |b| {
            b.iter(|| hand::full(black_box("manage_files"), black_box(&args)))
        });
        group.bench_function(format!("generated/{label}"), |b| {
            b.iter(|| {
                file_server::resolve_json(
                    black_box("manage_files"),
                    black_box(&args),
                    Dialect::Extension,
                )
            })
        });
        // The same answer (key order follows this crate's serde_json).
        let text = |t: &str| serde_json::from_str::<Value>(t).unwrap();
        assert_eq!(
            text(
                matcher
                    .resolve("manage_files", &args)
                    .unwrap()
                    .result_json(false)
            ),
            text(&file_server::resolve_json("manage_files", &args, Dialect::Extension).unwrap())
        );
        group.bench_function(format!("matcher/{label}"), |b| {
            b.iter(|| {
                matcher
                    .resolve(black_box("manage_files"), black_box(&args))
                    .map(|o| o.result_json(false))
            })
        });
        group.bench_function(format!("library/{label}"), |b| {
            b.iter(|| {
                resolver
                    .resolve_result(
                        black_box("manage_files"),
                        black_box(&args),
                        Dialect::Extension,
                    )
                    .map(|v| serde_json::to_string(&v).unwrap_or_default())
            })
        });
    }
    group.finish();
}

/// A host checking the server's answer (`host::verify_resolution`: the
/// recipe with jsonschema, then the comparison) next to the server producing
/// it (the generated resolver).
fn host(c: &mut Criterion) {
    let signature = mcp_resolve_host::Signature::from_json(file_server::SIGNATURE_JSON).unwrap();
    let mut group = c.benchmark_group("host");
    for (label, args) in calls() {
        let answer: Value = serde_json::from_str(
            &file_server::resolve_json("manage_files", &args, Dialect::Extension).unwrap(),
        )
        .unwrap();
        mcp_resolve_host::verify_resolution(&signature, "manage_files", &args, &answer).unwrap();
        group.bench_function(format!("server-resolve/{label}"), |b| {
            b.iter(|| {
                file_server::resolve_json(
                    black_box("manage_files"),
                    black_box(&args),
                    Dialect::Extension,
                )
            })
        });
        group.bench_function(format!("host-verify/{label}"), |b| {
            b.iter(|| {
                mcp_resolve_host::verify_resolution(
                    black_box(&signature),
                    black_box("manage_files"),
                    black_box(&args),
                    black_box(&answer),
                )
                .is_ok()
            })
        });
    }
    group.finish();
}

fn dispatch(c: &mut Criterion) {
    let args = json!({"action": "read"});
    let map = args.as_object().unwrap().clone();
    let mut group = c.benchmark_group("dispatch");
    type Validated =
        fn(
            &str,
            &serde_json::Map<String, Value>,
        )
            -> Result<&'static mcp_resolve_runtime::Resolved, mcp_resolve_runtime::RpcError>;
    let sizes: [(usize, Validated); 3] = [
        (10, synthetic::tools_10::resolve_validated),
        (1_000, synthetic::tools_1000::resolve_validated),
        (10_000, synthetic::tools_10000::resolve_validated),
    ];
    for (n, resolve) in sizes {
        // The last resolvable tool.
        let name = format!("tool_{}", (n - 1) / 100 * 100);
        assert_eq!(resolve(&name, &map).unwrap().variant, Some("read"));
        group.bench_function(format!("{n}-tools/hit"), |b| {
            b.iter(|| resolve(black_box(&name), black_box(&map)))
        });
    }
    group.finish();
}

/// What the proxy's guard adds to a forwarded `tools/call`: the call's
/// outcome from the matcher (validation and matching, as for a resolve), the
/// policy's decision, and the pin's lookup of the tool.
fn guard(c: &mut Criterion) {
    use mcp_resolve_proxy::policy::{Call, Policy};
    let project = mcp_resolve::load(&["../rules/file-server.yaml".into()]).unwrap();
    let server = project.single_server().unwrap();
    let matcher = mcp_resolve::matcher::compile(server, Dialect::Extension).unwrap();
    let hints: Vec<&str> = server.hints.names().collect();
    let policy = Policy::parse(
        include_str!("../../docs/policies/no-open-world-writes.yaml"),
        mcp_resolve::source::FileId(0),
        &hints,
    )
    .unwrap();
    // The proxy decides with the YAML policy's Cedar translation.
    let policy =
        mcp_resolve_proxy::policy::cedar::Engine::from_yaml(server, &policy, None).unwrap();
    let pin =
        mcp_resolve_host::Signature::verified(mcp_resolve::emit::signature::signature(server))
            .unwrap();
    let mut group = c.benchmark_group("guard");
    for (label, args) in calls() {
        group.bench_function(format!("outcome/{label}"), |b| {
            b.iter(|| matcher.outcome(black_box("manage_files"), black_box(&args)))
        });
        group.bench_function(format!("outcome+policy+pin/{label}"), |b| {
            b.iter(|| {
                let pinned = pin.tool(black_box("manage_files")).is_some();
                let outcome = matcher
                    .outcome(black_box("manage_files"), black_box(&args))
                    .unwrap()
                    .unwrap();
                let resolution = outcome.resolution();
                let verdict = policy.decide(&Call {
                    tool: "manage_files",
                    arguments: Some(&args),
                    variant: resolution.variant.as_deref(),
                    annotations: &resolution.annotations,
                    scopes: &resolution.required_scopes,
                    described: true,
                    principal: None,
                    session: None,
                });
                (pinned, verdict.decision)
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = matching, full, host, dispatch, guard
}
criterion_main!(benches);
