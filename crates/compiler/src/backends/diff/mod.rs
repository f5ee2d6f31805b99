//! `mcp-resolve diff`: what changed between two signature documents, as a
//! host that pinned the old one sees it.
//!
//! A change is **widening** when the new signature lets more through than the
//! old one did: a tool added, a scope added, an `inputSchema` that admits a
//! call the old one refused, or a call that now resolves to annotations
//! further from the worst case (a hint moved against the conservative order).
//! The opposite changes are **narrowing**.
//!
//! Changes to static annotations and scopes are read off the documents. What
//! calls resolve to is compared on concrete argument objects: for every
//! argument, [`crate::analysis::distinguishing_values`] gives one value per class of
//! values the two signatures' schemas and patterns tell apart (strings from
//! the product of the patterns' automata, numbers at and around every bound,
//! nested objects field by field); the objects built from them are resolved
//! under both documents with the host-side recipe of docs/signature.md and a
//! real JSON Schema validator. Every widening of what calls resolve to is
//! reported with such an object as its witness, so a reported widening is
//! never a guess; a change to the static set has one when some call falls
//! through to it and resolves otherwise under the old document. A change the
//! search finds no call for has no effect only with a proof, and is
//! undecided otherwise.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde_json::{Map, Value, json};

use mcp_resolve_host::signature::{SignatureDocument, SignatureTool};
use mcp_resolve_host::{Signature, SignatureError, SignedTool, SignedVariant};
use mcp_resolve_runtime::Annotations;
use mcp_resolve_runtime::hints::{self, BUILTIN_HINTS};
use serde::Deserialize;

mod search;
pub mod text;

use search::Search;

mod proof;

/// The direction of a change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Direction {
    /// The new signature lets more through.
    Widening,
    /// The new signature lets less through.
    Narrowing,
    /// The documents differ, and it is proved that no call is treated
    /// differently (only descriptive keywords changed, say).
    Neutral,
    /// The documents differ and the search found no call that tells them
    /// apart, but cannot show that none exists. Counted against the new
    /// document like a widening unless the user allows it.
    Undecided,
}

impl Direction {
    /// The word used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Widening => "widening",
            Direction::Narrowing => "narrowing",
            Direction::Neutral => "no-effect",
            Direction::Undecided => "undecided",
        }
    }
}

/// One classified change.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// The tool it concerns.
    pub tool: String,
    /// Widening, narrowing, or neither.
    pub direction: Direction,
    /// A stable kind: `tool-added`, `tool-removed`, `input-schema`,
    /// `static-annotation`, `static-scope`, `resolved-annotation`,
    /// `resolved-scope`, `variants`.
    pub kind: &'static str,
    /// What changed, in words.
    pub message: String,
    /// An argument object showing the change: for a widening, a call the new
    /// signature admits or resolves less conservatively than the old one.
    pub witness: Option<Value>,
    /// Structured details (hint, old and new values, variants).
    pub details: Map<String, Value>,
}

/// The result of comparing two signatures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Diff {
    /// Every change, tool by tool in the new document's order.
    pub changes: Vec<Change>,
}

impl Diff {
    /// Whether any change widens.
    pub fn has_widening(&self) -> bool {
        self.changes
            .iter()
            .any(|c| c.direction == Direction::Widening)
    }

    /// Whether the search could not decide some change.
    pub fn has_undecided(&self) -> bool {
        self.changes
            .iter()
            .any(|c| c.direction == Direction::Undecided)
    }

    /// How many changes go each way.
    pub fn count(&self, direction: Direction) -> usize {
        self.changes
            .iter()
            .filter(|c| c.direction == direction)
            .count()
    }

    /// The JSON report.
    pub fn to_json(&self) -> Value {
        let changes: Vec<Value> = self
            .changes
            .iter()
            .map(|c| {
                let mut m = Map::new();
                m.insert("tool".into(), json!(c.tool));
                m.insert("direction".into(), json!(c.direction.as_str()));
                m.insert("kind".into(), json!(c.kind));
                m.insert("message".into(), json!(c.message));
                if let Some(w) = &c.witness {
                    m.insert("witness".into(), w.clone());
                }
                for (k, v) in &c.details {
                    m.insert(k.clone(), v.clone());
                }
                Value::Object(m)
            })
            .collect();
        json!({
            "changes": changes,
            "summary": {
                "widening": self.count(Direction::Widening),
                "narrowing": self.count(Direction::Narrowing),
                "noEffect": self.count(Direction::Neutral),
                "undecided": self.count(Direction::Undecided),
            }
        })
    }

