//! Each tool's items, written as text: its statics (outcomes and
//! `inputSchema` literals) and its matching function.

use super::*;

/// The two large items of a tool, as Rust source: its outcomes and its
/// `inputSchema` (a literal). The outcomes are the literal the runtime
/// decodes (see [`mcp_resolve_runtime::outcomes`]), or, for a resolver of
/// a few tools (`array_in`: the runtime's path), an array of `Resolved`
/// written out (see [`outcomes_array`]).
pub(super) fn tool_literals(server: &Server, tool: &Tool, array_in: Option<&str>) -> [String; 2] {
    // Outcomes: each variant, then the static fallback. Their SEP-1862
    // results share the tool's text up to its annotations.
    let tool_json = tool.to_model(&server.hints).list_entry(Dialect::Sep1862);
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
    let outcomes = encode_outcomes(&tool_json, &tool.name, &resolutions, array_in);
    let schema = serde_json::to_string(&tool.input_schema).unwrap_or_default();
    let outcomes = match array_in {
        Some(_) => outcomes,
        None => text_literal(&outcomes),
    };
    [outcomes, text_literal(&schema)]
}

/// One tool's items: its `GeneratedTool` (its schema, its outcomes as one
/// literal, and its matching function) and the function matching its
/// arguments to the index of its outcome. `literals` are the outcomes' and
/// the schema's literals, as Rust source. The matching function is
/// `#[inline]` where `resolve` calls it by name (`direct`, see
/// [`direct_dispatch`]).
pub(super) fn tool_items(
    tool: &Tool,
    index: usize,
    rt: &str,
    direct: bool,
    literals: [String; 2],
) -> String {
    use std::fmt::Write as _;
    let [outcomes, schema] = literals;

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

    let mut out = String::with_capacity(outcomes.len() + schema.len() + checks.len() + 1024);
    let name = Literal::string(&tool.name);
    let doc = doc_text(&tool.name);
    if direct {
        let count = tool.variants.len() + 1;
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
    } else {
        let _ = write!(
            out,
            "/// Tool `{doc}`.\n\
             static TOOL_{index}: {rt}::GeneratedTool = {rt}::GeneratedTool {{\n    \
                 name: {name},\n    \
                 schema: {rt}::LazyValidator::new(\n        {schema},\n    ),\n    \
                 outcomes: {rt}::outcomes::Outcomes::new(\n        {outcomes},\n    ),\n    \
                 matcher: match_{index},\n\
             }};\n",
        );
    }
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
             clippy::nonminimal_bool,\n    \
             clippy::overly_complex_bool_expr\n\
         )]\n\
         fn match_{index}(\n    \
             {args}: &{rt}::serde_json::Map<\n        \
                 ::std::string::String,\n        \
                 {rt}::serde_json::Value,\n    \
             >,\n\
         ) -> usize {{\n"
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
