//! Pattern analysis (SPEC §6 and §3.2): which variants can never be selected,
//! whether every call matches some variant, and how tight the static
//! annotations could be.
//!
//! Each argument path the patterns mention becomes a column whose values are
//! split into regions (`domain`); each `when` becomes rows of region sets
//! (`matrix::dnf`); Maranget's usefulness search (`matrix::useful`)
//! answers every question:
//! - variant *i* is reachable iff one of its rows is useful against the rows
//!   of the variants before it;
//! - the tool is exhaustive iff the all-accepting row is useful against no
//!   row of any variant.
//!
//! Two kinds of rows join every matrix as if they were earlier variants:
//! rows describing impossible combinations (`options.force` present while
//! `options` is absent or not an object; a required property missing from a
//! present object), so no witness needs them.
//!
//! Soundness. The domains over-approximate the inputSchema ([`schema`]), so
//! "unreachable" and "exhaustive" are proofs. "Non-exhaustive" is only claimed
//! with an argument object that the real validator accepts and the resolver's
//! evaluator sends to no variant. Whenever a size limit or the search budget
//! is hit, the tool's analysis is *inconclusive*: nothing is claimed, and
//! derived static annotations keep the core defaults.

mod cache;
mod domain;
mod matrix;
mod report;
mod strings;
mod translate;

pub use cache::AnalysisCache;
pub use report::{report, summary};

use std::collections::HashMap;

/// A hash map for the analysis's hot loops (the string automata's product
/// states, the regions seen): a fast fixed-seed hash instead of SipHash, as
/// nothing hashed comes from outside the rules being analysed and nothing
/// depends on the maps' order.
pub(crate) type FastMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use mcp_resolve_runtime::ArgumentValidator;
use serde_json::{Map, Value};

use crate::diagnostic::{Diagnostic, Severity};
use crate::eval::{Regexes, eval_cond, eval_pred};
use crate::hints::tightest_bound;
use crate::ir::{Cond, Pred, Server, Tool};
use crate::schema;
use domain::{Column, Env};
use matrix::{Atoms, Bits, Budget, Charge, Found, Ledger, Row};

pub use strings::DFA_SIZE_LIMIT;

/// Why an analysis gave up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inconclusive(pub String);

/// The bounds on one tool's analysis (and on a whole run's). Hitting one
/// makes a tool `analysis-inconclusive`, never a wrong claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Regions one argument may split into.
    pub max_regions: usize,
    /// Rows (alternatives) one condition may expand to.
    pub max_rows: usize,
    /// Product-automaton states the string search of one argument may visit.
    pub max_string_states: usize,
    /// Search steps per tool.
    pub budget: u64,
    /// Work units for a whole run: search steps, string-automaton transitions,
    /// and DFA construction (one unit per byte built, the size limit for a
    /// failed build).
    pub run_budget: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_regions: 4096,
            max_rows: 2048,
            max_string_states: 50_000,
            budget: 1_000_000,
            run_budget: 200_000_000,
        }
    }
}

/// Concrete JSON values, one for each class of values the given schemas tell
/// apart: every combination of "satisfies / does not satisfy" the schemas
/// that some value has (as far as the domains model their keywords; others
/// are over-approximated), with strings from the product of the patterns'
/// automata and numbers at and between every bound. Each schema comes with
/// the root its `$ref`s resolve against. Used to search for calls two
/// signatures resolve differently (`mcp-resolve diff`); callers check every
/// value with a real validator.
pub fn distinguishing_values(
    schemas: &[(&Value, &Value)],
    limits: Limits,
) -> Result<Vec<Value>, Inconclusive> {
    let mut env = Env {
        limits,
        ..Env::default()
    };
    let mut budget = Budget::new(limits.budget, limits.run_budget);
    let preds: Vec<Pred> = schemas
        .iter()
        .map(|(schema, root)| translate::to_pred(schema, root, true, 0))
        .collect();
    let refs: Vec<&Pred> = preds.iter().collect();
    let any = Value::Bool(true);
    let column = env.column(&any, &[], &refs, &mut budget)?;
    Ok(column.regions.into_iter().flatten().collect())
}

