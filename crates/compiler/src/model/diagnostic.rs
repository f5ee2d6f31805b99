//! Findings as data: every check produces [`Diagnostic`]s, renderers print them.

use std::fmt;

use serde_json::{Map, Value, json};

use crate::source::{SourceMap, Span};

/// How serious a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Fails the build.
    Error,
    /// Fails with `--deny-warnings`.
    Warning,
    /// Information only.
    Info,
}

impl Severity {
    /// The lowercase name used in every output format.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

macro_rules! codes {
    ($($(#[doc = $doc:literal])* $variant:ident = $name:literal, $severity:ident;)*) => {
        /// A stable diagnostic code; the kebab-case name never changes once released.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum Code {
            $($(#[doc = $doc])* $variant,)*
        }

        impl Code {
            /// Every code, in documentation order.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The kebab-case name.
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $name,)* }
            }

            /// The default severity.
            pub fn severity(self) -> Severity {
                match self { $(Code::$variant => Severity::$severity,)* }
            }

            /// The PascalCase name (SARIF's `reportingDescriptor.name`).
            pub fn pascal_name(self) -> &'static str {
                match self { $(Code::$variant => stringify!($variant),)* }
            }

            /// One sentence on what the code means (its documentation line).
            pub fn description(self) -> &'static str {
                match self { $(Code::$variant => concat!($($doc),*).trim_ascii(),)* }
            }
        }
    };
}

codes! {
    /// YAML, expression or DSL text that does not parse.
    Syntax = "syntax", Error;
    /// A key the rules format does not define.
    UnknownField = "unknown-field", Error;
    /// A key the rules format requires is missing.
    MissingField = "missing-field", Error;
    /// A value of the wrong shape or type for its key.
    InvalidValue = "invalid-value", Error;
    /// The file could not be read, or exceeds the size limit.
    Io = "io", Error;
    /// A pattern names an argument the inputSchema lacks.
    UnknownArgument = "unknown-argument", Error;
    /// An expression that parses but is outside the supported CEL subset.
    InvalidExpression = "invalid-expression", Error;
    /// A literal the argument's schema can never hold.
    ValueNotAllowed = "value-not-allowed", Error;
    /// A pattern that does not compile.
    InvalidRegex = "invalid-regex", Error;
    /// An inputSchema that does not compile.
    InvalidSchema = "invalid-schema", Error;
    /// A variant's annotations are outside the static conservative bound.
    WorstCase = "worst-case", Error;
    /// A variant needs a scope the static `requiredScopes` lacks.
    ScopeNotDeclared = "scope-not-declared", Error;
    /// Two tools share a name.
    DuplicateTool = "duplicate-tool", Error;
    /// Two variants of a tool share a name.
    DuplicateVariant = "duplicate-variant", Error;
    /// A declared hint repeats or redefines a built-in hint.
    DuplicateHint = "duplicate-hint", Error;
    /// Files of one server disagree on `server` or on a hint declaration.
    ServerMismatch = "server-mismatch", Error;
    /// A condition too large to write as argument patterns.
    PatternTooComplex = "pattern-too-complex", Error;
    /// A rule the TypeScript backend cannot evaluate exactly as Rust does.
    NotPortable = "not-portable", Error;
    /// A tool name outside 1–128 characters of `[A-Za-z0-9_.-]`.
    InvalidToolName = "invalid-tool-name", Warning;
    /// `destructiveHint: true` written on a read-only set.
    MeaninglessHint = "meaningless-hint", Warning;
    /// Earlier variants already cover every call a variant matches.
    UnreachableVariant = "unreachable-variant", Warning;
    /// Calls that match no variant exist.
    NonExhaustive = "non-exhaustive", Info;
    /// Static annotations more conservative than any reachable call needs.
    StaticTooStrict = "static-too-strict", Info;
    /// Pattern analysis hit a size limit or its search budget.
    AnalysisInconclusive = "analysis-inconclusive", Info;
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A secondary location with a note.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    /// Where.
    pub span: Span,
    /// What it says.
    pub message: String,
}

/// One finding.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    /// The stable code.
    pub code: Code,
    /// The severity (the code's default unless a check says otherwise).
    pub severity: Severity,
    /// Lowercase message; user text in backticks.
    pub message: String,
    /// The offending node, when there is one.
    pub span: Option<Span>,
    /// The short label under the caret.
    pub label: Option<String>,
    /// Related locations.
    pub related: Vec<Label>,
    /// The tool concerned.
    pub tool: Option<String>,
    /// The variant concerned.
    pub variant: Option<String>,
    /// A suggestion.
    pub help: Option<String>,
    /// A change of the rules that resolves it, when the check knows one
    /// (what an editor offers as a quick fix).
    pub fix: Option<Fix>,
    /// The arguments of a call that shows the finding (a non-exhaustive
    /// tool's call that matches no variant), when the analysis built one.
    pub example: Option<serde_json::Value>,
}