    /// The human report.
    pub fn to_human(&self) -> String {
        let mut out = String::new();
        for c in &self.changes {
            out.push_str(&format!(
                "{:<9} {}: {}\n",
                c.direction.as_str(),
                c.tool,
                c.message
            ));
            if let Some(w) = &c.witness {
                out.push_str(&format!(
                    "          e.g. arguments {}\n",
                    serde_json::to_string(w).unwrap_or_default()
                ));
            }
        }
        out.push_str(&format!(
            "{} widening, {} narrowing, {} without effect, {} undecided\n",
            self.count(Direction::Widening),
            self.count(Direction::Narrowing),
            self.count(Direction::Neutral),
            self.count(Direction::Undecided)
        ));
        if !self.changes.is_empty() {
            out.push_str(DIRECTIONS);
            out.push('\n');
        }
        out
    }
}

/// What the directions mean, in one line under a report: they are a
/// pinning host's view, so a hint moving toward the worst case
/// (`readOnlyHint` true → false) narrows.
pub const DIRECTIONS: &str = "(widening: a host that pinned the old signature would let through more: a tool, a scope, a call, or a hint further from the worst case; narrowing: the opposite, e.g. readOnlyHint true → false)";

impl Diff {
    /// The Markdown report, made for a pull-request comment: a summary line,
    /// then a table per direction (widening first, then undecided,
    /// narrowing and no-effect changes) with each change's witness. It
    /// starts with the HTML comment [`MARKDOWN_MARKER`], by which a workflow
    /// finds its earlier comment to update.
    pub fn to_markdown(&self) -> String {
        use crate::markup::{md_cell, md_code};
        let mut out = format!("{MARKDOWN_MARKER}\n### mcp-resolve diff\n\n");
        if self.changes.is_empty() {
            out.push_str("No change to what the server's tools may do.\n");
            return out;
        }
        out.push_str(&format!(
            "**{} widening**, {} narrowing, {} without effect, {} undecided\n\n{DIRECTIONS}\n",
            self.count(Direction::Widening),
            self.count(Direction::Narrowing),
            self.count(Direction::Neutral),
            self.count(Direction::Undecided)
        ));
        let sections = [
            (
                Direction::Widening,
                "Widening: the new rules let more through",
            ),
            (
                Direction::Undecided,
                "Undecided: no call tells the documents apart, but none is proved not to",
            ),
            (Direction::Narrowing, "Narrowing"),
            (Direction::Neutral, "Without effect on resolution"),
        ];
        for (direction, title) in sections {
            let changes: Vec<&Change> = self
                .changes
                .iter()
                .filter(|c| c.direction == direction)
                .collect();
            if changes.is_empty() {
                continue;
            }
            out.push_str(&format!(
                "\n#### {title}\n\n| tool | kind | change | witness (arguments) |\n|---|---|---|---|\n"
            ));
            for c in changes {
                let witness = c
                    .witness
                    .as_ref()
                    .map(|w| md_code(&serde_json::to_string(w).unwrap_or_default()))
                    .unwrap_or_default();
                out.push_str(&format!(
                    "| {} | {} | {} | {} |\n",
                    md_code(&c.tool),
                    c.kind,
                    md_cell(&c.message),
                    witness
                ));
            }
        }
        out
    }
}

/// The first line of [`Diff::to_markdown`]: an HTML comment (invisible once
/// rendered) that marks a pull-request comment as this report's.
pub const MARKDOWN_MARKER: &str = "<!-- mcp-resolve diff -->";

/// Why two documents cannot be compared.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DiffError {
    /// The old or the new document (`side`) is not a usable signature.
    #[error("the {side} document: {source}")]
    Document {
        /// `old` or `new`.
        side: &'static str,
        /// Why, as host verification reads the whole document.
        #[source]
        source: SignatureError,
    },
    /// The tool given to [`candidate_calls`] cannot be used.
    #[error("the given tool: {0}")]
    Tool(#[source] SignatureError),
    /// A bug: a tool failed to read alone but not in its document, or the
    /// comparison of one tool failed.
    #[error("internal error {0} (please report it)")]
    Internal(String),
}

/// The most argument objects tried per tool.
pub const MAX_CANDIDATES: usize = 20_000;

