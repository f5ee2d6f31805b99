//! Analyses kept between compilations of a changing text: an editor
//! re-checks a file on every keystroke, and most of its tools have not
//! changed since the last check.
//!
//! A tool is analysed again only when its checked IR differs from the one
//! its kept analysis was made from ([`Tool`]'s equality ignores spans, so a
//! tool that only moved is not analysed again). What is kept is the
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
    /// The tool as analysed (before derived annotations were filled in).
    tool: Tool,
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

/// A kept analysis and its trace, ready for the ledger.
pub(super) type Kept = (Option<ToolAnalysis>, Vec<Charge>);

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

    /// For each tool of `server`, the analysis kept for it if it is
    /// unchanged and was made within `limits`.
    pub(super) fn lookup(&self, server: &Server, limits: Limits) -> Vec<Option<Kept>> {
        let tools = self
            .servers
            .get(&server.name)
            .filter(|_| self.limits == Some(limits));
        server
            .tools
            .iter()
            .map(|tool| {
                let entry = tools?.get(&tool.name)?;
                (entry.tool == *tool).then(|| (entry.analysis.clone(), entry.trace.clone()))
            })
            .collect()
    }

    /// Keeps `server`'s analyses (each tool's, when it was made with the
    /// run's whole budget available), replacing what was kept for it — or,
    /// for a run that was `stopped` part way, beside it.
    pub(super) fn keep(
        &mut self,
        server: &Server,
        limits: Limits,
        made: Vec<Option<Kept>>,
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
            entries.clear();
        }
        for (tool, made) in server.tools.iter().zip(made) {
            if let Some((analysis, trace)) = made {
                let entry = Entry {
                    tool: tool.clone(),
                    analysis,
                    trace,
                };
                entries.insert(tool.name.clone(), entry);
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
