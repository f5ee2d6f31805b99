//! Decodes the YAML tree into the rules AST, collecting every problem.

use std::path::Path;

use serde_json::Value;

use super::yaml::{YNode, YValue};
use crate::ast::*;
use crate::diagnostic::{Code, Diagnostic};
use crate::source::{FileId, Span, Spanned};
use crate::suggest;

mod when;

const TOP_FIELDS: &[&str] = &["version", "server", "hints", "tools"];
const SERVER_FIELDS: &[&str] = &["name", "version"];
const HINT_FIELDS: &[&str] = &["worst", "default"];
const TOOL_FIELDS: &[&str] = &[
    "name",
    "title",
    "description",
    "inputSchema",
    "inputSchemaFile",
    "outputSchema",
    "annotations",
    "requiredScopes",
    "variants",
    "icons",
    "execution",
    "_meta",
    "trust",
];
const VARIANT_FIELDS: &[&str] = &["name", "when", "annotations", "requiredScopes"];
/// The JSON Schema keywords a matcher mapping may use (SPEC §3.1), and `absent`.
pub const MATCHER_KEYWORDS: &[&str] = &[
    "const",
    "enum",
    "type",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "not",
    "anyOf",
    "allOf",
    "minItems",
    "maxItems",
    "items",
    "contains",
    "properties",
    "required",
    "absent",
];

/// Loads an `inputSchemaFile`: returns the schema or a message.
pub type SchemaLoader<'a> = dyn FnMut(&Path) -> Result<Value, String> + 'a;

/// Decodes one rules document.
pub fn decode(
    root: &YNode,
    file: FileId,
    text: &str,
    load_schema: &mut SchemaLoader<'_>,
    diags: &mut Vec<Diagnostic>,
) -> RulesFile {
    let mut d = Decoder { file, text, diags };
    let mut rules = RulesFile {
        file,
        version: None,
        server: None,
        hints: Vec::new(),
        tools: Vec::new(),
    };
    // A file with nothing in it (or only comments): say so, and how one
    // begins, rather than that `null` is not a mapping.
    if matches!(root.value, YValue::Null)
        && text.lines().all(|l| {
            let l = l.trim();
            l.is_empty() || l.starts_with('#') || l == "---" || l == "..."
        })
    {
        d.error(
            Code::MissingField,
            "the rules file is empty".to_string(),
            Span::new(file, 0, 0),
        )
        .help = Some(
            "a rules file begins `version: 1`, then `server: { name: my-server, version: 1.0.0 }` and `tools: [...]`".into(),
        );
        return rules;
    }
    let Some(fields) = d.fields(root, "rules file", TOP_FIELDS) else {
        return rules;
    };
    match fields.get("version") {
        Some(v) => {
            if let Some(n) = d.uint(v, "`version`") {
                if n.value != 1 {
                    d.error(
                        Code::InvalidValue,
                        format!("unsupported rules format version `{}`", n.value),
                        n.span,
                    )
                    .help = Some("this compiler reads `version: 1`".into());
                }
                rules.version = Some(n);
            }
        }
        None => d.missing("version", "rules file", root),
    }
    if let Some(server) = fields.get("server") {
        rules.server = d.server(server);
    }
    if let Some(hints) = fields.get("hints") {
        rules.hints = d.hints(hints);
    }
    match fields.get("tools") {
        Some(tools) => {
            if let Some(items) = d.seq(tools, "`tools`") {
                rules.tools = items
                    .iter()
                    .filter_map(|t| d.tool(t, load_schema))
                    .collect();
            }
        }
        None => d.missing("tools", "rules file", root),
    }
    rules
}

/// The fields of one mapping, by name, in source order.
struct Fields<'n> {
    entries: Vec<(&'n str, &'n YNode, &'n YNode)>,
}

impl<'n> Fields<'n> {
    fn get(&self, name: &str) -> Option<&'n YNode> {
        self.entries
            .iter()
            .find(|(k, _, _)| *k == name)
            .map(|(_, _, v)| *v)
    }
}

struct Decoder<'d> {
    file: FileId,
    text: &'d str,
    diags: &'d mut Vec<Diagnostic>,
}

/// Decodes a matcher subschema (a keyword mapping, as under `not`): the
/// argument of `satisfies()` in the expression language.
pub fn schema_matcher(
    node: &YNode,
    file: FileId,
    diags: &mut Vec<Diagnostic>,
) -> Option<ValueMatcher> {
    Decoder {
        file,
        text: "",
        diags,
    }
    .schema_matcher(node)
}

