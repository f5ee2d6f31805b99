//! The rules format as written: every node keeps its span. Produced by the
//! front ends (`parse`), consumed by `lower`.

use serde_json::Value;

use crate::source::{FileId, Span, Spanned};

/// One rules file.
#[derive(Clone, Debug, PartialEq)]
pub struct RulesFile {
    /// The file.
    pub file: FileId,
    /// `version:` (must be 1).
    pub version: Option<Spanned<u64>>,
    /// `server:`.
    pub server: Option<ServerDecl>,
    /// `hints:`.
    pub hints: Vec<HintDecl>,
    /// `tools:`.
    pub tools: Vec<ToolDecl>,
}

/// `server: { name, version }`.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerDecl {
    /// The server name.
    pub name: Spanned<String>,
    /// The server version.
    pub version: Spanned<String>,
    /// The whole mapping.
    pub span: Span,
}

/// An extra boolean hint under `hints:`.
#[derive(Clone, Debug, PartialEq)]
pub struct HintDecl {
    /// The hint's wire name.
    pub name: Spanned<String>,
    /// The conservative value.
    pub worst: bool,
    /// The value when omitted.
    pub default: bool,
}

/// Where a tool's inputSchema comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum SchemaSource {
    /// Written inline.
    Inline(Spanned<Value>),
    /// `inputSchemaFile:`, relative to the rules file; already loaded by the front end.
    File {
        /// The path as written.
        path: Spanned<String>,
        /// The loaded schema, when it could be read and parsed.
        schema: Option<Value>,
    },
}

impl SchemaSource {
    /// The span to point at for schema problems.
    pub fn span(&self) -> Span {
        match self {
            SchemaSource::Inline(s) => s.span,
            SchemaSource::File { path, .. } => path.span,
        }
    }
}

/// One hint setting: `readOnlyHint: true`.
#[derive(Clone, Debug, PartialEq)]
pub struct HintSetting {
    /// The hint name.
    pub name: Spanned<String>,
    /// The value.
    pub value: Spanned<bool>,
}

/// A tool under `tools:`.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDecl {
    /// The name.
    pub name: Spanned<String>,
    /// `title:`.
    pub title: Option<String>,
    /// `description:`.
    pub description: Option<String>,
    /// `inputSchema:` or `inputSchemaFile:`.
    pub input_schema: Option<SchemaSource>,
    /// `outputSchema:`, verbatim.
    pub output_schema: Option<Spanned<serde_json::Value>>,
    /// Static `annotations:`; `None` when omitted (derived).
    pub annotations: Option<Vec<HintSetting>>,
    /// `annotations.title`: `ToolAnnotations`' display title.
    pub annotations_title: Option<Spanned<String>>,
    /// `icons:`, verbatim.
    pub icons: Option<Spanned<serde_json::Value>>,
    /// `execution:` (for example `taskSupport`), verbatim.
    pub execution: Option<Spanned<serde_json::Value>>,
    /// `_meta:`, verbatim.
    pub meta: Option<Spanned<serde_json::Value>>,
    /// `trust:`: the SEP-3140 labels no hint carries (`dataSensitivity`,
    /// `reversible`, `egress: internal`), checked, verbatim.
    pub trust: Option<Spanned<serde_json::Value>>,
    /// Static `requiredScopes:`; `None` when omitted.
    pub required_scopes: Option<Vec<Spanned<String>>>,
    /// `variants:`; `None` for a plain static tool.
    pub variants: Option<Vec<VariantDecl>>,
    /// The whole tool mapping.
    pub span: Span,
}

/// A variant under `variants:`.
#[derive(Clone, Debug, PartialEq)]
pub struct VariantDecl {
    /// The name.
    pub name: Spanned<String>,
    /// `when:`.
    pub when: When,
    /// Annotation overrides.
    pub annotations: Vec<HintSetting>,
    /// `requiredScopes:`; `None` inherits the tool's.
    pub required_scopes: Option<Vec<Spanned<String>>>,
    /// From the start of the variant's mapping to the end of its name.
    pub span: Span,
}

/// A `when:` condition as written.
#[derive(Clone, Debug, PartialEq)]
pub enum When {
    /// Omitted or `{}`: every call.
    Always(Span),
    /// A mapping (one conjunction) or a sequence of mappings (a disjunction).
    Structured(Vec<Conjunction>),
    /// An expression (a YAML string, or a `.rules` `when` clause).
    Expr(Expr),
    /// An expression that did not parse (already reported): matches nothing.
    Invalid(Span),
}

/// One mapping of a structured `when`: every entry must hold.
#[derive(Clone, Debug, PartialEq)]
pub struct Conjunction {
    /// `path: matcher` entries.
    pub entries: Vec<(Spanned<String>, Matcher)>,
    /// The mapping.
    pub span: Span,
}

/// The matcher of one argument path.
#[derive(Clone, Debug, PartialEq)]
pub enum Matcher {
    /// `{absent: true}` (or `false`: present with any value).
    Absent(Spanned<bool>),
    /// A scalar, a sequence of scalars or a keyword mapping: a value predicate.
    Value(ValueMatcher),
}

