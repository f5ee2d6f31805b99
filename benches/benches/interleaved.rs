//! The per-call paths of `benches/resolve.rs`, measured interleaved:
//! each round times a batch of calls of every contender in turn, and the
//! fastest batch of each is kept. A busy moment of the machine then slows
//! one batch of every contender rather than all of one contender's, so the
//! ratios to the hand-written baseline are steadier than criterion's (which
//! runs each benchmark to its end before starting the next).
//!
//! `cargo bench -p mcp-resolve-benches --bench interleaved [-- ROUNDS]`
//! prints a table; figures in docs/performance.md.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::hint::black_box;
use std::time::Instant;

use mcp_resolve_benches::{file_server, hand};
use mcp_resolve_runtime::Dialect;
use serde_json::{Map, Value, json};

/// Calls per batch.
const BATCH: u32 = 20_000;

/// A contender: a batch of its calls, timed (ns per call). The loop is
/// compiled into each contender's batch, so the only indirect call is the
/// one per batch.
struct Contender<'a> {
    group: &'static str,
    label: &'static str,
    batch: Box<dyn Fn() -> f64 + 'a>,
    best: f64,
}

fn contender<'a, R>(
    group: &'static str,
    label: &'static str,
    call: impl Fn() -> R + 'a,
) -> Contender<'a> {
    Contender {
        group,
        label,
        batch: Box::new(move || {
            let start = Instant::now();
            for _ in 0..BATCH {
                black_box(call());
            }
            start.elapsed().as_secs_f64() * 1e9 / f64::from(BATCH)
        }),
        best: f64::INFINITY,
    }
}

fn main() {
    let rounds: u32 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(300);
    let calls: Vec<(&'static str, Value)> = vec![
        ("read", json!({"path": "notes.md", "action": "read"})),
        (
            "append",
            json!({"path": "notes.md", "action": "append", "content": "x"}),
        ),
        ("delete", json!({"path": "notes.md", "action": "delete"})),
    ];
    let maps: Vec<Map<String, Value>> = calls
        .iter()
        .map(|(_, v)| v.as_object().unwrap().clone())
        .collect();

    let mut contenders: Vec<Contender<'_>> = Vec::new();
    for ((label, args), map) in calls.iter().zip(&maps) {
        // The same answers first: a ratio is only meaningful if they agree.
        let text = file_server::resolve_json("manage_files", args, Dialect::Extension).unwrap();
        assert_eq!(hand::full("manage_files", args), Some(text.as_ref()));
        assert_eq!(hand::matching("manage_files", map), Some(text.as_ref()));
        contenders.extend([
            contender("matching", label, move || {
                hand::matching(black_box("manage_files"), black_box(map))
            }),
            contender("matching", label, move || {
                file_server::resolve_validated(black_box("manage_files"), black_box(map))
                    .map(|r| r.result_json(Dialect::Extension))
            }),
            contender("full", label, move || {
                hand::full(black_box("manage_files"), black_box(args))
            }),
            contender("full", label, move || {
                file_server::resolve_json(
                    black_box("manage_files"),
                    black_box(args),
                    Dialect::Extension,
                )
            }),
        ]);
    }

    for _ in 0..rounds {
        for c in &mut contenders {
            c.best = c.best.min((c.batch)());
        }
    }

    println!("fastest batch of {BATCH} calls, {rounds} rounds, ns per call");
    println!();
    println!("| path | call | hand-written | generated | ratio |");
    println!("|---|---|---:|---:|---:|");
    // In pairs: hand-written, then generated.
    for pair in contenders.chunks(2) {
        let [hand, generated] = pair else { continue };
        println!(
            "| {} | {} | {:.2} | {:.2} | {:.2}× |",
            hand.group,
            hand.label,
            hand.best,
            generated.best,
            generated.best / hand.best
        );
    }
}
