//! What `--listen`'s SEP-2243 check adds to a request: reading the
//! envelope of a 2026-07-28 `tools/call` (what the listener does anyway),
//! beside the envelope and the check of its `MCP-Protocol-Version`,
//! `Mcp-Method` and `Mcp-Name` headers; and the same for a request of an
//! `initialize` session (headers only looked at). `cargo bench -p
//! mcp-resolve-benches --bench headers`; figures in docs/performance.md.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use http::{HeaderMap, HeaderValue};
use mcp_resolve_protocol::Envelope;
use mcp_resolve_proxy::listen::check_headers;

const MODERN: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"manage_files","arguments":{"path":"notes/todo.md","action":"read"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"progressToken":7}}}"#;
const LEGACY: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"manage_files","arguments":{"path":"notes/todo.md","action":"read"},"_meta":{"progressToken":7}}}"#;

fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.insert(*name, HeaderValue::from_static(value));
    }
    map
}

fn check(c: &mut Criterion) {
    let modern = headers(&[
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "manage_files"),
    ]);
    let legacy = headers(&[
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2025-11-25"),
        ("mcp-session-id", "0f0e0d0c0b0a09080706050403020100"),
    ]);
    let mut group = c.benchmark_group("sep2243");
    for (label, text, sent) in [
        ("2026-07-28", MODERN, &modern),
        ("session", LEGACY, &legacy),
    ] {
        group.bench_function(format!("{label} envelope"), |b| {
            b.iter(|| black_box(Envelope::of(black_box(text)).is_some()))
        });
        group.bench_function(format!("{label} envelope + check"), |b| {
            b.iter(|| {
                let message = Envelope::of(black_box(text)).unwrap();
                black_box(check_headers(black_box(sent), &message, None).is_ok())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, check);
criterion_main!(benches);
