//! Each tool's items, written as text: its statics (outcomes and
//! `inputSchema` literals) and its matching function.

use super::*;

/// A tool's resolutions: each variant's, then the static fallback's.
pub(crate) fn resolutions(server: &Server, tool: &Tool) -> Vec<Resolution> {
    let mut resolutions: Vec<Resolution> = tool
        .variants
        .iter()
        .map(|v| Resolution {
            tool: tool.name.clone(),
            variant: Some(v.name.clone()),
            annotations: server.hints.to_annotations(&v.annotations),
            required_scopes: v.scopes(),
        })
        .collect();
    resolutions.push(Resolution {
        tool: tool.name.clone(),
        variant: None,
        annotations: server.hints.to_annotations(&tool.annotations),
        required_scopes: tool.required_scopes.clone(),
    });
    resolutions
}

/// The two large items of a resolvable tool in a resolver of a few tools,
/// as Rust source: its outcomes, an array of `Resolved` in the runtime at
/// `rt` (see [`outcomes_array`]), and its `inputSchema` (a literal).
pub(super) fn tool_literals(server: &Server, tool: &Tool, rt: &str) -> [String; 2] {
    // Their SEP-1862 results share the tool's text up to its annotations.
    let tool_json = tool.to_model(&server.hints).list_entry(Dialect::Sep1862);
    let outcomes = encode_outcomes(
        &tool_json,
        &tool.name,
        &resolutions(server, tool),
        Form::Array(rt),
    );
    let schema = serde_json::to_string(&tool.input_schema).unwrap_or_default();
    [outcomes, text_literal(&schema)]
}

/// A tool's items in a resolver with a table of tools: its literal
/// `DATA_<index>` (its `tools/list` entry, then, when it is resolvable, its
/// outcomes; see `mcp_resolve_runtime::{listing, outcomes}`), and for a
/// resolvable tool its `GeneratedTool`, whose schema points into the literal
/// (or is a literal of its own when the entry does not spell it), and its
/// matching function.
pub(super) fn table_tool_items(server: &Server, tool: &Tool, index: usize, rt: &str) -> String {
    use std::fmt::Write as _;
    let model = tool.to_model(&server.hints);
    let entries =
        Dialect::ALL.map(|d| serde_json::to_string(&model.list_entry(d)).unwrap_or_default());
    let annotations = server.hints.to_annotations(&tool.annotations);
    let entry = listing::encode(&EntryParts {
        entries: entries.each_ref().map(String::as_str),
        annotations: &annotations,
        resolvable: tool.resolvable,
    });
    let data = if tool.resolvable {
        let tool_json = model.list_entry(Dialect::Sep1862);
        encode_outcomes(
            &tool_json,
            &tool.name,
            &resolutions(server, tool),
            Form::Literal(&entry),
        )
    } else {
        entry
    };
    let doc = doc_text(&tool.name);
    let mut out = String::with_capacity(data.len() + 4096);
    let _ = writeln!(
        out,
        "/// Tool `{doc}`: its `tools/list` entry{}.\nconst DATA_{index}: &str = {};",
        if tool.resolvable { " and outcomes" } else { "" },
        text_literal(&data)
    );
    if !tool.resolvable {
        return out;
    }
    let schema_text = serde_json::to_string(&tool.input_schema).unwrap_or_default();
    // Any place the literal spells the schema's text holds the schema.
    let schema = match data.find(&schema_text) {
        Some(at) => format!(
            "{rt}::LazyValidator::within(DATA_{index}, {at}, {})",
            at + schema_text.len()
        ),
        None => format!(
            "{rt}::LazyValidator::new(\n        {},\n    )",
            text_literal(&schema_text)
        ),
    };
    let name = Literal::string(&tool.name);
    let _ = write!(
        out,
        "/// Tool `{doc}`.\n\
         static TOOL_{index}: {rt}::GeneratedTool = {rt}::GeneratedTool {{\n    \
             name: {name},\n    \
             schema: {schema},\n    \
             outcomes: {rt}::outcomes::Outcomes::new(DATA_{index}),\n    \
             matcher: match_{index},\n\
         }};\n",
    );
    out.push_str(&match_fn(tool, index, rt, false));
    out
}