/// For each byte offset in a YAML string's value (and one past its end), the
/// file offset it was written at. `raw` is the scalar's source text starting
/// at `start`. Escapes in double quotes map to the escape; lines found
/// verbatim map exactly; anything else maps to the scalar's start.
pub fn string_offsets(raw: &str, start: usize, value: &str) -> Vec<usize> {
    if let Some(body) = raw.strip_prefix('"')
        && let Some(map) = double_quoted_offsets(body, start + 1, value)
    {
        return map;
    }
    let mut map = vec![start; value.len() + 1];
    let mut cursor = 0;
    let mut at = 0;
    for line in value.split_inclusive('\n') {
        let content = line.trim_end_matches('\n');
        if let Some(found) = raw.get(cursor..).and_then(|r| r.find(content)) {
            let base = cursor + found;
            for i in 0..=content.len() {
                map[at + i] = start + base + i;
            }
            cursor = base + content.len();
        }
        at += line.len();
    }
    if let (Some(last), Some(prev)) = (map.last().copied(), value.len().checked_sub(1))
        && last == start
        && prev < map.len()
    {
        map[value.len()] = map[prev] + 1;
    }
    map
}

fn double_quoted_offsets(body: &str, start: usize, value: &str) -> Option<Vec<usize>> {
    let mut map = Vec::with_capacity(value.len() + 1);
    let mut decoded = String::new();
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let ch = match c {
            '"' => break,
            '\\' => {
                let (_, e) = chars.next()?;
                let digits = match e {
                    'x' => 2,
                    'u' => 4,
                    'U' => 8,
                    _ => 0,
                };
                if digits > 0 {
                    let mut v = 0u32;
                    for _ in 0..digits {
                        v = v * 16 + chars.next()?.1.to_digit(16)?;
                    }
                    char::from_u32(v)?
                } else {
                    match e {
                        'n' => '\n',
                        't' | '\t' => '\t',
                        'r' => '\r',
                        '0' => '\0',
                        '"' | '\\' | '/' | ' ' => e,
                        _ => return None,
                    }
                }
            }
            '\n' | '\r' => return None,
            c => c,
        };
        for _ in 0..ch.len_utf8() {
            map.push(start + i);
        }
        decoded.push(ch);
    }
    if decoded != value {
        return None;
    }
    map.push(map.last().map_or(start, |l| l + 1));
    Some(map)
}

