//! What exporting an audit record to OpenTelemetry costs the proxy on a
//! call's path: `Telemetry::record` (a log record with the record's fields,
//! and the metrics) beside writing the same record to an audit log, in the
//! same run. The exporter's thread sends in the background (here to a
//! port nothing listens on: its failures cost the call nothing).

#![allow(clippy::unwrap_used)]

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
    let exporting = mcp_resolve_proxy::guard::Guard {
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
    let auditing = mcp_resolve_proxy::guard::Guard {
        audit: Some(mcp_resolve_proxy::guard::Audit::open(&dir.join("audit.jsonl")).unwrap()),
        ..Default::default()
    };
    let mut group = c.benchmark_group("audit-record");
    group.bench_function("audit log line (baseline)", |b| {
        b.iter(|| auditing.keep(black_box(&record)))
    });
    group.bench_function("OpenTelemetry log record and metrics", |b| {
        b.iter(|| exporting.keep(black_box(&record)))
    });
    group.finish();
    if let Some(telemetry) = &exporting.telemetry {
        let _ = telemetry.shutdown();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = telemetry
}
criterion_main!(benches);
