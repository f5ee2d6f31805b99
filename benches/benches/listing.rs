//! The session's work for a `tools/list` answer from a real server
//! (server-filesystem's 14 tools, `tests/fixtures/real/`, as one line) with
//! its rules (`rules/real-server-filesystem.yaml`): the answer read, each
//! described tool's annotations merged as text and spliced back, the
//! host's id put back. Beside it, in the same run, what serde_json alone
//! costs on the same text: a validating pass that keeps nothing and a
//! `Value` tree (what a proxy that parses the answer would spend); and the
//! same validating pass by the protocol crate's scanner, which the session
//! reads such an answer with.
//!
//! Measured hot, one answer after another: on the virtual machines of
//! docs/performance.md, where a request arrives with cold caches, the
//! proxy's CPU for the same answer is about three times this.

#![allow(clippy::unwrap_used, clippy::panic)]

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_resolve_proxy::machine::clock;
use mcp_resolve_proxy::rules::ProxyRules;
use mcp_resolve_proxy::session::{Config, Effect, Input, Session};
use serde_json::Value;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

fn listing(c: &mut Criterion) {
    let read = |path: &str| std::fs::read_to_string(format!("{ROOT}/{path}")).unwrap();
    let project = mcp_resolve::load_str(
        "real-server-filesystem.yaml",
        &read("rules/real-server-filesystem.yaml"),
    );
    let server = project.servers.into_iter().next().unwrap();
    let rules = ProxyRules::new(server, mcp_resolve_runtime::Dialect::Extension).unwrap();
    let guard = mcp_resolve_proxy::guard::unkeyed();
    // The snapshot is the result a server sends, pretty-printed: one line.
    let result: Value = serde_json::from_str(&read(
        "tests/fixtures/real/server-filesystem-2026.8.31.json",
    ))
    .unwrap();
    let result = result.to_string();
    let mut next = 0u128;
    let config = Config {
        timeout: None,
        max_message_bytes: 1 << 22,
        per_message: false,
        compare_listing: false,
        span_attributes: Vec::new(),
        shared: false,
        records: false,
        traces: false,
        routes_answers: false,
        lists_by_scope: false,
        ids: Box::new(move || {
            next += 1;
            next
        }),
    };
    let mut session = Session::new(&rules, &guard, config);
    let mut out = Vec::new();
    // The id the session gave the request it forwarded.
    let forwarded = |out: &mut Vec<Effect>| -> Value {
        let line = out
            .drain(..)
            .find_map(|e| match e {
                Effect::Server(line) => Some(line),
                _ => None,
            })
            .unwrap();
        serde_json::from_str::<Value>(&line).unwrap()["id"].clone()
    };
    session.from_host(
        Input::Line(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#
                .into(),
        ),
        clock(),
        &mut out,
    );
    let id = forwarded(&mut out);
    session.from_server(
        Input::Line(format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":"2025-11-25","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"secure-filesystem-server","version":"0.2.0"}}}}}}"#
        )),
        clock(),
        &mut out,
    );
    out.clear();

    let mut group = c.benchmark_group("tools-list-14-tools");
    let mut host_id = 0u64;
    group.bench_function("session: the answer annotated and passed on", |b| {
        // Only the answer's step is timed; the request's is set up.
        b.iter_custom(|iters| {
            let mut spent = std::time::Duration::ZERO;
            for _ in 0..iters {
                host_id += 1;
                let request =
                    format!(r#"{{"jsonrpc":"2.0","id":{host_id},"method":"tools/list"}}"#);
                session.from_host(Input::Line(request), clock(), &mut out);
                let id = forwarded(&mut out);
                let answer = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
                let start = std::time::Instant::now();
                session.from_server(Input::Line(answer), clock(), &mut out);
                spent += start.elapsed();
                let Some(Effect::Host(line)) = out.pop() else {
                    panic!("the answer did not reach the host")
                };
                black_box(line);
                out.clear();
            }
            spent
        })
    });
    let answer = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#);
    group.bench_function("serde_json: validated, nothing kept (baseline)", |b| {
        b.iter(|| {
            serde_json::from_str::<&serde_json::value::RawValue>(black_box(&answer))
                .unwrap()
                .get()
                .len()
        })
    });
    group.bench_function("the proxy's scanner: validated, nothing kept", |b| {
        b.iter(|| {
            let mut scanner = mcp_resolve_protocol::json::scan(black_box(&answer));
            let value = scanner.value().unwrap();
            scanner.end().unwrap();
            value.len()
        })
    });
    group.bench_function("serde_json: a Value tree (baseline)", |b| {
        b.iter(|| serde_json::from_str::<Value>(black_box(&answer)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, listing);
criterion_main!(benches);
