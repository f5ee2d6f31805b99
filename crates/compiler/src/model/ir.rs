//! The checked intermediate representation: what every emitter and the
//! resolver consume. Both `when` syntaxes lower to [`Cond`].
//!
//! Spans are carried in [`Loc`], which compares equal to every other `Loc`, so
//! two IRs from different syntaxes compare equal when they mean the same.

use std::fmt;

use serde_json::{Map, Number, Value};

use mcp_resolve_host::signature::SignatureTool;
use mcp_resolve_runtime::ToolAnnotations;

use crate::hints::{HintSet, HintTable, HintTableExt};
use crate::source::{FileId, Span};

/// A span that takes no part in equality.
#[derive(Clone, Copy)]
pub struct Loc(pub Span);

impl PartialEq for Loc {
    fn eq(&self, _: &Loc) -> bool {
        true
    }
}

thread_local! {
    /// Whether a `Loc` shows its span when formatted with `{:?}`.
    static SPANS_SHOWN: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

impl fmt::Debug for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if SPANS_SHOWN.get() {
            f.debug_tuple("Loc").field(&self.0).finish()
        } else {
            f.write_str("Loc")
        }
    }
}

/// `f` run with every `Loc` formatted by `{:?}` without its span, on this
/// thread: what IR prints then, two IRs print alike exactly when they are
/// equal (`Loc` takes no part in either).
pub(crate) fn without_spans<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            SPANS_SHOWN.set(self.0);
        }
    }
    let _restore = Restore(SPANS_SHOWN.replace(false));
    f()
}

/// One server: every tool of the files that declare it.
#[derive(Clone, Debug, PartialEq)]
pub struct Server {
    /// `server.name`.
    pub name: String,
    /// `server.version`.
    pub version: String,
    /// The hints this server's annotation sets carry.
    pub hints: HintTable,
    /// Tools, in file and declaration order.
    pub tools: Vec<Tool>,
    /// Files that make up the server, in the order given.
    pub files: Vec<FileId>,
}

impl Server {
    /// The tool with this name.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }
}

/// A tool.
#[derive(Clone, Debug, PartialEq)]
pub struct Tool {
    /// The name.
    pub name: String,
    /// The name's span.
    pub name_loc: Loc,
    /// `title`.
    pub title: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// The full inputSchema.
    pub input_schema: Value,
    /// Where the schema was written (or its file named).
    pub schema_loc: Loc,
    /// `outputSchema`, verbatim.
    pub output_schema: Option<Value>,
    /// Where `outputSchema` was written (the name's when it was not).
    pub output_schema_loc: Loc,
    /// The static annotations, complete (written, or derived).
    pub annotations: HintSet,
    /// `annotations.title`: `ToolAnnotations`' display title.
    pub annotations_title: Option<String>,
    /// The other members of MCP's `Tool` a rules file carries verbatim
    /// (`icons`, `execution`, `_meta`), by wire name.
    pub members: Map<String, Value>,
    /// `trust`: the SEP-3140 labels the rules give beyond the hints.
    pub trust: Option<Map<String, Value>>,
    /// The static hints as written (`None`: derived).
    pub written_annotations: Option<Vec<Setting>>,
    /// The static scopes (written, or the union of the variants').
    pub required_scopes: Vec<String>,
    /// Whether `requiredScopes` was written on the tool.
    pub scopes_written: bool,
    /// Variants in order; empty for a plain static tool.
    pub variants: Vec<Variant>,
    /// Whether the tool declares `variants` (is resolvable).
    pub resolvable: bool,
}

impl Tool {
    /// The tool as the signature model holds it, with an empty
    /// `resolvedVariants` when it is resolvable (the signature emitter fills
    /// it in): what `tools/list` and resolution results are built from.
    pub fn to_model(&self, hints: &HintTable) -> SignatureTool {
        SignatureTool {
            name: self.name.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            input_schema: self.input_schema.clone(),
            output_schema: self.output_schema.clone(),
            annotations: ToolAnnotations {
                title: self.annotations_title.clone(),
                hints: hints.to_annotations(&self.annotations),
            },
            required_scopes: self.required_scopes.clone(),
            resolved_variants: self.resolvable.then(Vec::new),
            trust: self.trust.clone(),
            other: self.members.clone(),
        }
    }
}