/// The smallest value the analysis can build that `schema` accepts (best
/// effort: the caller validates it).
pub fn minimal_value(schema: &Value, limits: Limits) -> Option<Value> {
    let mut env = Env {
        limits,
        ..Env::default()
    };
    let mut budget = Budget::new(limits.budget, limits.run_budget);
    env.minimal(schema, schema, 0, &mut budget).ok().flatten()
}

/// How one variant fares.
#[derive(Clone, Debug, PartialEq)]
pub enum Reach {
    /// Some call resolves to it.
    Reachable,
    /// Every call it matches resolves to an earlier variant.
    Unreachable {
        /// The earlier variants its calls resolve to (indices, in order).
        covered_by: Vec<usize>,
        /// A call it matches, and the earlier variant that call resolves to.
        example: Option<(Value, usize)>,
    },
    /// Its condition holds for no valid argument object.
    Empty,
}

/// Whether every valid call matches some variant.
#[derive(Clone, Debug, PartialEq)]
pub enum Coverage {
    /// Proven.
    Exhaustive,
    /// This valid argument object matches no variant.
    Missing(Value),
}

/// The analysis of one resolvable tool.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolAnalysis {
    /// Completed.
    Done {
        /// Per variant, in order.
        reach: Vec<Reach>,
        /// Exhaustiveness.
        coverage: Coverage,
    },
    /// A limit was hit, or no checked example could be built.
    Inconclusive(String),
}

impl ToolAnalysis {
    /// Whether every call is proven to match a variant.
    pub fn is_exhaustive(&self) -> bool {
        matches!(
            self,
            ToolAnalysis::Done {
                coverage: Coverage::Exhaustive,
                ..
            }
        )
    }
}

/// Analyzes tools; reuse one for a server so patterns compile once.
pub struct Analyzer {
    env: Env,
    run_left: u64,
}

impl Default for Analyzer {
    fn default() -> Self {
        Analyzer::with_limits(Limits::default())
    }
}

impl Analyzer {
    /// An analyzer with the default limits.
    pub fn new() -> Analyzer {
        Analyzer::default()
    }

    /// An analyzer with other limits.
    pub fn with_limits(limits: Limits) -> Analyzer {
        Analyzer {
            env: Env {
                limits,
                ..Env::default()
            },
            run_left: limits.run_budget,
        }
    }

    /// Analyzes one resolvable tool (`None` for a plain static tool).
    pub fn analyze_tool(&mut self, tool: &Tool) -> Option<ToolAnalysis> {
        if !tool.resolvable {
            return None;
        }
        let mut budget = Budget::new(self.env.limits.budget, self.run_left);
        let result = self.try_tool(tool, &mut budget);
        self.run_left = budget.run_left();
        Some(match result {
            Ok(a) => a,
            Err(Inconclusive(why)) => ToolAnalysis::Inconclusive(why),
        })
    }

    /// [`Analyzer::analyze_tool`] apart from the run: within `cap` units of
    /// the run's work, with what it charged the run written down for a
    /// [`Ledger`] to settle in tool order.
    fn analyze_apart(&mut self, tool: &Tool, cap: u64) -> (Option<ToolAnalysis>, Vec<Charge>) {
        if !tool.resolvable {
            return (None, Vec::new());
        }
        let mut budget = Budget::traced(self.env.limits.budget, cap);
        let result = self.try_tool(tool, &mut budget);
        let analysis = match result {
            Ok(a) => a,
            Err(Inconclusive(why)) => ToolAnalysis::Inconclusive(why),
        };
        (Some(analysis), budget.into_trace())
    }

