//! Analyses kept between compilations of a changing text: an editor
//! re-checks a file on every keystroke, and most of its tools have not
//! changed since the last check.
//!
//! A tool is analysed again only when its checked IR differs from the one
//! its kept analysis was made from: the kept analysis carries the SHA-256
//! of the IR printed without spans (so a tool that only moved is not
//! analysed again), not a copy of the IR — a copy per changed tool, made
//! at every edit among the edit's short-lived allocations, would scatter
//! long-lived objects over the heap and keep its pages resident. What is kept is the
//! analysis *and* what it charged the run's budget: the ledger settles kept
//! and new traces alike, in tool order, so the verdicts are those of a run
//! without the cache, to the unit. The diagnostics are written afresh from
//! the kept facts, at the tool's current spans.

use std::collections::HashMap;

use super::matrix::Charge;
use super::{Limits, ToolAnalysis};
use crate::ir::{Server, Tool};

/// One tool's kept analysis.
struct Entry {
    /// The [`key`] of the tool as analysed (before derived annotations
    /// were filled in).
    key: String,
    analysis: Option<ToolAnalysis>,
    trace: Vec<Charge>,
}

/// Analyses of the tools last analysed, by server and tool name: only the
/// last run's tools are kept, so the cache holds at most one file's worth.
#[derive(Default)]
pub struct AnalysisCache {
    /// The limits the kept analyses were made within.
    limits: Option<Limits>,
    servers: HashMap<String, HashMap<String, Entry>>,
    /// How many tools the last run took from the cache.
    reused: usize,
}

/// What identifies a tool's checked IR: the SHA-256 of its `{:?}` text
/// without spans (every field but the spans). A tool keeps its key only
/// while it prints the same, so a kept analysis is only ever reused for a
/// tool equal to the one analysed (but for a hash collision); equal tools
/// that print apart (a number written `0.0` and then `-0.0`) are merely
/// analysed again.
fn key(tool: &Tool) -> String {
    let text = crate::ir::without_spans(|| format!("{tool:?}"));
    mcp_resolve_host::signature::fingerprint_of_parts([text.as_bytes()])
}

/// A kept analysis and its trace, ready for the ledger.
pub(super) type Kept = (Option<ToolAnalysis>, Vec<Charge>);

/// What a run did with a tool, for the cache.
pub(super) enum Made {
    /// Took the kept analysis: the entry stays as it is.
    Kept,
    /// Analysed it, with the run's whole budget available.
    New(Option<ToolAnalysis>, Vec<Charge>),
}

impl AnalysisCache {
    /// An empty cache.
    pub fn new() -> AnalysisCache {
        AnalysisCache::default()
    }

    /// How many tools' analyses are kept.
    pub fn len(&self) -> usize {
        self.servers.values().map(HashMap::len).sum()
    }

    /// How many tools' analyses the last run took from the cache instead
    /// of analysing them again.
    pub fn reused(&self) -> usize {
        self.reused
    }

    /// Whether no analysis is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// For each tool of `server`, its key and the analysis kept for it if
    /// it is unchanged and was made within `limits`.
    pub(super) fn lookup(&self, server: &Server, limits: Limits) -> Vec<(String, Option<Kept>)> {
        let tools = self
            .servers
            .get(&server.name)
            .filter(|_| self.limits == Some(limits));
        server
            .tools
            .iter()
            .map(|tool| {
                let key = key(tool);
                let kept = tools
                    .and_then(|tools| tools.get(&tool.name))
                    .filter(|entry| entry.key == key)
                    .map(|entry| (entry.analysis.clone(), entry.trace.clone()));
                (key, kept)
            })
            .collect()
    }

    /// Keeps `server`'s analyses: the entries the run took as they are,
    /// the tools it analysed (with the run's whole budget available) anew;
    /// the others are forgotten — unless the run was `stopped` part way,
    /// when what it did not reach stays as it was. An edit that changes one
    /// tool replaces one entry (no allocation for the others).
    pub(super) fn keep(
        &mut self,
        server: &Server,
        limits: Limits,
        made: Vec<Option<Made>>,
        keys: Vec<String>,
        reused: usize,
        stopped: bool,
    ) {
        self.reused = reused;
        if self.limits != Some(limits) {
            self.servers.clear();
            self.limits = Some(limits);
        }
        let entries = self.servers.entry(server.name.clone()).or_default();
        if !stopped {
            // Tools the server no longer has.
            let names: std::collections::HashSet<&str> =
                server.tools.iter().map(|t| t.name.as_str()).collect();
            entries.retain(|name, _| names.contains(name.as_str()));
        }
        for ((tool, made), key) in server.tools.iter().zip(made).zip(keys) {
            match made {
                Some(Made::New(analysis, trace)) => {
                    let entry = Entry {
                        key,
                        analysis,
                        trace,
                    };
                    entries.insert(tool.name.clone(), entry);
                }
                Some(Made::Kept) => {}
                // Not reached before the stop: as it was.
                None if stopped => {}
                // Analysed after the run's budget was spent: not kept.
                None => {
                    entries.remove(&tool.name);
                }
            }
        }
    }

    /// Forgets the servers not among `names` (a file that no longer
    /// declares them).
    pub(crate) fn retain(&mut self, names: &[&str]) {
        self.servers
            .retain(|name, _| names.contains(&name.as_str()));
    }
}
