//! The `.rules` front end (SPEC §5): text to the same [`RulesFile`] AST as
//! the YAML front end, through the pest grammar in `crates/compiler/grammar/rules.pest`.

use std::path::Path;

use pest::Parser as _;
use pest::iterators::Pair;
use serde_json::Value;

use super::decode::SchemaLoader;
use super::expr::Builder;
use super::grammar::{self, Grammar, Rule};
use crate::ast::*;
use crate::diagnostic::{Code, Diagnostic};
use crate::source::{FileId, Span, Spanned};
use crate::suggest;

/// Entry keywords, for "did you mean" on a misspelled one.
const TOP_KEYWORDS: &[&str] = &["version", "server", "hint", "tool"];
const TOOL_KEYWORDS: &[&str] = &[
    "title",
    "description",
    "inputSchema",
    "inputSchemaFile",
    "annotations",
    "requiredScopes",
    "resolvable",
    "variant",
    "outputSchema",
    "icons",
    "execution",
    "_meta",
    "trust",
];
const VARIANT_KEYWORDS: &[&str] = &["annotations", "requiredScopes"];

/// Parses one `.rules` file. A syntax error stops the file (one diagnostic);
/// every later problem is collected.
pub fn parse(
    text: &str,
    file: FileId,
    load_schema: &mut SchemaLoader<'_>,
    diags: &mut Vec<Diagnostic>,
) -> Option<RulesFile> {
    grammar::set_limits();
    let identity = |i: usize| i.min(text.len());
    if let Err(d) = grammar::check_nesting(text, grammar::MAX_FILE_NESTING, file, &identity) {
        diags.push(d);
        return None;
    }
    let pairs = match Grammar::parse(Rule::file, text) {
        Ok(mut pairs) => pairs.next()?,
        Err(e) => {
            diags.push(better_error(
                grammar::syntax_error(&e, text, file, &identity),
                &e,
                text,
            ));
            return None;
        }
    };
    let mut d = Dsl {
        b: Builder {
            file,
            map: &identity,
        },
        diags,
    };
    let mut rules = RulesFile {
        file,
        version: None,
        server: None,
        hints: Vec::new(),
        tools: Vec::new(),
    };
    for item in pairs.into_inner() {
        let span = d.b.span(&item);
        match item.as_rule() {
            Rule::version_item => {
                let Some(n) = item.into_inner().nth(1) else {
                    continue;
                };
                let value = n.as_str().parse::<u64>().unwrap_or(u64::MAX);
                if rules.version.is_some() {
                    d.duplicate("version", span);
                } else if value != 1 {
                    d.diags.push(
                        Diagnostic::new(
                            Code::InvalidValue,
                            format!("unsupported rules format version `{}`", n.as_str()),
                        )
                        .at(d.b.span(&n))
                        .with_help("this compiler reads `version 1`"),
                    );
                }
                rules
                    .version
                    .get_or_insert(Spanned::new(value, d.b.span(&n)));
            }
            Rule::server_item => {
                let mut parts = item.into_inner();
                let (_, Some(name), _, Some(version)) =
                    (parts.next(), parts.next(), parts.next(), parts.next())
                else {
                    continue;
                };
                let decl = ServerDecl {
                    name: d.name(name),
                    version: d.name(version),
                    span,
                };
                if rules.server.is_some() {
                    d.duplicate("server", span);
                } else {
                    rules.server = Some(decl);
                }
            }
            Rule::hint_item => {
                if let Some(h) = d.hint(item) {
                    rules.hints.push(h);
                }
            }
            Rule::tool_item => {
                if let Some(t) = d.tool(item, load_schema) {
                    rules.tools.push(t);
                }
            }
            _ => {}
        }
    }
    let start = Span::new(file, 0, 0);
    if rules.version.is_none() {
        d.diags.push(
            Diagnostic::new(Code::MissingField, "missing `version` in rules file")
                .at(start)
                .with_help("begin the file with `version 1`"),
        );
    }
    // No `tool` at all is a server without tools, as YAML's `tools: []`.
    Some(rules)
}