/// A hint as written, with its location.
#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    /// Index in the server's [`HintTable`].
    pub hint: usize,
    /// The value.
    pub value: bool,
    /// Where.
    pub loc: Loc,
}

/// A variant of a tool.
#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    /// The name.
    pub name: String,
    /// The variant's span (mapping start to end of its name).
    pub loc: Loc,
    /// The condition.
    pub when: Cond,
    /// Overrides as written.
    pub overrides: Vec<Setting>,
    /// The resolved annotations, complete.
    pub annotations: HintSet,
    /// The scopes a call resolving here needs.
    pub required_scopes: Vec<(String, Loc)>,
}

impl Variant {
    /// The scope names.
    pub fn scopes(&self) -> Vec<String> {
        self.required_scopes
            .iter()
            .map(|(s, _)| s.clone())
            .collect()
    }
}

/// An argument path: `options.force` is `["options", "force"]`.
#[derive(Clone, Debug, PartialEq)]
pub struct ArgPath {
    /// The segments.
    pub segments: Vec<String>,
    /// Where the path was written.
    pub loc: Loc,
}

impl fmt::Display for ArgPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.segments.join("."))
    }
}

/// A condition over the arguments of a call.
#[derive(Clone, Debug, PartialEq)]
pub enum Cond {
    /// Always or never.
    Const(bool),
    /// Every one.
    And(Vec<Cond>),
    /// Any one.
    Or(Vec<Cond>),
    /// Plain negation.
    Not(Box<Cond>),
    /// The argument is present (every object on the way too).
    Present(ArgPath),
    /// The argument is present and its value satisfies the predicate.
    Test(ArgPath, Pred),
}

/// A predicate on a value, with JSON Schema semantics exactly: keywords that
/// do not apply to a value's type hold vacuously (`pattern` on a number).
#[derive(Clone, Debug, PartialEq)]
pub struct Pred {
    /// What it tests.
    pub kind: PredKind,
    /// Where it was written.
    pub loc: Loc,
}

/// The JSON Schema keywords a matcher may use.
#[derive(Clone, Debug, PartialEq)]
pub enum PredKind {
    /// `const`.
    Const(Value),
    /// `enum`.
    Enum(Vec<Value>),
    /// `type`.
    Type(Vec<String>),
    /// `pattern` (unanchored search).
    Pattern(String),
    /// `minLength` (in characters).
    MinLength(u64),
    /// `maxLength` (in characters).
    MaxLength(u64),
    /// `minimum`.
    Minimum(Number),
    /// `maximum`.
    Maximum(Number),
    /// `exclusiveMinimum`.
    ExclusiveMinimum(Number),
    /// `exclusiveMaximum`.
    ExclusiveMaximum(Number),
    /// `not`.
    Not(Box<Pred>),
    /// `anyOf`.
    AnyOf(Vec<Pred>),
    /// `allOf` (empty: any value).
    AllOf(Vec<Pred>),
    /// `minItems`.
    MinItems(u64),
    /// `maxItems`.
    MaxItems(u64),
    /// `items` (one schema for every item).
    Items(Box<Pred>),
    /// `contains` (some item).
    Contains(Box<Pred>),
    /// `properties`: each named property, when present, satisfies its
    /// predicate (in the order written).
    Properties(Vec<(String, Pred)>),
    /// `required`.
    Required(Vec<String>),
}

impl Pred {
    /// Visits this predicate and every one nested in it that applies to the
    /// same value (through `not`, `anyOf`, `allOf`; not into items or
    /// properties).
    pub fn walk<'a>(&'a self, f: &mut dyn FnMut(&'a Pred)) {
        f(self);
        match &self.kind {
            PredKind::Not(p) => p.walk(f),
            PredKind::AnyOf(ps) | PredKind::AllOf(ps) => ps.iter().for_each(|p| p.walk(f)),
            _ => {}
        }
    }