    #[expect(
        clippy::too_many_lines,
        reason = "the analysis's steps in order, each spending the same budget and feeding the next"
    )]
    fn try_tool(&mut self, tool: &Tool, budget: &mut Budget) -> Result<ToolAnalysis, Inconclusive> {
        let validator = ArgumentValidator::new(&tool.input_schema)
            .map_err(|e| Inconclusive(format!("the inputSchema does not compile: {e}")))?;
        let root = &tool.input_schema;
        let limits = self.env.limits;

        // Columns: every mentioned path, parents before children.
        let mut paths: Vec<Vec<String>> = Vec::new();
        let mut preds: HashMap<Vec<String>, Vec<&Pred>> = HashMap::new();
        for v in &tool.variants {
            v.when.walk(&mut |path, pred| {
                for end in 1..=path.segments.len() {
                    let prefix = path.segments[..end].to_vec();
                    if !paths.contains(&prefix) {
                        paths.push(prefix);
                    }
                }
                let entry = preds.entry(path.segments.clone()).or_default();
                if let Some(p) = pred {
                    entry.push(p);
                }
            });
        }
        paths.sort_by_key(Vec::len);
        let mut columns = Vec::new();
        for path in &paths {
            let ps = preds.get(path).map(Vec::as_slice).unwrap_or_default();
            columns.push(self.env.column(root, path, ps, budget)?);
        }

        let base = self
            .env
            .minimal(root, root, 0, budget)?
            .unwrap_or_else(|| Value::Object(Map::new()));
        let mut atoms = ToolAtoms {
            widths: columns.iter().map(|c| c.regions.len()).collect(),
            columns: &columns,
            regexes: &self.env.regexes,
        };
        let mut rows: Vec<Vec<Row>> = Vec::new();
        for v in &tool.variants {
            rows.push(matrix::dnf(
                &v.when,
                false,
                &mut atoms,
                budget,
                limits.max_rows,
            )?);
        }
        let impossible = impossible_rows(root, &columns, &atoms.widths);

        let regexes = &self.env.regexes;
        let check = Checker {
            tool,
            validator: &validator,
            regexes,
            columns: &columns,
            root,
        };

        let mut reach = Vec::new();
        for i in 0..tool.variants.len() {
            let earlier: Vec<&Row> = impossible
                .iter()
                .chain(rows[..i].iter().flatten())
                .collect();
            if any_useful(&earlier, &rows[i], budget)? {
                reach.push(Reach::Reachable);
                continue;
            }
            let alone: Vec<&Row> = impossible.iter().collect();
            if !any_useful(&alone, &rows[i], budget)? {
                reach.push(Reach::Empty);
                continue;
            }
            // The earlier variants that take its calls: k takes some call
            // when a call matching both reaches k (no variant before k).
            let mut cover = Vec::new();
            for k in 0..i {
                // The pairwise product is paid for like any other row built.
                budget.spend((rows[k].len() * rows[i].len()) as u64)?;
                let both: Vec<Row> = rows[k]
                    .iter()
                    .flat_map(|a| {
                        rows[i].iter().map(move |b| -> Row {
                            a.iter().zip(b).map(|(x, y)| x.and(y)).collect()
                        })
                    })
                    .filter(|r: &Row| r.iter().all(|c| !c.is_empty()))
                    .collect();
                let before: Vec<&Row> = impossible
                    .iter()
                    .chain(rows[..k].iter().flatten())
                    .collect();
                if any_useful(&before, &both, budget)? {
                    cover.push(k);
                }
            }
            let mut example = None;
            for row in &rows[i] {
                let found = matrix::useful(&alone, row, budget, &mut |choice| match check
                    .build(&base, choice)
                {
                    Some(obj)
                        if check.valid(&obj)
                            && eval_cond(&tool.variants[i].when, &obj, regexes) =>
                    {
                        match check.first_match(&obj) {
                            Some(j) if j < i => {
                                example = Some((obj, j));
                                true
                            }
                            _ => false,
                        }
                    }
                    _ => false,
                })?;
                if matches!(found, Found::Witness) {
                    break;
                }
            }
            reach.push(Reach::Unreachable {
                covered_by: cover,
                example,
            });
        }

        let all: Vec<&Row> = impossible.iter().chain(rows.iter().flatten()).collect();
        let everything: Row = atoms.widths.iter().map(|&n| Bits::full(n)).collect();
        let mut missing = None;
        let found = matrix::useful(&all, &everything, budget, &mut |choice| match check
            .build(&base, choice)
        {
            Some(obj) if check.valid(&obj) && check.first_match(&obj).is_none() => {
                missing = Some(obj);
                true
            }
            _ => false,
        })?;
        let coverage = match (found, missing) {
            (Found::Witness, Some(obj)) => Coverage::Missing(obj),
            (Found::Nothing { rejected: 0 }, _) => Coverage::Exhaustive,
            _ => {
                return Err(Inconclusive(
                    "calls matching no variant may exist, but none could be built that the inputSchema accepts"
                        .to_string(),
                ));
            }
        };
        Ok(ToolAnalysis::Done { reach, coverage })
    }
}