pub use mcp_resolve_runtime::hints::worst_value;

/// Compares two signature documents, on every core.
pub fn diff(old: &Value, new: &Value) -> Result<Diff, DiffError> {
    diff_with_jobs(old, new, 0)
}

/// [`diff`] on `jobs` threads (0: every core). Tools are read and compared
/// independently; the changes come back in the order a single thread finds
/// them.
///
/// Every tool of both documents is read (a malformed one is an error), but
/// only tools that are added or differ in what the comparison reads are
/// compiled: two tools that declare the same schema, annotations, scopes
/// and variants treat every call alike, whatever those schemas say.
pub fn diff_with_jobs(old_doc: &Value, new_doc: &Value, jobs: usize) -> Result<Diff, DiffError> {
    let threads = crate::par::threads(jobs);
    let old = read_tools("old", old_doc, threads)?;
    let new = read_tools("new", new_doc, threads)?;
    compare_tools(&old, &new, threads).map_err(|failure| match failure {
        Failure::Compile(Side::Old) => whole_document_error("old", old_doc),
        Failure::Compile(Side::New) => whole_document_error("new", new_doc),
        Failure::Internal(e) => e,
    })
}

/// [`diff_with_jobs`] of two documents given as JSON text, each read tool by
/// tool ([`text::read_tools`]) instead of as one tree: a fraction of the
/// memory for large documents. A document's fingerprint, when it has one,
/// is verified. `None` when either document is not a valid signature, its
/// fingerprint does not verify, or a tool does not compile: the caller reads
/// the documents whole then ([`diff_with_jobs`]), which says exactly what is
/// wrong. When both read, the result is [`diff_with_jobs`]'s.
pub fn diff_texts(old: &str, new: &str, jobs: usize) -> Option<Result<Diff, DiffError>> {
    let threads = crate::par::threads(jobs);
    let old = text::read_tools(old, threads)?;
    let new = text::read_tools(new, threads)?;
    match compare_tools(&old, &new, threads) {
        Ok(diff) => Some(Ok(diff)),
        Err(Failure::Internal(e)) => Some(Err(e)),
        Err(Failure::Compile(_)) => None,
    }
}

/// Why [`compare_tools`] stopped.
enum Failure {
    /// A tool of this document does not compile.
    Compile(Side),
    /// A comparison panicked.
    Internal(DiffError),
}

/// The changes from the tools `old` to the tools `new`, compared on
/// `threads` threads, in the order a single thread finds them.
fn compare_tools(
    old: &[SignatureTool],
    new: &[SignatureTool],
    threads: usize,
) -> Result<Diff, Failure> {
    let old_index: HashMap<&str, &SignatureTool> =
        old.iter().map(|t| (t.name.as_str(), t)).collect();
    let new_names: HashSet<&str> = new.iter().map(|t| t.name.as_str()).collect();
    // A tool that does not compile is reported once, after the map, by the
    // whole-document reader (not by every worker that meets one).
    let compile =
        |side: Side, tool: &SignatureTool| SignedTool::compile(tool.clone()).map_err(|_| side);
    let per_tool = crate::par::map(new, threads, Some(crate::par::WORK_STACK), |_, new_def| {
        let name = new_def.name.as_str();
        let mut changes = Vec::new();
        match old_index.get(name) {
            None => {
                let new_tool = compile(Side::New, new_def)?;
                let tool = ToolSig::new(&new_tool);
                let witness = Search::new(None, Some(&tool)).first_valid_new();
                changes.push(Change {
                    tool: name.to_string(),
                    direction: Direction::Widening,
                    kind: "tool-added",
                    message: "tool added".into(),
                    witness,
                    details: Map::new(),
                });
            }
            // Nothing `compare_tool` reads differs, so it would find nothing.
            Some(old_def) if same_for_calls(old_def, new_def) => {}
            Some(old_def) => {
                let old_tool = compile(Side::Old, old_def)?;
                let new_tool = compile(Side::New, new_def)?;
                compare_tool(
                    &ToolSig::new(&old_tool),
                    &ToolSig::new(&new_tool),
                    &mut changes,
                );
            }
        }
        Ok(changes)
    });
    let mut changes = Vec::new();
    for (tool, found) in new.iter().zip(per_tool) {
        match found {
            Ok(Ok(found)) => changes.extend(found),
            Ok(Err(side)) => return Err(Failure::Compile(side)),
            Err(_) => {
                return Err(Failure::Internal(DiffError::Internal(format!(
                    "comparing tool `{}`",
                    tool.name
                ))));
            }
        }
    }
    for old_tool in old {
        if !new_names.contains(old_tool.name.as_str()) {
            changes.push(Change {
                tool: old_tool.name.clone(),
                direction: Direction::Narrowing,
                kind: "tool-removed",
                message: "tool removed".into(),
                witness: None,
                details: Map::new(),
            });
        }
    }
    Ok(Diff { changes })
}