    /// Visits this predicate and every one nested in it, items and
    /// properties included.
    pub fn walk_deep<'a>(&'a self, f: &mut dyn FnMut(&'a Pred)) {
        f(self);
        match &self.kind {
            PredKind::Not(p) | PredKind::Items(p) | PredKind::Contains(p) => p.walk_deep(f),
            PredKind::AnyOf(ps) | PredKind::AllOf(ps) => ps.iter().for_each(|p| p.walk_deep(f)),
            PredKind::Properties(ps) => ps.iter().for_each(|(_, p)| p.walk_deep(f)),
            _ => {}
        }
    }
}

impl Cond {
    /// Visits every argument test and presence test in the condition.
    pub fn walk<'a>(&'a self, f: &mut dyn FnMut(&'a ArgPath, Option<&'a Pred>)) {
        match self {
            Cond::Const(_) => {}
            Cond::And(cs) | Cond::Or(cs) => cs.iter().for_each(|c| c.walk(f)),
            Cond::Not(c) => c.walk(f),
            Cond::Present(p) => f(p, None),
            Cond::Test(p, pred) => f(p, Some(pred)),
        }
    }
}

impl fmt::Display for Cond {
    /// A CEL-like rendering, for `--explain` and messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cond::Const(b) => write!(f, "{b}"),
            Cond::And(cs) if cs.is_empty() => f.write_str("true"),
            Cond::Or(cs) if cs.is_empty() => f.write_str("false"),
            Cond::And(cs) | Cond::Or(cs) => {
                let op = if matches!(self, Cond::And(_)) {
                    " && "
                } else {
                    " || "
                };
                for (i, c) in cs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(op)?;
                    }
                    if matches!(c, Cond::And(_) | Cond::Or(_)) {
                        write!(f, "({c})")?;
                    } else {
                        write!(f, "{c}")?;
                    }
                }
                Ok(())
            }
            Cond::Not(c) => match c.as_ref() {
                Cond::Present(p) => write!(f, "!has({p})"),
                other => write!(f, "!({other})"),
            },
            Cond::Present(p) => write!(f, "has({p})"),
            Cond::Test(p, pred) => write!(f, "{p} {}", pred_text(pred)),
        }
    }
}

fn pred_text(p: &Pred) -> String {
    match &p.kind {
        PredKind::Const(v) => format!("== {v}"),
        PredKind::Enum(vs) => format!("in {}", Value::Array(vs.clone())),
        PredKind::Type(ts) => format!("is {}", ts.join("|")),
        PredKind::Pattern(r) => format!("matches {}", Value::String(r.clone())),
        PredKind::MinLength(n) => format!("has length >= {n}"),
        PredKind::MaxLength(n) => format!("has length <= {n}"),
        PredKind::Minimum(n) => format!(">= {n}"),
        PredKind::Maximum(n) => format!("<= {n}"),
        PredKind::ExclusiveMinimum(n) => format!("> {n}"),
        PredKind::ExclusiveMaximum(n) => format!("< {n}"),
        PredKind::Not(p) => format!("not ({})", pred_text(p)),
        PredKind::AnyOf(ps) if ps.is_empty() => "matches nothing".into(),
        PredKind::AllOf(ps) if ps.is_empty() => "is any value".into(),
        PredKind::AnyOf(ps) => ps.iter().map(pred_text).collect::<Vec<_>>().join(" or "),
        PredKind::AllOf(ps) => ps.iter().map(pred_text).collect::<Vec<_>>().join(" and "),
        PredKind::MinItems(n) => format!("has at least {n} items"),
        PredKind::MaxItems(n) => format!("has at most {n} items"),
        PredKind::Items(p) => format!("has every item {}", pred_text(p)),
        PredKind::Contains(p) => format!("has an item {}", pred_text(p)),
        PredKind::Properties(ps) => ps
            .iter()
            .map(|(k, p)| format!("has `{k}` absent or {}", pred_text(p)))
            .collect::<Vec<_>>()
            .join(" and "),
        PredKind::Required(ks) => format!(
            "has {}",
            ks.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