/// A resolvable tool's items in a resolver of a few tools: its schema, its
/// outcomes as a static array of `Resolved` (`literals`, the two as Rust
/// source, see [`tool_literals`]), and its matching function, `#[inline]`
/// since `resolve` calls it by name (see [`direct_dispatch`]).
pub(super) fn tool_items(tool: &Tool, index: usize, rt: &str, literals: [String; 2]) -> String {
    use std::fmt::Write as _;
    let [outcomes, schema] = literals;
    let doc = doc_text(&tool.name);
    let count = tool.variants.len() + 1;
    let mut out = String::with_capacity(outcomes.len() + schema.len() + 4096);
    let _ = write!(
        out,
        "/// Tool `{doc}`: its `inputSchema`, compiled on first use.\n\
         static SCHEMA_{index}: {rt}::LazyValidator = {rt}::LazyValidator::new(\n    \
             {schema},\n\
         );\n\
         /// Tool `{doc}`: each variant's outcome, in order, then the static\n\
         /// annotations.\n\
         static OUTCOMES_{index}: [{rt}::Resolved; {count}] = {outcomes};\n",
    );
    out.push_str(&match_fn(tool, index, rt, true));
    out
}

/// The function matching a tool's (validated) arguments to the index of
/// its outcome; `#[inline]` where `resolve` calls it by name (`direct`).
fn match_fn(tool: &Tool, index: usize, rt: &str, direct: bool) -> String {
    use std::fmt::Write as _;

    // Checks, in order, until one always holds.
    let mut matcher = Matcher::new();
    let mut checks = String::new();
    let mut tail = tool.variants.len();
    for (i, v) in tool.variants.iter().enumerate() {
        match matcher.cond(&v.when) {
            Code::Const(false) => {}
            Code::Const(true) => {
                tail = i;
                break;
            }
            code => {
                code.write_if(&mut checks, 4);
                let _ = writeln!(checks, "        return {i};\n    }}");
            }
        }
    }
    let doc = doc_text(&tool.name);
    let mut out = String::with_capacity(checks.len() + 1024);
    let _ = writeln!(
        out,
        "/// Matches the (validated) arguments of tool `{doc}`."
    );
    for v in &tool.variants {
        let _ = writeln!(
            out,
            "///\n/// Variant `{}`: `{}`",
            doc_text(&v.name),
            doc_text(&v.when.to_string())
        );
    }
    // The conditions keep the rules' own boolean structure; clippy's
    // suggestions to simplify it are for the rules' author, not the build.
    // Without argument tests the map is not looked at. The names the checks
    // use are imported in the function, where nothing else can shadow them
    // (only those that appear, but an argument's name could spell one).
    let args = if matcher.paths.is_empty() {
        "_args"
    } else {
        "args"
    };
    if direct {
        out.push_str("#[inline]\n");
    }
    let _ = write!(
        out,
        "#[allow(\n    \
             dead_code,\n    \
             unused_imports,\n    \
             clippy::match_like_matches_macro,\n    \
             clippy::nonminimal_bool,\n    \
             clippy::overly_complex_bool_expr\n\
         )]\n\
         fn match_{index}({args}: &{rt}::Arguments) -> usize {{\n"
    );
    let mut locals = String::new();
    for i in 0..matcher.paths.len() {
        let _ = writeln!(locals, "    let arg_{i} = {};", matcher.lookup(i));
    }
    let used = |name: &str| checks.contains(name) || locals.contains(name);
    for (import, needed) in [
        ("::core::matches".to_string(), used("matches!(")),
        ("::core::option::Option::None".into(), used("None")),
        ("::core::option::Option::Some".into(), used("Some(")),
        (format!("{rt}::json"), used("json::")),
        (
            format!("{rt}::pattern::LazyPattern"),
            !matcher.regexes.is_empty(),
        ),
        (format!("{rt}::serde_json::Value"), used("Value::")),
    ] {
        if needed {
            let _ = writeln!(out, "    use {import};");
        }
    }
    for (i, re) in matcher.regexes.iter().enumerate() {
        let _ = writeln!(
            out,
            "    static RE_{i}: LazyPattern = LazyPattern::new({});",
            Literal::string(re)
        );
    }
    out.push_str(&locals);
    out.push_str(&checks);
    let _ = writeln!(out, "    {tail}\n}}");
    out
}

/// The runtime crate's path, a module path such as `::mcp_resolve_runtime`
/// or `crate::runtime`: parsed, and as Rust source.
pub(super) fn runtime_path(path: &str) -> Result<(syn::Path, String), CodegenError> {
    let parsed: syn::Path = syn::parse_str(path).map_err(|e| CodegenError::RuntimePath {
        path: path.to_string(),
        why: e.to_string(),
    })?;
    let mut text = String::new();
    if parsed.leading_colon.is_some() {
        text.push_str("::");
    }
    for (i, segment) in parsed.segments.iter().enumerate() {
        if !segment.arguments.is_none() {
            return Err(CodegenError::RuntimePath {
                path: path.to_string(),
                why: "a module path has no generic arguments".into(),
            });
        }
        if i > 0 {
            text.push_str("::");
        }
        text.push_str(&segment.ident.to_string());
    }
    Ok((parsed, text))
}

/// User text on one doc line: control characters escaped (each line is its
/// own `///` comment, so nothing can end it early).
pub(super) fn doc_text(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}