impl Decoder<'_> {
    fn span(&self, node: &YNode) -> Span {
        Span::new(self.file, node.start, node.end)
    }

    fn error(&mut self, code: Code, message: String, span: Span) -> &mut Diagnostic {
        self.diags.push(Diagnostic::new(code, message).at(span));
        let last = self.diags.len() - 1;
        &mut self.diags[last]
    }

    fn missing(&mut self, field: &str, what: &str, node: &YNode) {
        let span = self.span(node);
        self.error(
            Code::MissingField,
            format!("missing field `{field}` in {what}"),
            Span::new(span.file, span.start, span.start),
        );
    }

    fn wrong(&mut self, node: &YNode, expected: &str) {
        let span = self.span(node);
        self.error(
            Code::InvalidValue,
            format!("expected {expected}, found {}", node.value.kind()),
            span,
        );
    }

    /// A mapping with string keys, every key in `allowed`.
    fn fields<'n>(&mut self, node: &'n YNode, what: &str, allowed: &[&str]) -> Option<Fields<'n>> {
        let YValue::Map(entries) = &node.value else {
            self.wrong(node, &format!("a mapping for {what}"));
            return None;
        };
        let mut fields = Fields {
            entries: Vec::new(),
        };
        for (k, v) in entries {
            let YValue::String(key) = &k.value else {
                self.wrong(k, "a string key");
                continue;
            };
            if !allowed.contains(&key.as_str()) {
                let help =
                    suggest::did_you_mean(key, allowed.iter().copied()).unwrap_or_else(|| {
                        format!("{what} fields are {}", suggest::backticked(allowed, ", "))
                    });
                let span = self.span(k);
                self.error(
                    Code::UnknownField,
                    format!("unknown field `{key}` in {what}"),
                    span,
                )
                .help = Some(help);
                continue;
            }
            fields.entries.push((key.as_str(), k, v));
        }
        Some(fields)
    }

    fn seq<'n>(&mut self, node: &'n YNode, what: &str) -> Option<&'n [YNode]> {
        match &node.value {
            YValue::Seq(items) => Some(items),
            _ => {
                self.wrong(node, &format!("a sequence for {what}"));
                None
            }
        }
    }

    fn string(&mut self, node: &YNode, what: &str) -> Option<Spanned<String>> {
        match &node.value {
            YValue::String(s) => Some(Spanned::new(s.clone(), self.span(node))),
            // `version: 1.0` and friends: a plain scalar that YAML typed; keep its text.
            YValue::Number(n) if what.contains("version") => {
                Some(Spanned::new(n.to_string(), self.span(node)))
            }
            _ => {
                self.wrong(node, &format!("a string for {what}"));
                None
            }
        }
    }

    fn boolean(&mut self, node: &YNode, what: &str) -> Option<Spanned<bool>> {
        match &node.value {
            YValue::Bool(b) => Some(Spanned::new(*b, self.span(node))),
            _ => {
                self.wrong(node, &format!("`true` or `false` for {what}"));
                None
            }
        }
    }

    fn uint(&mut self, node: &YNode, what: &str) -> Option<Spanned<u64>> {
        match &node.value {
            YValue::Number(n) if n.as_u64().is_some() => {
                Some(Spanned::new(n.as_u64().unwrap_or(0), self.span(node)))
            }
            _ => {
                self.wrong(node, &format!("a non-negative integer for {what}"));
                None
            }
        }
    }

    fn number(&mut self, node: &YNode, what: &str) -> Option<Spanned<serde_json::Number>> {
        match &node.value {
            YValue::Number(n) => Some(Spanned::new(n.clone(), self.span(node))),
            _ => {
                self.wrong(node, &format!("a number for {what}"));
                None
            }
        }
    }

    fn server(&mut self, node: &YNode) -> Option<ServerDecl> {
        let fields = self.fields(node, "`server`", SERVER_FIELDS)?;
        let name = match fields.get("name") {
            Some(n) => self.string(n, "`server.name`"),
            None => {
                self.missing("name", "`server`", node);
                None
            }
        };
        let version = match fields.get("version") {
            Some(v) => self.string(v, "`server.version`"),
            None => {
                self.missing("version", "`server`", node);
                None
            }
        };
        Some(ServerDecl {
            name: name?,
            version: version?,
            span: self.span(node),
        })
    }

    fn hints(&mut self, node: &YNode) -> Vec<HintDecl> {
        let YValue::Map(entries) = &node.value else {
            self.wrong(node, "a mapping of hint declarations for `hints`");
            return Vec::new();
        };
        let mut out = Vec::new();
        for (k, v) in entries {
            let Some(name) = self.string(k, "a hint name") else {
                continue;
            };
            let what = format!("hint `{}`", name.value);
            let Some(fields) = self.fields(v, &what, HINT_FIELDS) else {
                continue;
            };
            let worst = match fields.get("worst") {
                Some(w) => self.boolean(w, "`worst`").map(|b| b.value),
                None => {
                    self.missing("worst", &what, v);
                    None
                }
            };
            let default = match fields.get("default") {
                Some(w) => self.boolean(w, "`default`").map(|b| b.value),
                None => {
                    self.missing("default", &what, v);
                    None
                }
            };
            if let (Some(worst), Some(default)) = (worst, default) {
                out.push(HintDecl {
                    name,
                    worst,
                    default,
                });
            }
        }
        out
    }

    /// A tool's `annotations`: its hints and `ToolAnnotations`' `title`.
    fn tool_settings(&mut self, node: &YNode) -> (Vec<HintSetting>, Option<Spanned<String>>) {
        let mut title = None;
        let settings = self.settings_with(node, "`annotations`", &mut Some(&mut title));
        (settings, title)
    }

    fn settings(&mut self, node: &YNode, what: &str) -> Vec<HintSetting> {
        self.settings_with(node, what, &mut None)
    }

    /// Hint settings; `title` is taken where the caller has a place for it
    /// (a tool's annotations) and refused with a reason elsewhere.
    fn settings_with(
        &mut self,
        node: &YNode,
        what: &str,
        title: &mut Option<&mut Option<Spanned<String>>>,
    ) -> Vec<HintSetting> {
        let YValue::Map(entries) = &node.value else {
            self.wrong(node, &format!("a mapping of hints for {what}"));
            return Vec::new();
        };
        let mut out = Vec::new();
        for (k, v) in entries {
            let Some(name) = self.string(k, "a hint name") else {
                continue;
            };
            if name.value == "title" {
                match title {
                    Some(slot) => **slot = self.string(v, "`annotations.title`"),
                    None => {
                        self.error(
                            Code::InvalidValue,
                            "`title` is not a hint: a variant's annotations hold hints only".into(),
                            name.span,
                        )
                        .help = Some("set the display title in the tool's `annotations`".into());
                    }
                }
                continue;
            }
            let Some(value) = self.boolean(v, &format!("`{}`", name.value)) else {
                continue;
            };
            out.push(HintSetting { name, value });
        }
        out
    }

    fn scopes(&mut self, node: &YNode) -> Option<Vec<Spanned<String>>> {
        let items = self.seq(node, "`requiredScopes`")?;
        Some(
            items
                .iter()
                .filter_map(|s| self.string(s, "a scope"))
                .collect(),
        )
    }

    fn tool(&mut self, node: &YNode, load_schema: &mut SchemaLoader<'_>) -> Option<ToolDecl> {
        let fields = self.fields(node, "tool", TOOL_FIELDS)?;
        let Some(name_node) = fields.get("name") else {
            self.missing("name", "tool", node);
            return None;
        };
        let name = self.string(name_node, "`name`")?;
        let title = fields
            .get("title")
            .and_then(|t| self.string(t, "`title`"))
            .map(|s| s.value);
        let description = fields
            .get("description")
            .and_then(|t| self.string(t, "`description`"))
            .map(|s| s.value);
        let input_schema = match (fields.get("inputSchema"), fields.get("inputSchemaFile")) {
            (Some(inline), None) => Some(SchemaSource::Inline(Spanned::new(
                inline.to_json(),
                self.span(inline),
            ))),
            (None, Some(path)) => {
                let path = self.string(path, "`inputSchemaFile`")?;
                let schema = match load_schema(Path::new(&path.value)) {
                    Ok(schema) => Some(schema),
                    Err(message) => {
                        self.error(
                            Code::Io,
                            format!("cannot load `{}`: {message}", path.value),
                            path.span,
                        );
                        None
                    }
                };
                Some(SchemaSource::File { path, schema })
            }
            (Some(_), Some(file)) => {
                let span = self.span(file);
                self.error(
                    Code::InvalidValue,
                    "a tool has either `inputSchema` or `inputSchemaFile`, not both".into(),
                    span,
                );
                None
            }
            (None, None) => {
                self.missing("inputSchema", &format!("tool `{}`", name.value), node);
                None
            }
        };
        let mut annotations_title = None;
        let annotations = fields.get("annotations").map(|a| {
            let (settings, title) = self.tool_settings(a);
            annotations_title = title;
            settings
        });
        let mut member = |key: &str| {
            let node = fields.get(key)?;
            let value = node.to_json();
            match super::check_tool_member(key, &value) {
                Ok(()) => Some(Spanned::new(value, self.span(node))),
                Err(message) => {
                    let span = self.span(node);
                    self.error(Code::InvalidValue, message, span);
                    None
                }
            }
        };
        let output_schema = member("outputSchema");
        let icons = member("icons");
        let execution = member("execution");
        let meta = member("_meta");
        let trust = member("trust");
        let required_scopes = fields.get("requiredScopes").and_then(|s| self.scopes(s));
        let variants = fields.get("variants").map(|v| {
            self.seq(v, "`variants`")
                .map(|items| items.iter().filter_map(|i| self.variant(i)).collect())
                .unwrap_or_default()
        });
        Some(ToolDecl {
            name,
            title,
            description,
            input_schema,
            output_schema,
            annotations,
            annotations_title,
            icons,
            execution,
            meta,
            trust,
            required_scopes,
            variants,
            span: self.span(node),
        })
    }

    fn variant(&mut self, node: &YNode) -> Option<VariantDecl> {
        let fields = self.fields(node, "variant", VARIANT_FIELDS)?;
        let Some(name_node) = fields.get("name") else {
            self.missing("name", "variant", node);
            return None;
        };
        let name = self.string(name_node, "`name`")?;
        let when = match fields.get("when") {
            None => When::Always(name.span),
            Some(w) => self.when(w)?,
        };
        let annotations = fields
            .get("annotations")
            .map(|a| self.settings(a, "`annotations`"))
            .unwrap_or_default();
        let required_scopes = fields.get("requiredScopes").and_then(|s| self.scopes(s));
        let start = node.start.min(name.span.start);
        Some(VariantDecl {
            span: Span::new(self.file, start, name.span.end),
            name,
            when,
            annotations,
            required_scopes,
        })
    }
}

/// The JSON Schema type names.
pub const JSON_TYPES: &[&str] = &[
    "null", "boolean", "object", "array", "number", "integer", "string",
];