/// A change of the rules that resolves a finding: `replacement` for the
/// text at `span`.
#[derive(Clone, Debug, PartialEq)]
pub struct Fix {
    /// What it does, as a title (`raise the static readOnlyHint to …`).
    pub message: String,
    /// The text replaced.
    pub span: Span,
    /// What replaces it.
    pub replacement: String,
}

impl Diagnostic {
    /// A diagnostic of `code` at its default severity.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            severity: code.severity(),
            message: message.into(),
            span: None,
            label: None,
            related: Vec::new(),
            tool: None,
            variant: None,
            help: None,
            fix: None,
            example: None,
        }
    }

    /// Sets the primary location.
    pub fn at(mut self, span: Span) -> Self {
        self.span = Some(span);
        self
    }

    /// Sets the primary location and its label.
    pub fn labeled(mut self, span: Span, label: impl Into<String>) -> Self {
        self.span = Some(span);
        self.label = Some(label.into());
        self
    }

    /// Adds a related location.
    pub fn with_related(mut self, span: Span, message: impl Into<String>) -> Self {
        self.related.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    /// Sets the tool.
    pub fn for_tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    /// Sets the variant.
    pub fn for_variant(mut self, variant: impl Into<String>) -> Self {
        self.variant = Some(variant.into());
        self
    }

    /// Sets the help line.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Sets the example call.
    pub fn with_example(mut self, arguments: serde_json::Value) -> Self {
        self.example = Some(arguments);
        self
    }

    /// Sets the fix.
    pub fn with_fix(
        mut self,
        message: impl Into<String>,
        span: Span,
        replacement: impl Into<String>,
    ) -> Self {
        self.fix = Some(Fix {
            message: message.into(),
            span,
            replacement: replacement.into(),
        });
        self
    }

    /// Sets the help line when there is one.
    pub fn with_help_opt(mut self, help: Option<String>) -> Self {
        self.help = help;
        self
    }
}

/// Sorts diagnostics by file, position, then code: output order never depends
/// on the order checks ran in.
pub fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by(|a, b| {
        let key = |d: &Diagnostic| (d.span.map(|s| (s.file, s.start)), d.code);
        key(a).cmp(&key(b)).then_with(|| a.message.cmp(&b.message))
    });
}

/// Counts per severity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Errors.
    pub errors: usize,
    /// Warnings.
    pub warnings: usize,
    /// Infos.
    pub infos: usize,
}

impl Summary {
    /// Counts `diagnostics`.
    pub fn of(diagnostics: &[Diagnostic]) -> Self {
        let mut s = Summary::default();
        for d in diagnostics {
            match d.severity {
                Severity::Error => s.errors += 1,
                Severity::Warning => s.warnings += 1,
                Severity::Info => s.infos += 1,
            }
        }
        s
    }
}

/// File, 1-based line and column of a diagnostic's start and end.
pub struct Position {
    /// The file's display path.
    pub file: String,
    /// Start line.
    pub line: usize,
    /// Start column.
    pub column: usize,
    /// End line.
    pub end_line: usize,
    /// End column (exclusive).
    pub end_column: usize,
}

/// Where a diagnostic points, in user terms.
pub fn position(sources: &SourceMap, d: &Diagnostic) -> Option<Position> {
    let span = d.span?;
    let file = sources.get(span.file)?;
    let (line, column) = file.line_col(span.start);
    let (end_line, end_column) = file.line_col(span.end);
    Some(Position {
        file: file.display_path(),
        line,
        column,
        end_line,
        end_column,
    })
}

/// The JSON output format of SPEC §6.
pub fn to_json(sources: &SourceMap, diagnostics: &[Diagnostic]) -> Value {
    let items: Vec<Value> = diagnostics
        .iter()
        .map(|d| {
            let pos = position(sources, d);
            let mut m = Map::new();
            m.insert("code".into(), json!(d.code.as_str()));
            m.insert("severity".into(), json!(d.severity.as_str()));
            m.insert("message".into(), json!(d.message));
            m.insert("file".into(), json!(pos.as_ref().map(|p| p.file.clone())));
            m.insert("line".into(), json!(pos.as_ref().map(|p| p.line)));
            m.insert("column".into(), json!(pos.as_ref().map(|p| p.column)));
            m.insert("endLine".into(), json!(pos.as_ref().map(|p| p.end_line)));
            m.insert(
                "endColumn".into(),
                json!(pos.as_ref().map(|p| p.end_column)),
            );
            m.insert("tool".into(), json!(d.tool));
            m.insert("variant".into(), json!(d.variant));
            m.insert("help".into(), json!(d.help));
            Value::Object(m)
        })
        .collect();
    let s = Summary::of(diagnostics);
    json!({
        "diagnostics": items,
        "summary": { "errors": s.errors, "warnings": s.warnings, "infos": s.infos },
    })
}