/// Which document a tool that failed to compile is in.
#[derive(Clone, Copy)]
enum Side {
    Old,
    New,
}

/// The error for a document that does not read or compile, in the words
/// of [`Signature::from_value`], which reads it whole and says where.
fn whole_document_error(side: &'static str, doc: &Value) -> DiffError {
    match Signature::from_value(doc.clone()) {
        Err(source) => DiffError::Document { side, source },
        Ok(_) => DiffError::Internal(format!(
            "reading the {side} document: a tool failed alone but not in it"
        )),
    }
}

/// Reads one document's tools, each on its own, on `threads` threads.
fn read_tools(
    side: &'static str,
    doc: &Value,
    threads: usize,
) -> Result<Vec<SignatureTool>, DiffError> {
    let (Some(map), Some(Value::Array(tools))) = (doc.as_object(), doc.get("tools")) else {
        return Err(whole_document_error(side, doc));
    };
    // The document around its tools, read without them.
    if SignatureDocument::from_value(&crate::emit::signature::frame_of(map)).is_err() {
        return Err(whole_document_error(side, doc));
    }
    let read = crate::par::map(tools, threads, None, |_, tool| {
        SignatureTool::deserialize(tool).ok()
    });
    let mut out = Vec::with_capacity(tools.len());
    let mut names = HashSet::with_capacity(tools.len());
    for tool in read {
        match tool {
            Ok(Some(tool)) if names.insert(tool.name.clone()) => out.push(tool),
            _ => return Err(whole_document_error(side, doc)),
        }
    }
    Ok(out)
}

/// Whether two tools agree on everything [`compare_tool`] reads: the
/// `inputSchema`, the static annotations and scopes, and the variants.
/// Such a pair treats every call alike, so it has no change to report.
fn same_for_calls(o: &SignatureTool, n: &SignatureTool) -> bool {
    o.input_schema == n.input_schema
        && o.annotations == n.annotations
        && o.required_scopes == n.required_scopes
        && o.resolved_variants == n.resolved_variants
}

/// Argument objects that exercise one tool of a signature document: one value
/// per class its `inputSchema` and `argumentPatterns` tell apart, combined as
/// `diff` combines them (at most [`MAX_CANDIDATES`]). Some may be refused by
/// the `inputSchema`. Useful to test a resolver or a host against a signature.
pub fn candidate_calls(tool: &Value) -> Result<Vec<Value>, DiffError> {
    let tool = SignedTool::from_value(tool).map_err(DiffError::Tool)?;
    Ok(Search::new(None, Some(&ToolSig::new(&tool))).candidates)
}

/// One tool of a signature, compiled for evaluation with the runtime's
/// host-side recipe, and its scopes as sets.
struct ToolSig<'a> {
    signed: &'a SignedTool,
    scopes: BTreeSet<String>,
    variant_scopes: Vec<BTreeSet<String>>,
}

/// Where a call lands: `None` for the static annotations.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Landing(Option<usize>);

fn scope_set(scopes: &[String]) -> BTreeSet<String> {
    scopes.iter().cloned().collect()
}