fn any_useful(matrix: &[&Row], rows: &[Row], budget: &mut Budget) -> Result<bool, Inconclusive> {
    for row in rows {
        if matches!(
            matrix::useful(matrix, row, budget, &mut |_| true)?,
            Found::Witness
        ) {
            return Ok(true);
        }
    }
    Ok(false)
}

struct ToolAtoms<'a> {
    widths: Vec<usize>,
    columns: &'a [Column],
    regexes: &'a Regexes,
}

impl Atoms for ToolAtoms<'_> {
    fn widths(&self) -> &[usize] {
        &self.widths
    }

    fn atom(&mut self, cond: &Cond) -> Result<(usize, Bits), Inconclusive> {
        let (path, pred) = match cond {
            Cond::Present(p) => (p, None),
            Cond::Test(p, pred) => (p, Some(pred)),
            _ => return Err(Inconclusive("internal: not an atom".to_string())),
        };
        let col = self
            .columns
            .iter()
            .position(|c| c.path == path.segments)
            .ok_or_else(|| Inconclusive(format!("internal: no column for `{path}`")))?;
        let column = &self.columns[col];
        let mut bits = Bits::empty(column.regions.len());
        for (i, region) in column.regions.iter().enumerate() {
            let holds = match (region, pred) {
                (None, _) => false,
                (Some(_), None) => true,
                (Some(v), Some(p)) => eval_pred(p, v, self.regexes),
            };
            if holds {
                bits.insert(i);
            }
        }
        Ok((col, bits))
    }
}

/// Rows for combinations no argument object has.
fn impossible_rows(root: &Value, columns: &[Column], widths: &[usize]) -> Vec<Row> {
    let mut out = Vec::new();
    for (c, col) in columns.iter().enumerate() {
        let Some((last, parent_path)) = col.path.split_last() else {
            continue;
        };
        if parent_path.is_empty() {
            continue;
        }
        let Some(p) = columns.iter().position(|x| x.path == parent_path) else {
            continue;
        };
        let full = || -> Row { widths.iter().map(|&n| Bits::full(n)).collect() };
        let select = |column: &Column, f: &dyn Fn(&Option<Value>) -> bool| {
            let mut b = Bits::empty(column.regions.len());
            column
                .regions
                .iter()
                .enumerate()
                .filter(|(_, r)| f(r))
                .for_each(|(i, _)| b.insert(i));
            b
        };
        let parent = &columns[p];
        // A child is present only inside a present object.
        let mut row = full();
        row[p] = select(parent, &|r| !r.as_ref().is_some_and(Value::is_object));
        row[c] = select(col, &|r| r.is_some());
        if row.iter().all(|b| !b.is_empty()) {
            out.push(row);
        }
        // A present object has every required property.
        let parent_schema = schema::subschema(root, parent_path);
        if parent_schema.is_some_and(|s| schema::requires(s, last)) {
            let mut row = full();
            row[p] = select(parent, &|r| r.as_ref().is_some_and(Value::is_object));
            row[c] = select(col, &|r| r.is_none());
            if row.iter().all(|b| !b.is_empty()) {
                out.push(row);
            }
        }
    }
    out
}

/// Builds and checks candidate argument objects.
struct Checker<'a> {
    tool: &'a Tool,
    validator: &'a ArgumentValidator,
    regexes: &'a Regexes,
    columns: &'a [Column],
    root: &'a Value,
}