/// A predicate on an argument's value, in JSON Schema terms.
#[derive(Clone, Debug, PartialEq)]
pub enum ValueMatcher {
    /// `const` (or a bare scalar).
    Const(Spanned<Value>),
    /// `enum` (or a bare sequence).
    Enum(Spanned<Vec<Value>>),
    /// `type`.
    Type(Spanned<Vec<String>>),
    /// `pattern`.
    Pattern(Spanned<String>),
    /// `minLength`.
    MinLength(Spanned<u64>),
    /// `maxLength`.
    MaxLength(Spanned<u64>),
    /// `minimum`.
    Minimum(Spanned<serde_json::Number>),
    /// `maximum`.
    Maximum(Spanned<serde_json::Number>),
    /// `exclusiveMinimum`.
    ExclusiveMinimum(Spanned<serde_json::Number>),
    /// `exclusiveMaximum`.
    ExclusiveMaximum(Spanned<serde_json::Number>),
    /// `not`.
    Not(Box<ValueMatcher>, Span),
    /// `anyOf`.
    AnyOf(Vec<ValueMatcher>, Span),
    /// `allOf`; a keyword mapping with several keywords is one too.
    AllOf(Vec<ValueMatcher>, Span),
    /// `minItems`.
    MinItems(Spanned<u64>),
    /// `maxItems`.
    MaxItems(Spanned<u64>),
    /// `items`: every item matches.
    Items(Box<ValueMatcher>, Span),
    /// `contains`: some item matches.
    Contains(Box<ValueMatcher>, Span),
    /// `properties`: each named property, when present, matches.
    Properties(Vec<(Spanned<String>, ValueMatcher)>, Span),
    /// `required`.
    Required(Spanned<Vec<String>>),
}

impl ValueMatcher {
    /// Where the matcher was written.
    pub fn span(&self) -> Span {
        match self {
            ValueMatcher::Const(s) => s.span,
            ValueMatcher::Enum(s) => s.span,
            ValueMatcher::Type(s) => s.span,
            ValueMatcher::Pattern(s) => s.span,
            ValueMatcher::MinLength(s)
            | ValueMatcher::MaxLength(s)
            | ValueMatcher::MinItems(s)
            | ValueMatcher::MaxItems(s) => s.span,
            ValueMatcher::Required(s) => s.span,
            ValueMatcher::Items(_, s)
            | ValueMatcher::Contains(_, s)
            | ValueMatcher::Properties(_, s) => *s,
            ValueMatcher::Minimum(s)
            | ValueMatcher::Maximum(s)
            | ValueMatcher::ExclusiveMinimum(s)
            | ValueMatcher::ExclusiveMaximum(s) => s.span,
            ValueMatcher::Not(_, s) | ValueMatcher::AnyOf(_, s) | ValueMatcher::AllOf(_, s) => *s,
        }
    }
}

/// A `when` expression (SPEC §4), as written: CEL syntax, nothing resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where it was written (in the file, also inside a YAML string).
    pub span: Span,
}

/// The shapes of [`Expr`].
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// `a || b || …` (two or more).
    Or(Vec<Expr>),
    /// `a && b && …` (two or more).
    And(Vec<Expr>),
    /// `!e`.
    Not(Box<Expr>),
    /// `-e`.
    Neg(Box<Expr>),
    /// `lhs op rhs`; chains (`a < b < c`) are kept to be refused.
    Rel(Box<Expr>, Vec<(RelOp, Span, Expr)>),
    /// A bare identifier (an argument name).
    Ident(String),
    /// `e.name`.
    Select(Box<Expr>, Spanned<String>),
    /// `name(args)` or `receiver.name(args)`.
    Call {
        /// The receiver of a method call.
        receiver: Option<Box<Expr>>,
        /// The function name.
        name: Spanned<String>,
        /// The arguments.
        args: Vec<Expr>,
    },
    /// A literal scalar.
    Lit(Lit),
    /// `[a, b]`.
    List(Vec<Expr>),
    /// `{k: v}`.
    Map(Vec<(Expr, Expr)>),
}

/// The relational operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `in`
    In,
}

impl RelOp {
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            RelOp::Eq => "==",
            RelOp::Ne => "!=",
            RelOp::Lt => "<",
            RelOp::Le => "<=",
            RelOp::Gt => ">",
            RelOp::Ge => ">=",
            RelOp::In => "in",
        }
    }

    /// The operator with its operands swapped (`3 < a` is `a > 3`).
    pub fn flipped(self) -> RelOp {
        match self {
            RelOp::Lt => RelOp::Gt,
            RelOp::Le => RelOp::Ge,
            RelOp::Gt => RelOp::Lt,
            RelOp::Ge => RelOp::Le,
            other => other,
        }
    }
}

/// A literal scalar. Integers keep their magnitude unsigned so that
/// `-9223372036854775808` can be written; `Neg` applies the sign.
#[derive(Clone, Debug, PartialEq)]
pub enum Lit {
    /// `null`
    Null,
    /// `true`, `false`
    Bool(bool),
    /// An integer literal (without its sign).
    Int(u64),
    /// A floating-point literal (without its sign).
    Float(f64),
    /// A string literal, decoded.
    Str(String),
}