impl<'a> ToolSig<'a> {
    fn new(signed: &'a SignedTool) -> ToolSig<'a> {
        ToolSig {
            scopes: scope_set(signed.required_scopes()),
            variant_scopes: signed
                .variants()
                .iter()
                .map(|v| scope_set(v.required_scopes()))
                .collect(),
            signed,
        }
    }

    fn schema(&self) -> &Value {
        self.signed.input_schema()
    }

    fn variants(&self) -> &[SignedVariant] {
        self.signed.variants()
    }

    fn annotations_static(&self) -> &Annotations {
        self.signed.annotations()
    }

    fn accepts(&self, args: &Value) -> bool {
        self.signed.accepts(args)
    }

    /// The recipe: `None` when the arguments are refused.
    fn land(&self, args: &Value) -> Option<Landing> {
        self.accepts(args).then(|| Landing(self.signed.land(args)))
    }

    fn annotations(&self, at: Landing) -> &Annotations {
        at.0.and_then(|i| self.variants().get(i))
            .map_or(self.signed.annotations(), |v| v.annotations())
    }

    fn scopes(&self, at: Landing) -> &BTreeSet<String> {
        at.0.and_then(|i| self.variant_scopes.get(i))
            .unwrap_or(&self.scopes)
    }

    fn label(&self, at: Landing) -> String {
        match at.0.and_then(|i| self.variants().get(i)) {
            Some(v) => format!("variant `{}`", v.name()),
            None => "the static annotations".to_string(),
        }
    }

    fn variant_name(&self, at: Landing) -> Value {
        at.0.and_then(|i| self.variants().get(i))
            .map_or(Value::Null, |v| json!(v.name()))
    }
}

/// How a hint moved: `Some(Widening)` away from its worst value. A hint
/// that means nothing in either set (see [`hints::is_meaningful`]) did not
/// move.
fn hint_direction(
    hint: &str,
    old: &Annotations,
    new: &Annotations,
) -> Option<(Direction, Value, Value)> {
    let (o, n) = (old.get(hint), new.get(hint));
    if o == n {
        return None;
    }
    if !hints::is_meaningful(hint, old.read_only) || !hints::is_meaningful(hint, new.read_only) {
        return None;
    }
    let direction = match (worst_value(hint), n) {
        (Some(worst), Some(nv)) if nv == worst => Direction::Narrowing,
        (Some(_), Some(_)) => Direction::Widening,
        // A hint of unknown direction that changes, appears or disappears:
        // the host cannot tell, so it counts against the new document.
        _ => Direction::Widening,
    };
    let json = |v: Option<bool>| v.map_or(Value::Null, Value::Bool);
    Some((direction, json(o), json(n)))
}

/// Every hint either set has: the built-in ones in table order, then the
/// others by name.
fn all_hints(a: &Annotations, b: &Annotations) -> Vec<String> {
    let mut hints: Vec<String> = BUILTIN_HINTS
        .iter()
        .filter(|h| a.get(&h.name).is_some() || b.get(&h.name).is_some())
        .map(|h| h.name.to_string())
        .collect();
    for (k, _) in a.iter().chain(b.iter()) {
        if !hints.iter().any(|h| h == k) {
            hints.push(k.to_string());
        }
    }
    hints
}

#[expect(
    clippy::too_many_lines,
    reason = "the report's four parts in the order it prints them, sharing one search and one change builder"
)]
fn compare_tool(o: &ToolSig, n: &ToolSig, changes: &mut Vec<Change>) {
    let name = n.signed.name().to_string();
    let search = Search::new(Some(o), Some(n));
    let change = |direction, kind, message: String, witness, details: Map<String, Value>| Change {
        tool: name.clone(),
        direction,
        kind,
        message,
        witness,
        details,
    };

    // Static annotations: what a client that does not resolve sees for every call.
    for hint in all_hints(o.annotations_static(), n.annotations_static()) {
        if let Some((direction, ov, nv)) =
            hint_direction(&hint, o.annotations_static(), n.annotations_static())
        {
            let witness = (direction == Direction::Widening)
                .then(|| search.first_falling_through_unlike_old())
                .flatten();
            changes.push(change(
                direction,
                "static-annotation",
                format!("static `{hint}` {ov} → {nv} (what clients that do not resolve see)"),
                witness,
                details(&[("hint", json!(hint)), ("old", ov), ("new", nv)]),
            ));
        }
    }
    for scope in n.scopes.difference(&o.scopes) {
        changes.push(change(
            Direction::Widening,
            "static-scope",
            format!("static scope `{scope}` added"),
            // A call that falls through to the static set needs the scope.
            search.first_falling_through_unlike_old(),
            details(&[("scope", json!(scope))]),
        ));
    }
    for scope in o.scopes.difference(&n.scopes) {
        changes.push(change(
            Direction::Narrowing,
            "static-scope",
            format!("static scope `{scope}` removed"),
            None,
            details(&[("scope", json!(scope))]),
        ));
    }

    // What calls are admitted, and what they resolve to.
    let mut groups: BTreeMap<(Direction, String, String, String), Change> = BTreeMap::new();
    let mut add = |key: (Direction, String, String, String), c: Change| {
        groups.entry(key).or_insert(c);
    };
    for args in &search.candidates {
        let (lo, ln) = (o.land(args), n.land(args));
        match (lo, ln) {
            (None, Some(at)) => add(
                (
                    Direction::Widening,
                    "schema".into(),
                    String::new(),
                    String::new(),
                ),
                change(
                    Direction::Widening,
                    "input-schema",
                    format!(
                        "inputSchema admits calls the old one refused (resolving to {})",
                        n.label(at)
                    ),
                    Some(args.clone()),
                    Map::new(),
                ),
            ),
            (Some(_), None) => add(
                (
                    Direction::Narrowing,
                    "schema".into(),
                    String::new(),
                    String::new(),
                ),
                change(
                    Direction::Narrowing,
                    "input-schema",
                    "inputSchema refuses calls the old one admitted".into(),
                    Some(args.clone()),
                    Map::new(),
                ),
            ),
            (Some(a), Some(b)) => {
                let (oa, na) = (o.annotations(a), n.annotations(b));
                let route = format!("{} → {}", o.label(a), n.label(b));
                let vd = details(&[
                    ("oldVariant", o.variant_name(a)),
                    ("newVariant", n.variant_name(b)),
                ]);
                for hint in all_hints(oa, na) {
                    if let Some((direction, ov, nv)) = hint_direction(&hint, oa, na) {
                        let mut d = vd.clone();
                        d.insert("hint".into(), json!(hint));
                        d.insert("old".into(), ov.clone());
                        d.insert("new".into(), nv.clone());
                        add(
                            (direction, hint.clone(), format!("{ov}{nv}"), route.clone()),
                            change(
                                direction,
                                "resolved-annotation",
                                format!("calls resolve to `{hint}: {nv}` (was {ov}): {route}"),
                                Some(args.clone()),
                                d,
                            ),
                        );
                    }
                }
                let (os, ns) = (o.scopes(a), n.scopes(b));
                for (direction, scope, verb) in ns
                    .difference(os)
                    .map(|s| (Direction::Widening, s, "need"))
                    .chain(
                        os.difference(ns)
                            .map(|s| (Direction::Narrowing, s, "no longer need")),
                    )
                {
                    let mut d = vd.clone();
                    d.insert("scope".into(), json!(scope));
                    add(
                        (
                            direction,
                            format!("scope {scope}"),
                            String::new(),
                            route.clone(),
                        ),
                        change(
                            direction,
                            "resolved-scope",
                            format!("calls {verb} scope `{scope}`: {route}"),
                            Some(args.clone()),
                            d,
                        ),
                    );
                }
            }
            (None, None) => {}
        }
    }
    let found_schema_change = groups.keys().any(|k| k.1 == "schema");
    let found_resolution_change = groups.keys().any(|k| k.1 != "schema");
    changes.extend(groups.into_values());

    // Document changes no call was found to feel: "no effect" only with a
    // proof, "undecided" otherwise.
    if o.schema() != n.schema() && !found_schema_change {
        let (direction, message) = if proof::same_instances(o.schema(), n.schema()) {
            (
                Direction::Neutral,
                "inputSchema changed in descriptive keywords only (no call is admitted differently)",
            )
        } else {
            (
                Direction::Undecided,
                "inputSchema changed; the search found no call that one admits and the other refuses, but cannot show that none exists",
            )
        };
        changes.push(change(
            direction,
            "input-schema",
            message.into(),
            None,
            Map::new(),
        ));
    }
    let variants = |t: &ToolSig| t.signed.def().resolved_variants.clone();
    if variants(o) != variants(n) && !found_resolution_change {
        let names = |t: &ToolSig| {
            t.variants()
                .iter()
                .map(|v| v.name().to_string())
                .collect::<Vec<_>>()
        };
        let (direction, why) = if proof::same_resolution(o.signed.def(), n.signed.def()) {
            (
                Direction::Neutral,
                "only variant names changed, so every call resolves as before",
            )
        } else {
            (
                Direction::Undecided,
                "the search found no call that resolves differently, but cannot show that none exists",
            )
        };
        changes.push(change(
            direction,
            "variants",
            format!("variants changed ({:?} → {:?}); {why}", names(o), names(n)),
            None,
            Map::new(),
        ));
    }
}

fn details(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.clone()))
        .collect()
}