impl Checker<'_> {
    /// The argument object for one region per column, on top of `base` (the
    /// smallest valid object).
    fn build(&self, base: &Value, choice: &[usize]) -> Option<Value> {
        let mut obj = base.clone();
        for (col, &r) in self.columns.iter().zip(choice) {
            let (last, parents) = col.path.split_last()?;
            let pointer: String = parents
                .iter()
                .map(|seg| format!("/{}", seg.replace('~', "~0").replace('/', "~1")))
                .collect();
            let target = obj.pointer_mut(&pointer).and_then(Value::as_object_mut);
            match &col.regions[r] {
                None => {
                    if let Some(m) = target {
                        m.remove(last);
                    }
                }
                Some(v) => {
                    target?.insert(last.clone(), v.clone());
                }
            }
        }
        Some(in_schema_order(obj, self.root, self.root, 0))
    }

    fn valid(&self, obj: &Value) -> bool {
        // Validity only: most candidates are invalid, and their errors are
        // not wanted (collecting them is most of the cost).
        self.validator.is_valid(obj)
    }

    fn first_match(&self, obj: &Value) -> Option<usize> {
        self.tool
            .variants
            .iter()
            .position(|v| eval_cond(&v.when, obj, self.regexes))
    }
}

/// `value` with object keys in the order the schema's `properties` lists them,
/// so examples read like the inputSchema.
fn in_schema_order(value: Value, sub: &Value, root: &Value, depth: u32) -> Value {
    let Value::Object(mut map) = value else {
        return value;
    };
    let sub = schema::deref(root, sub);
    let Some(props) = sub.get("properties").and_then(Value::as_object) else {
        return Value::Object(map);
    };
    if depth > 32 {
        return Value::Object(map);
    }
    let mut out = Map::new();
    for (name, prop) in props {
        if let Some(v) = map.remove(name) {
            out.insert(name.clone(), in_schema_order(v, prop, root, depth + 1));
        }
    }
    out.extend(map);
    Value::Object(out)
}

/// Runs the analysis on every resolvable tool of `server`, reports its
/// findings, and tightens derived static annotations of exhaustive tools.
pub fn analyze_server(server: &Server, diags: &mut Vec<Diagnostic>) -> Vec<Option<ToolAnalysis>> {
    analyze_server_with(server, Limits::default(), 0, diags)
}

