//! Python code generation: the module `mcp-resolve generate --lang python`
//! prints, the counterpart of the Rust and TypeScript resolvers.
//!
//! It is written from the same checked IR and the same texts as they are:
//! the signature document, each dialect's `tools/list` and every outcome's
//! result texts are the Rust backend's, byte for byte, as string literals.
//! What is Python's own is each tool's matching function (the variants'
//! conditions as expressions, `cond.rs`) and the patterns in them, written as
//! Python `re` patterns from their parsed form (`regex.rs`). Validation of a
//! call's arguments against the tool's `inputSchema` and the shared helpers
//! live in the runtime package the module imports (`mcp_resolve_runtime`,
//! `packages/python-runtime`), which validates with jsonschema-rs — the
//! `jsonschema` crate the Rust resolvers use — so schemas, their patterns
//! included, are read as in Rust. The module checks the runtime's contract
//! version when it loads.
//!
//! A rule Python cannot evaluate exactly as Rust does is an error
//! ([`crate::diagnostic::Code::NotPortable`]) naming the tool, the variant and the construct:
//! never a module that silently differs.

mod cond;
pub mod regex;

use std::collections::HashMap;
use std::fmt::Write as _;

use mcp_resolve_runtime::Dialect;

use crate::diagnostic::Diagnostic;
use crate::emit::signature::{Layout, signature_text};
use crate::emit::tools::tools_list_parts;
use crate::ir::{Server, Tool};

/// The version of the generated Python's contract with the runtime
/// package: the module refuses to load under a runtime of another.
pub const PY_CODEGEN_VERSION: u32 = 2;

/// What the generated module imports and says about itself.
#[derive(Clone, Debug)]
pub struct Options {
    /// The import name of the runtime package: a dotted module name
    /// ([`is_module_path`]).
    pub runtime_module: String,
    /// The input files (rules and schemas), as the header names them.
    pub sources: Vec<String>,
    /// Threads for per-tool work (0: every core); the output never depends
    /// on it.
    pub jobs: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            runtime_module: "mcp_resolve_runtime".into(),
            sources: Vec::new(),
            jobs: 0,
        }
    }
}