/// The human format: rustc-style snippets with carets, rendered by
/// `annotate-snippets` (the renderer rustc itself uses).
pub fn render_human(sources: &SourceMap, diagnostics: &[Diagnostic], color: bool) -> String {
    use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};

    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let mut out = String::new();
    for d in diagnostics {
        let level = match d.severity {
            Severity::Error => Level::ERROR,
            Severity::Warning => Level::WARNING,
            Severity::Info => Level::INFO,
        };
        let title = level.primary_title(d.message.as_str()).id(d.code.as_str());
        let mut group = Group::with_title(title);
        if let Some(span) = d.span
            && let Some(file) = sources.get(span.file)
        {
            let path = file.display_path();
            // Only the lines the annotations touch go to the renderer, which
            // splits its whole source into lines for every diagnostic: given
            // the file, a thousand diagnostics in a 1 MB file took seconds.
            let related: Vec<_> = d
                .related
                .iter()
                .filter(|r| r.span.file == span.file)
                .collect();
            let low = related
                .iter()
                .map(|r| r.span.start)
                .fold(span.start, usize::min);
            let high = related
                .iter()
                .map(|r| r.span.end)
                .fold(span.end.max(span.start), usize::max);
            let (window, first_line) = file.lines_around(low, high);
            let local = |start: usize, end: usize| {
                let start = start.clamp(window.start, window.end) - window.start;
                let end = end.clamp(window.start, window.end) - window.start;
                start..end.max(start)
            };
            let mut primary = AnnotationKind::Primary.span(local(span.start, span.end));
            if let Some(label) = &d.label {
                primary = primary.label(label.as_str());
            }
            let mut snippet = Snippet::source(&file.text[window.clone()])
                .line_start(first_line)
                .path(path)
                .fold(true)
                .annotation(primary);
            for related in related {
                snippet = snippet.annotation(
                    AnnotationKind::Context
                        .span(local(related.span.start, related.span.end))
                        .label(related.message.as_str()),
                );
            }
            group = group.element(snippet);
        }
        if let Some(help) = &d.help {
            group = group.element(Level::HELP.message(help.as_str()));
        }
        out.push_str(&renderer.render(&[group]));
        out.push_str("\n\n");
    }
    let s = Summary::of(diagnostics);
    if !diagnostics.is_empty() {
        out.push_str(&format!(
            "{} error{}, {} warning{}, {} info{}\n",
            s.errors,
            plural(s.errors),
            s.warnings,
            plural(s.warnings),
            s.infos,
            plural(s.infos)
        ));
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// GitHub workflow annotation lines (`::error file=…,line=…::message`).
pub fn render_github(sources: &SourceMap, diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diagnostics {
        let kind = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let mut props = Vec::new();
        if let Some(p) = position(sources, d) {
            props.push(format!("file={}", escape_property(&p.file)));
            props.push(format!("line={}", p.line));
            props.push(format!("col={}", p.column));
            props.push(format!("endLine={}", p.end_line));
            props.push(format!("endColumn={}", p.end_column));
        }
        props.push(format!("title={}", escape_property(d.code.as_str())));
        let mut message = d.message.clone();
        if let Some(help) = &d.help {
            message.push_str("\nhelp: ");
            message.push_str(help);
        }
        out.push_str(&format!(
            "::{kind} {}::{}\n",
            props.join(","),
            escape_data(&message)
        ));
    }
    out
}

fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// Where the diagnostics table lives, for SARIF's `helpUri`.
const DIAGNOSTICS_DOC: &str = concat!(
    env!("CARGO_PKG_REPOSITORY"),
    "/blob/main/docs/diagnostics.md"
);

/// A SARIF 2.1.0 log (one run) for code-scanning services such as GitHub's.
///
/// Every code is listed as a rule (in [`Code::ALL`] order, so `ruleIndex` is
/// stable); columns count Unicode code points, as in every other format; file
/// paths are written as given, relative ones as relative URI references.
pub fn to_sarif(sources: &SourceMap, diagnostics: &[Diagnostic]) -> Value {
    let rules: Vec<Value> = Code::ALL
        .iter()
        .map(|code| {
            json!({
                "id": code.as_str(),
                "name": code.pascal_name(),
                "shortDescription": { "text": code.description() },
                "helpUri": DIAGNOSTICS_DOC,
                "defaultConfiguration": { "level": sarif_level(code.severity()) },
            })
        })
        .collect();
    let results: Vec<Value> = diagnostics
        .iter()
        .map(|d| sarif_result(sources, d))
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "mcp-resolve",
                    "semanticVersion": env!("CARGO_PKG_VERSION"),
                    "informationUri": env!("CARGO_PKG_REPOSITORY"),
                    "rules": rules,
                }
            },
            "invocations": [{ "executionSuccessful": true }],
            "columnKind": "unicodeCodePoints",
            "results": results,
        }]
    })
}