/// [`analyze_server`] within `limits`, on `jobs` threads (0: every core).
///
/// Tools are analysed apart, each thread with its own caches, and the run's
/// budget is settled in tool order by a ledger: the results are those of
/// one [`Analyzer`] going through the tools in order, whatever the number of
/// threads. Once the ledger finds the budget spent, tools not yet started
/// get no run budget at all (they would find none left), so a file of many
/// hostile tools still ends in bounded time.
pub fn analyze_server_with(
    server: &Server,
    limits: Limits,
    jobs: usize,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Option<ToolAnalysis>> {
    analyze_server_cached(server, limits, jobs, diags, None)
}

/// [`analyze_server_with`], taking the analyses of unchanged tools from
/// `cache` and keeping this run's there. The results are the same as
/// without a cache (see [`AnalysisCache`]).
pub fn analyze_server_cached(
    server: &Server,
    limits: Limits,
    jobs: usize,
    diags: &mut Vec<Diagnostic>,
    cache: Option<&mut AnalysisCache>,
) -> Vec<Option<ToolAnalysis>> {
    analyze_server_until(server, limits, jobs, diags, cache, None).unwrap_or_default()
}

/// Asked before each tool's analysis: `true` stops the run (an editor's
/// newer text arrived).
pub type Stop<'a> = &'a (dyn Fn() -> bool + Sync);

/// [`analyze_server_cached`], stopped when `stop` says so before a tool:
/// then `None`, nothing reported, and the analyses finished so far kept in
/// `cache` beside those it had (they are a fresh run's all the same).
pub fn analyze_server_until(
    server: &Server,
    limits: Limits,
    jobs: usize,
    diags: &mut Vec<Diagnostic>,
    cache: Option<&mut AnalysisCache>,
    stop: Option<Stop<'_>>,
) -> Option<Vec<Option<ToolAnalysis>>> {
    struct Settling {
        ledger: Ledger,
        /// Traces of tools done before the ones still running, by index.
        waiting: HashMap<usize, Vec<Charge>>,
        /// Whether each tool, in order, was paid for.
        paid: Vec<bool>,
    }
    let settling = Mutex::new(Settling {
        ledger: Ledger::new(limits.run_budget),
        waiting: HashMap::new(),
        paid: Vec::with_capacity(server.tools.len()),
    });
    let spent = AtomicBool::new(false);
    let (keys, kept): (Vec<String>, Vec<_>) = match &cache {
        Some(cache) => cache.lookup(server, limits).into_iter().unzip(),
        None => (Vec::new(), Vec::new()),
    };
    let keeping = cache.is_some();
    let reused = AtomicUsize::new(0);
    let analyses = crate::par::map_with(
        &server.tools,
        crate::par::threads(jobs),
        Some(crate::par::WORK_STACK),
        || Analyzer::with_limits(limits),
        |analyzer, i, tool| {
            if stop.is_some_and(|stop| stop()) {
                return None;
            }
            let cap = if spent.load(Ordering::Acquire) {
                0
            } else {
                limits.run_budget
            };
            // A kept analysis was made with the whole budget available; a
            // tool started after the run's budget is spent gets none.
            let ((analysis, trace), keep) = match kept.get(i) {
                Some(Some(kept)) if cap != 0 => {
                    reused.fetch_add(1, Ordering::Relaxed);
                    (kept.clone(), Some(cache::Made::Kept))
                }
                _ => {
                    let (analysis, trace) = analyzer.analyze_apart(tool, cap);
                    let keep = (keeping && cap != 0)
                        .then(|| cache::Made::New(analysis.clone(), trace.clone()));
                    ((analysis, trace), keep)
                }
            };
            let mut guard = settling.lock().unwrap_or_else(|e| e.into_inner());
            let s = &mut *guard;
            s.waiting.insert(i, trace);
            while let Some(trace) = s.waiting.remove(&s.paid.len()) {
                let paid = s.ledger.settle(&trace).is_ok();
                s.paid.push(paid);
            }
            if s.ledger.run_left() == 0 {
                spent.store(true, Ordering::Release);
            }
            Some((analysis, keep))
        },
    );
    // A panic is a bug: raise it here, as a loop would have (before the
    // ledger, which stops at the tool that never finished).
    let analyses: Vec<_> = analyses
        .into_iter()
        .map(|analysis| analysis.unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
        .collect();
    let stopped = analyses.iter().any(Option::is_none);
    let (analyses, made): (Vec<Option<ToolAnalysis>>, Vec<_>) = analyses
        .into_iter()
        .map(|done| done.unwrap_or((None, None)))
        .unzip();
    if let Some(cache) = cache {
        cache.keep(server, limits, made, keys, reused.into_inner(), stopped);
    }
    if stopped {
        return None;
    }
    let paid = settling
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .paid;
    Some(reported(server, analyses, paid, diags))
}

/// The run's analyses, in tool order, with the ledger's verdict applied (a
/// tool the run's budget did not pay for is inconclusive), each reported.
fn reported(
    server: &Server,
    analyses: Vec<Option<ToolAnalysis>>,
    paid: Vec<bool>,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Option<ToolAnalysis>> {
    let mut results = Vec::with_capacity(analyses.len());
    for ((analysis, tool), paid) in analyses.into_iter().zip(&server.tools).zip(paid) {
        let analysis = match analysis {
            Some(_) if !paid => Some(ToolAnalysis::Inconclusive(matrix::run_spent().0)),
            other => other,
        };
        if let Some(a) = &analysis {
            report(&server.hints, tool, a, diags);
        }
        results.push(analysis);
    }
    results
}

/// The finishing step after analysis: a tool that leaves its static
/// annotations to be derived gets the tightest bound of its variants when
/// the analysis proved them exhaustive (no call falls through to the
/// defaults). The analysis itself only states facts; this is the one place
/// that turns them into annotations.
pub fn derive_annotations(server: &mut Server, analyses: &[Option<ToolAnalysis>]) {
    let hints = server.hints.clone();
    for (tool, analysis) in server.tools.iter_mut().zip(analyses) {
        let exhaustive = analysis.as_ref().is_some_and(ToolAnalysis::is_exhaustive);
        if tool.written_annotations.is_none() && exhaustive && !tool.variants.is_empty() {
            tool.annotations = tightest_bound(&hints, tool.variants.iter().map(|v| &v.annotations));
        }
    }
}

/// Whether a project's diagnostics let the analysis run (no errors so far).
pub fn should_run(diags: &[Diagnostic]) -> bool {
    !diags.iter().any(|d| d.severity == Severity::Error)
}
