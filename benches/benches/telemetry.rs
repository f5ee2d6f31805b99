//! What OpenTelemetry costs the proxy on a call's path, side by side with
//! telemetry off in the same run:
//! - the session's work for one forwarded `tools/call` and its answer (the
//!   host's line in, the server's answer out, the side effects applied as
//!   the relay applies them): telemetry off, and on (spans, the audit
//!   record, their hand-over to the telemetry worker);
//! - an audit record: written to an audit log, and handed over and made a
//!   log record with its metrics by the worker (flushed every 1,000 so
//!   none is dropped; the worker runs on another core).
//!
//! The exporters send in the background, here to a port nothing listens
//! on: their failures cost the call nothing.

#![allow(clippy::unwrap_used)]

// The proxy binary's allocator: what crosses to the telemetry worker is
// allocated on the request's thread and freed on the worker's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

fn telemetry(c: &mut Criterion) {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let exporting = Sinks {
        telemetry: mcp_resolve_telemetry::Telemetry::from_env(
            Some(&format!("http://127.0.0.1:{closed}")),
            |_| {},
        )
        .unwrap(),
        ..Default::default()
    };
    let record = json!({
        "time": "2026-11-26T15:41:39.123Z", "event": "call", "tool": "manage_files",
        "variant": "read",
        "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true,
                        "openWorldHint": false, "agencyHint": false},
        "requiredScopes": ["files:read"], "described": true, "decision": "allow",
        "rule": "reads", "policies": ["reads"], "outcome": "forwarded", "upstreamMs": 0.412
    });
    let dir = std::env::temp_dir().join(format!("mcp-resolve-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let auditing = Sinks {
        audit: Some(mcp_resolve_proxy::guard::Audit::open(&dir.join("audit.jsonl")).unwrap()),
        ..Default::default()
    };
    let mut group = c.benchmark_group("audit-record");
    group.bench_function("audit log line (baseline)", |b| {
        b.iter(|| auditing.keep(black_box(record.clone())))
    });
    // The hand-over on the request's path and the worker's log record and
    // metrics beside it, flushed every 1,000 records so none is dropped.
    let telemetry = exporting.telemetry.as_ref().unwrap();
    group.bench_function("OpenTelemetry log record and metrics", |b| {
        b.iter_custom(|iters| {
            let start = std::time::Instant::now();
            for i in 0..iters {
                exporting.keep(black_box(record.clone()));
                if i % 1_000 == 999 {
                    telemetry.flush();
                }
            }
            telemetry.flush();
            start.elapsed()
        })
    });
    group.finish();

    // One forwarded call through the session, telemetry off and on.
    let project = mcp_resolve::load_str(
        "file-server.yaml",
        include_str!("../../rules/file-server.yaml"),
    );
    let server = project.servers.into_iter().next().unwrap();
    let rules =
        mcp_resolve_proxy::rules::ProxyRules::new(server, mcp_resolve_runtime::Dialect::Extension)
            .unwrap();
    let guard = mcp_resolve_proxy::guard::unkeyed();
    let quiet = Sinks::default();
    let mut group = c.benchmark_group("session-call");
    for (label, sinks) in [("telemetry off", &quiet), ("telemetry on", &exporting)] {
        let mut session = session(&rules, &guard, sinks);
        let mut id = 0u64;
        let mut out = Vec::new();
        group.bench_function(label, |b| {
            b.iter(|| {
                id += 1;
                let call = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"manage_files","arguments":{{"path":"notes.txt","action":"read"}}}}}}"#
                );
                let answer = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"hi"}}]}}}}"#
                );
                let now = clock();
                session.from_host(Input::Line(call), now, &mut out);
                session.from_server(Input::Line(answer), clock(), &mut out);
                apply(sinks, &mut out);
            })
        });
        if let Some(telemetry) = &sinks.telemetry {
            telemetry.flush();
        }
    }
    group.finish();
    if let Some(telemetry) = &exporting.telemetry {
        let _ = telemetry.shutdown();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

use mcp_resolve_proxy::guard::Sinks;
use mcp_resolve_proxy::machine::clock;
use mcp_resolve_proxy::session::{Config, Effect, Input, Session};

/// A session past `initialize`.
fn session<'s>(
    rules: &'s mcp_resolve_proxy::rules::ProxyRules,
    guard: &'s mcp_resolve_proxy::guard::Guard,
    sinks: &Sinks,
) -> Session<'s> {
    let config = Config {
        timeout: Some(Duration::from_secs(60)),
        max_message_bytes: 1 << 20,
        per_message: false,
        compare_listing: false,
        ids: mcp_resolve_proxy::machine::random_ids(),
        span_attributes: vec![("network.transport", "pipe".into())],
        shared: false,
        records: sinks.records(),
        traces: sinks.telemetry.is_some(),
        routes_answers: false,
        lists_by_scope: false,
    };
    let mut session = Session::new(rules, guard, config);
    let mut out = Vec::new();
    session.from_host(
        Input::Line(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#.into()),
        clock(),
        &mut out,
    );
    session.from_server(
        Input::Line(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}"#.into()),
        clock(),
        &mut out,
    );
    apply(sinks, &mut out);
    session
}

/// The side effects, as the relay applies them (the lines are dropped).
fn apply(sinks: &Sinks, out: &mut Vec<Effect>) {
    for effect in out.drain(..) {
        match (effect, &sinks.telemetry) {
            (Effect::Audit(record), _) => sinks.keep(record),
            (Effect::Span(span), Some(telemetry)) => telemetry.span(span),
            (Effect::Measure(measure), Some(telemetry)) => telemetry.measure(measure),
            (effect, _) => {
                black_box(effect);
            }
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = telemetry
}
criterion_main!(benches);