/// Generates the Python module for `server`, which must have passed
/// `check`; the errors are [`crate::diagnostic::Code::NotPortable`]
/// diagnostics.
#[expect(
    clippy::too_many_lines,
    reason = "the module's sections written top to bottom, in the order of the file"
)]
pub fn generate(server: &Server, options: &Options) -> Result<String, Vec<Diagnostic>> {
    if !is_module_path(&options.runtime_module) {
        return Err(vec![Diagnostic::new(
            crate::diagnostic::Code::NotPortable,
            format!("`{}` is not a Python module name", options.runtime_module),
        )]);
    }
    let per_tool = crate::par::map(
        &server.tools,
        crate::par::threads(options.jobs),
        Some(crate::par::WORK_STACK),
        |_, tool| {
            if tool.resolvable {
                tool_items(server, tool).map(Some)
            } else {
                Ok(None)
            }
        },
    );
    let mut errors = Vec::new();
    let mut items = Vec::with_capacity(server.tools.len());
    for result in per_tool {
        match result.unwrap_or_else(|panic| std::panic::resume_unwind(panic)) {
            Ok(item) => items.push(item),
            Err(mut found) => errors.append(&mut found),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    // Patterns and constants numbered once for the module, in first use
    // order; one matching function for the tools whose matching is the same
    // (named after the first).
    let mut regexes: Vec<String> = Vec::new();
    let mut constants: Vec<String> = Vec::new();
    let mut regex_ids: HashMap<String, usize> = HashMap::new();
    let mut constant_ids: HashMap<String, usize> = HashMap::new();
    let mut functions: HashMap<String, usize> = HashMap::new();
    let mut tools_code: Vec<String> = Vec::with_capacity(items.len());
    let mut table = String::new();
    // A few tools' matching is held inline in `resolve` and `resolve_json`
    // (one Python frame for a call, as a hand-written resolver has);
    // beyond, they look the tool up and call its matching function.
    let resolvable = server.tools.iter().filter(|t| t.resolvable).count();
    let inline = resolvable <= crate::codegen::LINEAR_DISPATCH_MAX;
    let (mut branches, mut text_branches) = (String::new(), String::new());
    for (index, item) in items.into_iter().enumerate() {
        let Some((matcher, tool_text)) = item else {
            continue;
        };
        let number = |seen: &mut HashMap<String, usize>, all: &mut Vec<String>, text: &str| {
            *seen.entry(text.to_string()).or_insert_with(|| {
                all.push(text.to_string());
                all.len() - 1
            })
        };
        let local_regexes: HashMap<usize, usize> = matcher
            .regexes
            .iter()
            .map(|(local, source)| (*local, number(&mut regex_ids, &mut regexes, source)))
            .collect();
        let local_constants: HashMap<usize, usize> = matcher
            .constants
            .iter()
            .map(|(local, text)| (*local, number(&mut constant_ids, &mut constants, text)))
            .collect();
        let function = cond::substitute(&matcher.function, cond::REGEX_MARK, |n| {
            local_regexes.get(&n).copied().unwrap_or(usize::MAX)
        });
        let function = cond::substitute(&function, cond::CONSTANT_MARK, |n| {
            local_constants.get(&n).copied().unwrap_or(usize::MAX)
        });
        let name = py_string(&server.tools[index].name);
        if inline {
            let tool = &server.tools[index];
            branches.push_str(&inline_branch(&name, index, tool, &function, &RESOLVED));
            text_branches.push_str(&inline_branch(&name, index, tool, &function, &TEXT));
        }
        let function = cond::substitute(&function, cond::RETURN_MARK, |n| n);
        let mut code = matcher.comment;
        let shared = match functions.get(&function) {
            Some(&first) => {
                let _ = writeln!(code, "# (the same matching as `_match_{first}`)\n");
                first
            }
            None => {
                functions.insert(function.clone(), index);
                code.push_str(&function.replace(cond::NAME_MARK, &index.to_string()));
                code.push_str("\n\n");
                index
            }
        };
        code.push_str(
            &tool_text
                .replace(cond::NAME_MARK, &shared.to_string())
                .replace('\u{4}', &index.to_string()),
        );
        if inline {
            let _ = write!(
                code,
                "_OUT_{index}: Final = _TOOL_{index}.outcomes\n\
                 _TEXTS_{index}: Final = tuple(outcome.texts for outcome in _OUT_{index})\n\n\n"
            );
        }
        tools_code.push(code);
        let _ = writeln!(table, "    {name}: _TOOL_{index},");
    }
    let (uses_re, uses_json) = (!regexes.is_empty(), !constants.is_empty());

    let signature = signature_text(server, options.jobs, Layout::Canonical);
    let lists = tools_list_parts(server, options.jobs);
    let mut out = header(server, &signature.fingerprint, &options.sources);
    let size = signature.parts.iter().map(String::len).sum::<usize>()
        + lists.iter().flatten().map(String::len).sum::<usize>();
    let code_size = tools_code.iter().map(String::len).sum::<usize>();
    out.reserve(size + size / 4 + code_size + 8192);
    out.push_str("from __future__ import annotations\n\n");
    if uses_json {
        out.push_str("import json\n");
    }
    if uses_re {
        out.push_str("import re\n");
    }
    let names: Vec<String> = server.tools.iter().map(|t| py_string(&t.name)).collect();
    let names = match names.len() {
        0 => "()".to_string(),
        1 => format!("({},)", names[0]),
        _ => format!("({})", names.join(", ")),
    };
    let _ = write!(
        out,
        "from typing import Final\n\n\
         import {rt} as rt\n\n\
         rt.check_codegen_version({PY_CODEGEN_VERSION})\n\n\
         SERVER_NAME: Final = {name}\n\
         \"\"\"The server's name, as in `serverInfo`.\"\"\"\n\
         SERVER_VERSION: Final = {version}\n\
         \"\"\"The server's version, as in `serverInfo`.\"\"\"\n\
         FINGERPRINT: Final = {fingerprint}\n\
         \"\"\"The signature document's fingerprint (`sha256:` of its JCS form).\"\"\"\n\
         SIGNATURE_JSON: Final = ",
        rt = options.runtime_module,
        name = py_string(&server.name),
        version = py_string(&server.version),
        fingerprint = py_string(&signature.fingerprint),
    );
    push_py_string_of_parts(&mut out, &signature.parts, options.jobs);
    let _ = write!(
        out,
        "\n\
         \"\"\"The signature document in its canonical form (RFC 8785, fingerprint\n\
         included): the line `mcp-resolve signature --canonical` writes.\"\"\"\n\
         TOOL_NAMES: Final[tuple[str, ...]] = {names}\n\
         \"\"\"Every tool name, in declaration order.\"\"\"\n\n\
         _ABSENT: Final[object] = rt.ABSENT\n\
         # Arguments whose members are all of these nest one level.\n\
         _SCALARS: Final = rt.JSON_SCALAR_TYPES\n\n\
         _LISTS: Final[dict[str, str]] = {{\n    \"extension\": ",
    );
    push_py_string_of_parts(&mut out, &lists[0], options.jobs);
    out.push_str(",\n    \"sep1862\": ");
    push_py_string_of_parts(&mut out, &lists[1], options.jobs);
    out.push_str(",\n    \"annotations\": ");
    push_py_string_of_parts(&mut out, &lists[2], options.jobs);
    out.push_str(
        ",\n\
         }\n\n\n\
         def tools_list_json(dialect: rt.Dialect) -> str:\n    \
           \"\"\"The `tools/list` result for `dialect`, as JSON text: the static\n    \
           (conservative) annotations and the dialect's resolvable markers.\"\"\"\n    \
           return _LISTS[rt.dialect_of(dialect)]\n\n\n",
    );
    if uses_re || uses_json {
        out.push_str("# The patterns and constants of the variants' conditions.\n");
        for (i, source) in regexes.iter().enumerate() {
            let _ = writeln!(out, "_RE_{i}: Final = re.compile({})", py_string(source));
        }
        for (i, text) in constants.iter().enumerate() {
            let _ = writeln!(
                out,
                "_CONST_{i}: Final[object] = json.loads({})",
                py_string(text)
            );
        }
        out.push_str("\n\n");
    }
    for code in &tools_code {
        out.push_str(code);
    }
    // The common call (valid arguments, the validator compiled by an
    // earlier call) made here; anything else through the tool's `resolve`.
    let (body, text_body) = if inline {
        (
            format!("{branches}    raise rt.unresolvable(name, _NAMES)\n"),
            format!("{text_branches}    raise rt.unresolvable(name, _NAMES)\n"),
        )
    } else {
        (
            looked_up("tool.outcomes[tool.match(args)]", "tool.resolve(args)"),
            looked_up(
                "tool.texts[tool.match(args)][dialect]",
                "tool.resolve(args).result_json(dialect)",
            ),
        )
    };
    let _ = write!(
        out,
        "_TOOLS: Final[dict[str, rt.Tool]] = {{\n{table}}}\n\
         _NAMES: Final = frozenset(TOOL_NAMES)\n\n\n\
         def resolve(name: str, args: object) -> rt.Resolved:\n    \
           \"\"\"Resolves a call: the first variant whose condition holds, or the\n    \
           static annotations when none does. Raises `rt.RpcError` (-32602) for an\n    \
           unknown or non-resolvable tool and for arguments that are not a valid\n    \
           object for its `inputSchema`.\"\"\"\n\
         {body}\n\n\
         def resolve_validated(name: str, args: rt.Args) -> rt.Resolved:\n    \
           \"\"\"Like `resolve`, for arguments the caller has already validated\n    \
           against the tool's `inputSchema`: the schema is not checked again.\"\"\"\n    \
           tool = _TOOLS.get(name)\n    \
           if tool is None:\n        \
             raise rt.unresolvable(name, _NAMES)\n    \
           return tool.resolve_validated(args)\n\n\n\
         def resolve_json(name: str, args: object, dialect: rt.Dialect) -> str:\n    \
           \"\"\"Resolves a call and returns the JSON-RPC `result` text for `dialect`.\"\"\"\n\
         {text_body}\n\n\
         RULES: Final = rt.Rules(\n    \
           SERVER_NAME,\n    \
           SERVER_VERSION,\n    \
           FINGERPRINT,\n    \
           SIGNATURE_JSON,\n    \
           TOOL_NAMES,\n    \
           tools_list_json,\n    \
           resolve,\n    \
           resolve_validated,\n\
         )\n\
         \"\"\"This resolver as a value, for code that serves any resolver.\"\"\"\n"
    );
    Ok(out)
}

/// A resolvable tool's items: its matching function (numbered as
/// [`cond::Matcher`] says), and its `rt.Tool` (`_TOOL_\u{4}`: name,
/// `inputSchema` text, whether the schema bounds the nesting, the SEP-1862
/// head its outcomes share, each outcome, and its matching function
/// `_match_\u{3}`).
fn tool_items(server: &Server, tool: &Tool) -> Result<(cond::Matcher, String), Vec<Diagnostic>> {
    let matcher = cond::match_function(tool)?;
    let model = tool.to_model(&server.hints);
    let entry = model.list_entry(Dialect::Sep1862);
    let resolutions = crate::codegen::resolutions(server, tool);
    let pieces = crate::codegen::sep1862_pieces(&entry, &resolutions);
    let shared = pieces.windows(2).all(|w| w[0][0] == w[1][0]);
    let head = match pieces.first() {
        Some([head, _, _]) if shared => head.clone(),
        _ => String::new(),
    };
    let schema = serde_json::to_string(&tool.input_schema).unwrap_or_default();
    let mut out = String::new();
    let _ = write!(
        out,
        "# Tool `{}`: its `inputSchema` (compiled on first use), then each\n\
         # variant's outcome in order, then the static annotations'.\n\
         _TOOL_\u{4}: Final = rt.Tool(\n    \
           {},\n    {},\n    {},\n    {},\n    (\n",
        comment_text(&tool.name),
        py_string(&tool.name),
        py_string(&schema),
        if mcp_resolve_runtime::schema_bounds_depth(&tool.input_schema) {
            "True"
        } else {
            "False"
        },
        py_string(&head),
    );
    for (resolution, [piece_head, annotations, tail]) in resolutions.iter().zip(&pieces) {
        let hints = serde_json::to_string(&resolution.annotations).unwrap_or_default();
        let scopes = serde_json::to_string(&resolution.required_scopes).unwrap_or_default();
        let variant = resolution
            .variant
            .as_deref()
            .map_or("None".into(), py_string);
        // As in TypeScript: the runtime derives each dialect's text from the
        // hints, the tool's name and the shared SEP-1862 head whenever that
        // gives this backend's texts; otherwise they are written.
        if shared && *annotations == hints {
            let _ = writeln!(
                out,
                "        rt.outcome({variant}, {}, {}, {}),",
                py_string(&hints),
                py_string(&scopes),
                py_string(tail),
            );
        } else {
            let text = |d: Dialect| {
                serde_json::to_string(&d.result(&entry, resolution)).unwrap_or_default()
            };
            let _ = writeln!(
                out,
                "        rt.outcome(\n            {variant},\n            {},\n            {},\n            \"\",\n            \
                 {{\"extension\": {}, \"sep1862\": {}, \"annotations\": {}}},\n        ),",
                py_string(&hints),
                py_string(&scopes),
                py_string(&text(Dialect::Extension)),
                py_string(&(piece_head.clone() + annotations + tail)),
                py_string(&text(Dialect::Annotations)),
            );
        }
    }
    let _ = write!(out, "    ),\n    _match_\u{3},\n)\n\n\n");
    Ok((matcher, out))
}

/// The body of `resolve` or `resolve_json` beyond a few tools: the tool
/// looked up, the common call made here (valid arguments, the validator
/// compiled by an earlier call) giving `outcome`, anything else `otherwise`.
fn looked_up(outcome: &str, otherwise: &str) -> String {
    format!(
        "    tool = _TOOLS.get(name)\n    \
         if tool is None:\n        \
           raise rt.unresolvable(name, _NAMES)\n    \
         validator = tool.validator\n    \
         if (\n        \
           validator is not None\n        \
           and type(args) is dict\n        \
           and (tool.bounded or _SCALARS.issuperset(map(type, args.values())) or not rt.nests_too_deep(args))\n    \
         ):\n        \
           try:\n            \
             valid = validator.is_valid(args)\n        \
           except (ValueError, TypeError, OverflowError):\n            \
             valid = False\n        \
           if valid:\n            \
             return {outcome}\n    \
         return {otherwise}\n"
    )
}

/// What an inline branch of `resolve` or `resolve_json` gives.
struct Gives {
    /// The expression for outcome `N` of tool `index`.
    outcome: fn(usize, &str) -> String,
    /// The call that answers when the common case does not hold.
    otherwise: fn(usize) -> String,
}

/// `resolve`'s: the outcome.
const RESOLVED: Gives = Gives {
    outcome: |index, n| format!("_OUT_{index}[{n}]"),
    otherwise: |index| format!("_TOOL_{index}.resolve(args)"),
};

/// `resolve_json`'s: the outcome's text in `dialect`, looked up in its
/// dict of texts (a text is made on first use; an unknown dialect raises
/// `rt.RpcError`, as `result_json` does).
const TEXT: Gives = Gives {
    outcome: |index, n| format!("_TEXTS_{index}[{n}][dialect]"),
    otherwise: |index| format!("_TOOL_{index}.resolve(args).result_json(dialect)"),
};

/// A branch for tool `index` (called `name`, a Python string literal) with
/// its matching function's body inline: valid arguments land on an outcome
/// in the caller's frame, as in a hand-written resolver; anything else goes
/// through the tool's `resolve`, which validates, walks the nesting and
/// refuses as the runtime does. After validation, a member the schema
/// requires at the top is read by subscript; `args` is checked to be a
/// `dict` only where the schema's `type: object` does not already refuse
/// anything else or the nesting walk needs one (neither is relied on beside
/// a top-level `$ref`, which drafts up to 7 read alone).
fn inline_branch(name: &str, index: usize, tool: &Tool, function: &str, gives: &Gives) -> String {
    let schema = &tool.input_schema;
    let bounded = mcp_resolve_runtime::schema_bounds_depth(schema);
    // Beside a `$ref`, drafts up to 7 ignore `type` and `required`: then
    // neither is taken as proved.
    let plain = schema.get("$ref").is_none();
    let object = plain && schema.get("type").and_then(|t| t.as_str()) == Some("object");
    let required: Vec<String> = match schema.get("required").filter(|_| plain) {
        Some(serde_json::Value::Array(keys)) => keys
            .iter()
            .filter_map(|k| k.as_str().map(py_string))
            .collect(),
        _ => Vec::new(),
    };
    let check = match (bounded, object) {
        (true, true) => "",
        (true, false) => " and type(args) is dict",
        (false, _) => {
            " and type(args) is dict and (_SCALARS.issuperset(map(type, args.values())) or not rt.nests_too_deep(args))"
        }
    };
    let mut out = format!(
        "    if name == {name}:\n        \
           validator = _TOOL_{index}.validator\n        \
           if validator is not None{check}:\n            \
             try:\n                \
               valid = validator.is_valid(args)\n            \
             except (ValueError, TypeError, OverflowError):\n                \
               valid = False\n            \
             if valid:\n"
    );
    let mut body = String::with_capacity(function.len());
    for (at, part) in function.split(cond::RETURN_MARK).enumerate() {
        if at % 2 == 1 {
            body.push_str(&(gives.outcome)(index, part));
        } else {
            body.push_str(part);
        }
    }
    // Without the `dict` check, `args` is still an `object` to a type
    // checker: its top-level lookups say what the validator has proved.
    let unnarrowed = check.is_empty();
    // The function's body, after its `def` line, four levels deeper.
    for line in body.lines().skip(1) {
        out.push_str("            ");
        match required_lookup(line, &required) {
            Some(read) => {
                out.push_str(&read);
                if unnarrowed {
                    out.push_str("  # type: ignore[index]");
                }
            }
            None => {
                out.push_str(line);
                if unnarrowed && line.contains(" = args.get(") {
                    out.push_str("  # type: ignore[attr-defined]");
                }
            }
        }
        out.push('\n');
    }
    let _ = writeln!(out, "        return {}", (gives.otherwise)(index));
    out
}

/// A lookup line of a matching function (`    arg_N = args.get(KEY,
/// _ABSENT)`) as a subscript, when `KEY` (a string literal) is one of
/// `required`.
fn required_lookup(line: &str, required: &[String]) -> Option<String> {
    let (var, rest) = line.split_once(" = args.get(")?;
    let key = rest.strip_suffix(", _ABSENT)")?;
    (var.trim_start().starts_with("arg_") && required.iter().any(|r| r == key))
        .then(|| format!("{var} = args[{key}]"))
}

/// Whether `name` is a dotted Python module name, as
/// [`Options::runtime_module`] must be (it is written into an `import`).
pub fn is_module_path(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

fn header(server: &Server, fingerprint: &str, sources: &[String]) -> String {
    let mut h = String::new();
    h.push_str("# @generated by mcp-resolve. Do not edit: change the rules and regenerate\n");
    h.push_str("# (`mcp-resolve generate --lang python`).\n");
    h.push_str("#\n");
    let _ = writeln!(
        h,
        "# Server: {} {}",
        comment_text(&server.name),
        comment_text(&server.version)
    );
    for s in sources {
        let _ = writeln!(h, "# Input: {}", comment_text(s));
    }
    let _ = writeln!(h, "# Signature: {fingerprint}");
    h.push_str("#\n");
    h.push_str("# Use: `resolve(name, args)` -> `rt.Resolved` (variant, annotations,\n");
    h.push_str("# scopes, and each dialect's result via `result_json(dialect)`), or raises\n");
    h.push_str("# `rt.RpcError`.\n");
    h.push_str("\"\"\"The resolver mcp-resolve generated from the rules named above.\"\"\"\n\n");
    h
}

/// A Python string literal: JSON's, which Python reads as the same string
/// (JSON escapes every control character, so no line ends inside it, and
/// writes other characters as themselves, in a UTF-8 source file).
pub(crate) fn py_string(s: &str) -> String {
    crate::typescript::js_string(s)
}

/// Appends [`py_string`] of the concatenation of `parts` to `out`, escaped
/// on the machine's cores: JSON's escapes, as for JavaScript.
fn push_py_string_of_parts(out: &mut String, parts: &[String], jobs: usize) {
    crate::typescript::push_js_string_of_parts(out, parts, jobs);
}

/// User text inside a `#` comment: control characters and other line
/// terminators escaped, so nothing can end the comment early.
pub(crate) fn comment_text(s: &str) -> String {
    crate::typescript::comment_text(s)
}