fn sarif_level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

fn sarif_result(sources: &SourceMap, d: &Diagnostic) -> Value {
    let mut text = d.message.clone();
    if let Some(help) = &d.help {
        text.push_str("\nhelp: ");
        text.push_str(help);
    }
    let mut result = Map::new();
    result.insert("ruleId".into(), json!(d.code.as_str()));
    if let Some(index) = Code::ALL.iter().position(|c| *c == d.code) {
        result.insert("ruleIndex".into(), json!(index));
    }
    result.insert("level".into(), json!(sarif_level(d.severity)));
    result.insert("message".into(), json!({ "text": text }));

    let mut location = Map::new();
    if let Some(span) = d.span
        && let Some(physical) = sarif_physical(sources, span)
    {
        location.insert("physicalLocation".into(), physical);
        if let Some(label) = &d.label {
            location.insert("message".into(), json!({ "text": label }));
        }
    }
    if let Some(tool) = &d.tool {
        let (name, qualified, kind) = match &d.variant {
            Some(variant) => (variant.clone(), format!("{tool}/{variant}"), "member"),
            None => (tool.clone(), tool.clone(), "function"),
        };
        location.insert(
            "logicalLocations".into(),
            json!([{ "name": name, "fullyQualifiedName": qualified, "kind": kind }]),
        );
    }
    let locations = if location.is_empty() {
        Vec::new()
    } else {
        vec![Value::Object(location)]
    };
    result.insert("locations".into(), Value::Array(locations));

    let related: Vec<Value> = d
        .related
        .iter()
        .filter_map(|r| {
            let physical = sarif_physical(sources, r.span)?;
            Some((physical, r.message.as_str()))
        })
        .enumerate()
        .map(|(id, (physical, message))| {
            json!({ "id": id + 1, "physicalLocation": physical, "message": { "text": message } })
        })
        .collect();
    if !related.is_empty() {
        result.insert("relatedLocations".into(), Value::Array(related));
    }
    Value::Object(result)
}

fn sarif_physical(sources: &SourceMap, span: Span) -> Option<Value> {
    let file = sources.get(span.file)?;
    let (line, column) = file.line_col(span.start);
    let (end_line, end_column) = file.line_col(span.end.max(span.start));
    Some(json!({
        "artifactLocation": { "uri": file_uri(&file.display_path()) },
        "region": {
            "startLine": line,
            "startColumn": column,
            "endLine": end_line,
            "endColumn": end_column,
        }
    }))
}

/// A path (with `/` separators) as a URI reference: relative paths stay
/// relative, absolute ones become `file:` URIs; everything outside RFC 3986's
/// unreserved set and `/` is percent-encoded (so a `:` never reads as a scheme).
fn file_uri(path: &str) -> String {
    fn encode(out: &mut String, s: &str) {
        for b in s.bytes() {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
                out.push(char::from(b));
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    let mut out = String::new();
    let bytes = path.as_bytes();
    // `C:/…`: an absolute Windows path (a relative `a:b` stays relative).
    let windows_drive =
        bytes.len() >= 3 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && bytes[2] == b'/';
    if windows_drive {
        out.push_str("file:///");
        out.push_str(&path[..2]);
        encode(&mut out, &path[2..]);
    } else if path.starts_with('/') {
        out.push_str("file://");
        encode(&mut out, path);
    } else {
        encode(&mut out, path);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn file_uris_are_relative_references_or_file_uris() {
        assert_eq!(file_uri("rules/fs.yaml"), "rules/fs.yaml");
        assert_eq!(file_uri("../x/a b#c?.yaml"), "../x/a%20b%23c%3F.yaml");
        assert_eq!(file_uri("c:d.yaml"), "c%3Ad.yaml");
        assert_eq!(file_uri("a:b/c.yaml"), "a%3Ab/c.yaml");
        assert_eq!(file_uri("/srv/règles.yaml"), "file:///srv/r%C3%A8gles.yaml");
        assert_eq!(file_uri("C:/rules/x.yaml"), "file:///C:/rules/x.yaml");
    }

    #[test]
    fn every_code_has_a_description_and_a_distinct_name() {
        let mut names = std::collections::BTreeSet::new();
        for code in Code::ALL {
            assert!(!code.description().is_empty(), "{code}");
            assert!(!code.description().starts_with(' '), "{code}");
            assert!(names.insert(code.pascal_name()), "{code}");
        }
    }
}