/// Turns "expected `title`, … found `titel`" into an `unknown-field` with a
/// suggestion when the unexpected token is a word where a keyword belongs.
fn better_error(d: Diagnostic, err: &pest::error::Error<Rule>, text: &str) -> Diagnostic {
    use pest::error::{ErrorVariant, InputLocation};
    let ErrorVariant::ParsingError { positives, .. } = &err.variant else {
        return d;
    };
    let pos = match err.location {
        InputLocation::Pos(p) => p,
        InputLocation::Span((s, _)) => s,
    };
    let word = grammar::token_at(text, pos);
    if word.is_empty() || !word.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return d;
    }
    let (keywords, what): (&[&str], &str) = if positives.contains(&Rule::kw_title) {
        (TOOL_KEYWORDS, "tool")
    } else if positives.contains(&Rule::kw_tool) && !positives.contains(&Rule::kw_title) {
        (TOP_KEYWORDS, "rules file")
    } else if positives.contains(&Rule::kw_annotations) {
        (VARIANT_KEYWORDS, "variant")
    } else {
        return d;
    };
    let help = suggest::did_you_mean(word, keywords.iter().copied())
        .unwrap_or_else(|| format!("{what} entries are {}", suggest::backticked(keywords, ", ")));
    let mut out = Diagnostic::new(
        Code::UnknownField,
        format!("unknown field `{word}` in {what}"),
    )
    .with_help(help);
    out.span = d.span;
    out
}

struct Dsl<'a, 'm> {
    b: Builder<'m>,
    diags: &'a mut Vec<Diagnostic>,
}

impl Dsl<'_, '_> {
    fn duplicate(&mut self, what: &str, span: Span) {
        self.diags.push(
            Diagnostic::new(Code::UnknownField, format!("`{what}` is given twice"))
                .at(span)
                .with_help("keep one"),
        );
    }

    /// A `name` pair (bare or quoted) or a `string` pair.
    fn name(&mut self, pair: Pair<'_, Rule>) -> Spanned<String> {
        let span = self.b.span(&pair);
        let inner = if pair.as_rule() == Rule::name {
            pair.into_inner().next()
        } else {
            Some(pair)
        };
        match inner {
            Some(p) if p.as_rule() == Rule::string => match self.b.string(p) {
                Ok(s) => Spanned::new(s, span),
                Err(d) => {
                    self.diags.push(d);
                    Spanned::new(String::new(), span)
                }
            },
            Some(p) => Spanned::new(p.as_str().to_string(), span),
            None => Spanned::new(String::new(), span),
        }
    }

    fn settings(&mut self, pair: Pair<'_, Rule>) -> Vec<HintSetting> {
        self.settings_with(pair, None)
    }

    /// Hint settings; a string value is `ToolAnnotations`' `title`, taken
    /// where the caller has a place for it (a tool's annotations) and
    /// refused with a reason elsewhere.
    fn settings_with(
        &mut self,
        pair: Pair<'_, Rule>,
        mut title: Option<&mut Option<Spanned<String>>>,
    ) -> Vec<HintSetting> {
        let mut out = Vec::new();
        for setting in pair.into_inner() {
            let mut parts = setting.into_inner();
            let (Some(name), Some(value)) = (parts.next(), parts.next()) else {
                continue;
            };
            let vspan = self.b.span(&value);
            let name = self.name(name);
            if value.as_rule() == Rule::string {
                let text = self.name(value);
                match (&mut title, name.value == "title") {
                    (Some(slot), true) => **slot = Some(text),
                    (None, true) => self.diags.push(
                        Diagnostic::new(
                            Code::InvalidValue,
                            "`title` is not a hint: a variant's annotations hold hints only",
                        )
                        .at(name.span)
                        .with_help("set the display title in the tool's `annotations`"),
                    ),
                    (_, false) => self.diags.push(
                        Diagnostic::new(
                            Code::InvalidValue,
                            format!(
                                "expected `true` or `false` for `{}`, found a string",
                                name.value
                            ),
                        )
                        .at(vspan),
                    ),
                }
                continue;
            }
            out.push(HintSetting {
                name,
                value: Spanned::new(value.as_str() == "true", vspan),
            });
        }
        out
    }

    /// Inline JSON after a keyword (`inputSchema { … }`, `icons [ … ]`).
    fn json(&mut self, entry: Pair<'_, Rule>) -> Option<Spanned<Value>> {
        let json = entry.into_inner().nth(1)?;
        let jspan = self.b.span(&json);
        match serde_json::from_str::<Value>(json.as_str()) {
            Ok(v) => Some(Spanned::new(v, jspan)),
            Err(e) => {
                let off = json_error_offset(json.as_str(), e.line(), e.column());
                let at = jspan.start + off;
                self.diags.push(
                    Diagnostic::new(Code::Syntax, format!("invalid JSON: {e}")).at(Span::new(
                        jspan.file,
                        at,
                        at + 1,
                    )),
                );
                None
            }
        }
    }

