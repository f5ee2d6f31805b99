//! Pattern analysis cost: a 1,000-tool × 20-variant file (the shape of
//! `scripts/gen_large_rules.py`), and adversarial single tools — many
//! overlapping regexes, many numeric ranges, many boolean columns — next to
//! the cost of compiling the same file without analysis (parse, lower,
//! check), measured in the same run.
//! `cargo bench -p mcp-resolve-benches --bench analysis`; figures in docs/performance.md.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_resolve::internals::analysis::Analyzer;
use mcp_resolve::ir::Server;

const HEADER: &str = "version: 1\nserver: { name: bench, version: \"1\" }\ntools:\n";

/// The 1,000 × 20 file: an `action` enum, path prefixes, integer bounds and
/// a nested optional flag, as scripts/gen_large_rules.py writes it.
fn large(tools: usize, variants: usize) -> String {
    let mut out = String::from(HEADER);
    let actions: Vec<String> = (0..variants).map(|v| format!("a{v}")).collect();
    for t in 0..tools {
        out.push_str(&format!(
            "  - name: tool_{t}\n    inputSchema:\n      type: object\n      properties:\n        action: {{ type: string, enum: [{}] }}\n        path: {{ type: string }}\n        count: {{ type: integer, minimum: 0, maximum: 1000 }}\n        options: {{ type: object, properties: {{ force: {{ type: boolean }} }} }}\n      required: [action]\n    annotations: {{ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true }}\n    variants:\n",
            actions.join(", ")
        ));
        for v in 0..variants {
            let when = match v % 3 {
                0 => format!("{{ action: a{v}, path: {{ pattern: \"^/tmp/{v}\" }} }}"),
                1 => format!(
                    "[{{ action: a{v}, count: {{ maximum: {v} }} }}, {{ action: a{v}, options.force: {{ absent: true }} }}]"
                ),
                _ => format!("{{ action: a{v} }}"),
            };
            out.push_str(&format!("      - {{ name: v{v}, when: {when} }}\n"));
        }
    }
    out
}

fn one_tool(schema: &str, variants: impl Iterator<Item = String>) -> String {
    let mut out = format!("{HEADER}  - name: t\n    inputSchema: {schema}\n    variants:\n");
    for (i, when) in variants.enumerate() {
        out.push_str(&format!("      - {{ name: v{i}, when: {when} }}\n"));
    }
    out
}

fn adversarial() -> Vec<(&'static str, String)> {
    let path = "{ type: object, properties: { path: { type: string } }, required: [path] }";
    vec![
        (
            "10 overlapping regexes",
            one_tool(
                path,
                (0..10).map(|i| {
                    format!(
                        "{{ path: {{ pattern: \"^/data/(.*/)?k{}[a-z]*{}\" }} }}",
                        i % 10,
                        i / 10
                    )
                }),
            ),
        ),
        (
            "40 overlapping regexes (inconclusive)",
            one_tool(
                path,
                (0..40).map(|i| {
                    format!(
                        "{{ path: {{ pattern: \"^/data/(.*/)?k{}[a-z]*{}\" }} }}",
                        i % 10,
                        i / 10
                    )
                }),
            ),
        ),
        (
            "30 suffix regexes under 6 prefixes",
            one_tool(
                path,
                (0..30).map(|i| {
                    format!(
                        "{{ path: {{ pattern: \"^/srv/{}/.*\\\\.(log|txt|md{i})$\" }} }}",
                        i % 6
                    )
                }),
            ),
        ),
        (
            "200 overlapping numeric ranges",
            one_tool(
                "{ type: object, properties: { size: { type: number } }, required: [size] }",
                (0..200).map(|i| format!("'size >= {} && size < {}'", i * 3, i * 3 + 5)),
            ),
        ),
        (
            "66 variants over 12 boolean columns",
            one_tool(
                &format!(
                    "{{ type: object, properties: {{ {} }} }}",
                    (0..12)
                        .map(|i| format!("f{i}: {{ type: boolean }}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                (0..12).flat_map(|a| {
                    ((a + 1)..12).map(move |b| format!("{{ f{a}: true, f{b}: false }}"))
                }),
            ),
        ),
    ]
}

fn server(text: &str) -> Server {
    let project = mcp_resolve::load_str("bench.yaml", text);
    assert!(
        project
            .diagnostics
            .iter()
            .all(|d| d.severity != mcp_resolve::diagnostic::Severity::Error),
        "{:?}",
        project.diagnostics.first()
    );
    project.servers.into_iter().next().unwrap()
}

fn analyze(server: &Server) -> usize {
    let mut analyzer = Analyzer::new();
    server
        .tools
        .iter()
        .filter_map(|t| analyzer.analyze_tool(t))
        .filter(|a| a.is_exhaustive())
        .count()
}

fn large_file(c: &mut Criterion) {
    let text = large(1000, 20);
    let s = server(&text);
    let mut group = c.benchmark_group("analysis/1000x20");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("analysis only", |b| b.iter(|| analyze(black_box(&s))));
    group.bench_function("load_str (parse, check, analysis)", |b| {
        b.iter(|| mcp_resolve::load_str("bench.yaml", black_box(&text)))
    });
    group.finish();
}

fn hostile(c: &mut Criterion) {
    let mut group = c.benchmark_group("analysis/adversarial");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    for (label, text) in adversarial() {
        let s = server(&text);
        group.bench_function(label, |b| b.iter(|| analyze(black_box(&s))));
    }
    group.finish();
}

criterion_group!(benches, large_file, hostile);
criterion_main!(benches);