    fn hint(&mut self, item: Pair<'_, Rule>) -> Option<HintDecl> {
        let span = self.b.span(&item);
        let mut parts = item.into_inner();
        let _kw = parts.next();
        let name = self.name(parts.next()?);
        let settings = self.settings(parts.next()?);
        let what = format!("hint `{}`", name.value);
        let mut worst = None;
        let mut default = None;
        for s in settings {
            let slot = match s.name.value.as_str() {
                "worst" => &mut worst,
                "default" => &mut default,
                other => {
                    self.diags.push(
                        Diagnostic::new(
                            Code::UnknownField,
                            format!("unknown field `{other}` in {what}"),
                        )
                        .at(s.name.span)
                        .with_help(
                            suggest::did_you_mean(other, ["worst", "default"])
                                .unwrap_or_else(|| "hint fields are `worst` and `default`".into()),
                        ),
                    );
                    continue;
                }
            };
            if slot.is_some() {
                self.duplicate(&s.name.value, s.name.span);
            }
            *slot = Some(s.value.value);
        }
        for (field, value) in [("worst", worst), ("default", default)] {
            if value.is_none() {
                self.diags.push(
                    Diagnostic::new(
                        Code::MissingField,
                        format!("missing field `{field}` in {what}"),
                    )
                    .at(Span::new(span.file, span.start, span.start)),
                );
            }
        }
        Some(HintDecl {
            name,
            worst: worst?,
            default: default?,
        })
    }

    fn scopes(&mut self, pair: Pair<'_, Rule>) -> Vec<Spanned<String>> {
        pair.into_inner()
            .filter(|p| p.as_rule() == Rule::string)
            .map(|p| self.name(p))
            .collect()
    }

    #[expect(
        clippy::too_many_lines,
        reason = "one arm per clause of a `.rules` tool, as the grammar lists them"
    )]
    fn tool(
        &mut self,
        item: Pair<'_, Rule>,
        load_schema: &mut SchemaLoader<'_>,
    ) -> Option<ToolDecl> {
        let span = self.b.span(&item);
        let mut parts = item.into_inner();
        let _kw = parts.next();
        let name = self.name(parts.next()?);
        let mut tool = ToolDecl {
            name,
            title: None,
            description: None,
            input_schema: None,
            output_schema: None,
            annotations: None,
            annotations_title: None,
            icons: None,
            execution: None,
            meta: None,
            trust: None,
            required_scopes: None,
            variants: None,
            span,
        };
        let mut seen: Vec<&'static str> = Vec::new();
        let mut ok = true;
        for entry in parts {
            let espan = self.b.span(&entry);
            let key = match entry.as_rule() {
                Rule::title => "title",
                Rule::description => "description",
                Rule::input_schema | Rule::input_schema_file => "inputSchema",
                Rule::output_schema => "outputSchema",
                Rule::icons => "icons",
                Rule::execution => "execution",
                Rule::meta => "_meta",
                Rule::trust => "trust",
                Rule::annotations => "annotations",
                Rule::scopes => "requiredScopes",
                _ => "",
            };
            if !key.is_empty() {
                if seen.contains(&key) {
                    let what = if key == "inputSchema" {
                        "`inputSchema` or `inputSchemaFile`"
                    } else {
                        key
                    };
                    self.diags.push(
                        Diagnostic::new(
                            Code::InvalidValue,
                            format!(
                                "{} is given twice in tool `{}`",
                                backtick(what),
                                tool.name.value
                            ),
                        )
                        .at(espan)
                        .with_help("a tool has one of each"),
                    );
                    ok = false;
                    continue;
                }
                seen.push(key);
            }
            match entry.as_rule() {
                Rule::title => {
                    let s = entry.into_inner().nth(1).map(|p| self.name(p));
                    tool.title = s.map(|s| s.value);
                }
                Rule::description => {
                    let s = entry.into_inner().nth(1).map(|p| self.name(p));
                    tool.description = s.map(|s| s.value);
                }
                Rule::input_schema => match self.json(entry) {
                    Some(v) => tool.input_schema = Some(SchemaSource::Inline(v)),
                    None => ok = false,
                },
                Rule::output_schema | Rule::icons | Rule::execution | Rule::meta | Rule::trust => {
                    let Some(v) = self.json(entry) else {
                        ok = false;
                        continue;
                    };
                    if let Err(message) = super::check_tool_member(key, &v.value) {
                        self.diags
                            .push(Diagnostic::new(Code::InvalidValue, message).at(v.span));
                        continue;
                    }
                    let slot = match key {
                        "outputSchema" => &mut tool.output_schema,
                        "icons" => &mut tool.icons,
                        "execution" => &mut tool.execution,
                        "trust" => &mut tool.trust,
                        _ => &mut tool.meta,
                    };
                    *slot = Some(v);
                }
                Rule::input_schema_file => {
                    let Some(p) = entry.into_inner().nth(1) else {
                        continue;
                    };
                    let path = self.name(p);
                    let schema = match load_schema(Path::new(&path.value)) {
                        Ok(s) => Some(s),
                        Err(message) => {
                            self.diags.push(
                                Diagnostic::new(
                                    Code::Io,
                                    format!("cannot load `{}`: {message}", path.value),
                                )
                                .at(path.span),
                            );
                            None
                        }
                    };
                    tool.input_schema = Some(SchemaSource::File { path, schema });
                }
                Rule::annotations => {
                    let Some(s) = entry.into_inner().nth(1) else {
                        continue;
                    };
                    let mut title = None;
                    tool.annotations = Some(self.settings_with(s, Some(&mut title)));
                    tool.annotations_title = title;
                }
                Rule::scopes => tool.required_scopes = Some(self.scopes(entry)),
                Rule::resolvable => {
                    tool.variants.get_or_insert_with(Vec::new);
                }
                Rule::variant => {
                    if let Some(v) = self.variant(entry) {
                        tool.variants.get_or_insert_with(Vec::new).push(v);
                    }
                }
                _ => {}
            }
        }
        if tool.input_schema.is_none() && ok {
            self.diags.push(
                Diagnostic::new(
                    Code::MissingField,
                    format!("missing field `inputSchema` in tool `{}`", tool.name.value),
                )
                .at(Span::new(span.file, span.start, span.start)),
            );
        }
        ok.then_some(tool)
    }

    fn variant(&mut self, entry: Pair<'_, Rule>) -> Option<VariantDecl> {
        let start = self.b.span(&entry).start;
        let mut parts = entry.into_inner();
        let _kw = parts.next();
        let name = self.name(parts.next()?);
        let mut when = When::Always(name.span);
        let mut annotations = None;
        let mut required_scopes = None;
        for p in parts {
            match p.as_rule() {
                Rule::when_clause => {
                    let Some(e) = p.into_inner().nth(1) else {
                        continue;
                    };
                    let espan = self.b.span(&e);
                    when = match self.b.expr(e) {
                        Ok(expr) => When::Expr(expr),
                        Err(d) => {
                            self.diags.push(d);
                            When::Invalid(espan)
                        }
                    };
                }
                Rule::variant_body => {
                    for item in p.into_inner() {
                        let ispan = self.b.span(&item);
                        match item.as_rule() {
                            Rule::annotations => {
                                if annotations.is_some() {
                                    self.duplicate("annotations", ispan);
                                }
                                if let Some(s) = item.into_inner().nth(1) {
                                    annotations = Some(self.settings(s));
                                }
                            }
                            Rule::scopes => {
                                if required_scopes.is_some() {
                                    self.duplicate("requiredScopes", ispan);
                                }
                                required_scopes = Some(self.scopes(item));
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        Some(VariantDecl {
            span: Span::new(name.span.file, start, name.span.end),
            name,
            when,
            annotations: annotations.unwrap_or_default(),
            required_scopes,
        })
    }
}

fn backtick(s: &str) -> String {
    if s.starts_with('`') {
        s.to_string()
    } else {
        format!("`{s}`")
    }
}

/// A byte offset from serde_json's 1-based line and column.
fn json_error_offset(text: &str, line: usize, column: usize) -> usize {
    let mut offset = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            return (offset + column.saturating_sub(1)).min(text.len());
        }
        offset += l.len();
    }
    text.len()
}
