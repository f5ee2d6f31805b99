//! TypeScript code generation: the module `mcp-resolve generate --lang
//! typescript` prints, the counterpart of the Rust resolver (`codegen`).
//!
//! It is written from the same checked IR and the same texts: the signature
//! document, each dialect's `tools/list`, and every outcome's result texts
//! are the Rust backend's, byte for byte, as JSON string literals. What is
//! TypeScript's own is each tool's matching function (the variants'
//! conditions as expressions, `cond.rs`) and the patterns in them, written
//! as JavaScript regular expressions from their parsed form (`regex.rs`).
//! Validation of a call's arguments against the tool's `inputSchema` and the
//! shared helpers live in the runtime package the module imports
//! (`@mcp-resolve/runtime`, `packages/runtime`), whose version the module
//! checks when it loads.
//!
//! A rule TypeScript cannot evaluate exactly as Rust does is an error
//! ([`Code::NotPortable`]) naming the tool, the variant and the construct:
//! never a module that silently differs.

mod cond;
pub(crate) mod regex;
mod schema_patterns;

pub use cond::exact_in_double;

use std::fmt::Write as _;

use mcp_resolve_runtime::Dialect;
use serde_json::Value;

use crate::diagnostic::{Code, Diagnostic};
use crate::emit::signature::{Layout, signature_text};
use crate::emit::tools::tools_list_parts;
use crate::ir::{Server, Tool};

/// The version of the generated TypeScript's contract with the runtime
/// package: the module refuses to load under a runtime of another.
pub const TS_CODEGEN_VERSION: u32 = 3;

/// What the generated module imports and says about itself.
#[derive(Clone, Debug)]
pub struct Options {
    /// The module specifier of the runtime package.
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
            runtime_module: "@mcp-resolve/runtime".into(),
            sources: Vec::new(),
            jobs: 0,
        }
    }
}

/// The JSON Schema dialects the runtime's validator (Ajv) is set up for, by
/// `$schema`; a schema without one is 2020-12, as in the Rust validator.
const SCHEMA_DIALECTS: [&str; 4] = [
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2019-09/schema",
    "http://json-schema.org/draft-07/schema",
    "http://json-schema.org/draft-07/schema#",
];

/// Generates the TypeScript module for `server`, which must have passed
/// `check`; the errors are [`Code::NotPortable`] diagnostics.
#[expect(
    clippy::too_many_lines,
    reason = "the module's sections written top to bottom, in the order of the file"
)]
pub fn generate(server: &Server, options: &Options) -> Result<String, Vec<Diagnostic>> {
    // Each tool's items and findings, on the machine's cores, in tool order.
    let per_tool = crate::par::map(
        &server.tools,
        crate::par::threads(options.jobs),
        Some(crate::par::WORK_STACK),
        |index, tool| {
            let mut errors = Vec::new();
            schema_portability(tool, &mut errors);
            let code = if tool.resolvable {
                match tool_items(server, tool, index) {
                    Ok(code) => Some(code),
                    Err(mut found) => {
                        errors.append(&mut found);
                        None
                    }
                }
            } else {
                None
            };
            (code, errors)
        },
    );
    let mut errors = Vec::new();
    let mut tools_code: Vec<String> = Vec::with_capacity(server.tools.len());
    // Tools whose conditions compile to the same code share the first one's
    // matching function (as a hand-written resolver would write one): less
    // code, and one function V8 optimises for all of them rather than many
    // that each stay cold.
    let mut written: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (index, result) in per_tool.into_iter().enumerate() {
        let (code, mut found) = result.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        errors.append(&mut found);
        let Some((items, matcher)) = code else {
            continue;
        };
        let mut code = items;
        match written.get(&matcher.code) {
            Some(&first) => {
                code = code.replace(cond::Matcher::NUMBER, &first.to_string());
                code.push_str(&matcher.comment);
                let _ = writeln!(
                    code,
                    "//\n// `match_{first}` (written for tool `{}`) matches it.\n",
                    comment_text(&server.tools[first].name)
                );
            }
            None => {
                code = code.replace(cond::Matcher::NUMBER, &index.to_string());
                code.push_str(&matcher.comment);
                code.push_str(&matcher.numbered(index));
                written.insert(matcher.code, index);
            }
        }
        tools_code.push(code);
    }
    let mut table = String::new();
    // Dispatch by name: a `switch` for a few tools (comparisons beat a
    // hash), a `Map` beyond, as the Rust backend chooses.
    let resolvable = server.tools.iter().filter(|t| t.resolvable).count();
    let linear = resolvable <= crate::codegen::LINEAR_DISPATCH_MAX;
    for (index, tool) in server.tools.iter().enumerate() {
        if tool.resolvable {
            let name = js_string(&tool.name);
            if linear {
                let _ = writeln!(table, "    case {name}:\n      return TOOL_{index};");
            } else {
                let _ = writeln!(table, "  [{name}, TOOL_{index}],");
            }
        }
    }
    let dispatch = if linear {
        format!(
            "/** The resolvable tool called `name`. */\n\
             function toolOf(name: string): rt.Tool | undefined {{\n  \
               switch (name) {{\n{table}    default:\n      return undefined;\n  }}\n\
             }}\n\n"
        )
    } else {
        format!(
            "const TOOLS: ReadonlyMap<string, rt.Tool> = new Map<string, rt.Tool>([\n{table}]);\n\n\
             /** The resolvable tool called `name`. */\n\
             function toolOf(name: string): rt.Tool | undefined {{\n  \
               return TOOLS.get(name);\n\
             }}\n\n"
        )
    };
    if !errors.is_empty() {
        return Err(errors);
    }

    let signature = signature_text(server, options.jobs, Layout::Canonical);
    let lists = tools_list_parts(server, options.jobs);
    let rt = js_string(&options.runtime_module);
    let mut out = header(server, &signature.fingerprint, &options.sources);
    // The large texts (the signature, the three listings, every tool's
    // code: 150 MB at 10,000 tools) are escaped and appended in place, each
    // written once.
    let size = signature.parts.iter().map(String::len).sum::<usize>()
        + lists.iter().flatten().map(String::len).sum::<usize>();
    let code_size = tools_code.iter().map(String::len).sum::<usize>();
    out.reserve(size + size / 4 + code_size + 8192);
    let names: Vec<String> = server.tools.iter().map(|t| js_string(&t.name)).collect();
    let _ = write!(
        out,
        "import * as rt from {rt};\n\n\
         rt.checkCodegenVersion({TS_CODEGEN_VERSION});\n\n\
         /** The server's name, as in `serverInfo`. */\n\
         export const SERVER_NAME = {name};\n\
         /** The server's version, as in `serverInfo`. */\n\
         export const SERVER_VERSION = {version};\n\
         /** The signature document's fingerprint (`sha256:` of its JCS form). */\n\
         export const FINGERPRINT = {fingerprint};\n\
         /**\n * The signature document in its canonical form (RFC 8785, fingerprint\n \
         * included): the line `mcp-resolve signature --canonical` writes.\n */\n\
         export const SIGNATURE_JSON = ",
        name = js_string(&server.name),
        version = js_string(&server.version),
        fingerprint = js_string(&signature.fingerprint),
    );
    push_js_string_of_parts(&mut out, &signature.parts, options.jobs);
    let _ = write!(
        out,
        ";\n\
         /** Every tool name, in declaration order. */\n\
         export const TOOL_NAMES: readonly string[] = [{names}];\n\n\
         const LISTS: Readonly<Record<rt.Dialect, string>> = {{\n  extension: ",
        names = names.join(", "),
    );
    push_js_string_of_parts(&mut out, &lists[0], options.jobs);
    out.push_str(",\n  sep1862: ");
    push_js_string_of_parts(&mut out, &lists[1], options.jobs);
    out.push_str(",\n  annotations: ");
    push_js_string_of_parts(&mut out, &lists[2], options.jobs);
    out.push_str(
        ",\n\
         };\n\n\
         /**\n * The `tools/list` result for `dialect`, as JSON text: the static\n \
         * (conservative) annotations and the dialect's resolvable markers.\n */\n\
         export function toolsListJson(dialect: rt.Dialect): string {\n  \
           return LISTS[dialect];\n\
         }\n\n",
    );
    if tools_code.iter().any(|code| code.contains("(OP[")) {
        out.push_str(
            "// What the matching functions read the arguments against (see\n\
             // `rt.OBJECT_PROTOTYPE`).\n\
             const OP = rt.OBJECT_PROTOTYPE;\n\n",
        );
    }
    for code in &tools_code {
        out.push_str(code);
    }
    let _ = write!(
        out,
        "{dispatch}const NAMES: ReadonlySet<string> = new Set(TOOL_NAMES);\n\n\
         /**\n * Resolves a call: the first variant whose condition holds, or the static\n \
         * annotations when none does. Throws `rt.RpcError` (-32602) for an unknown\n \
         * or non-resolvable tool and for arguments that are not a valid object for\n \
         * its `inputSchema`.\n */\n\
         export function resolve(name: string, args: unknown): rt.Resolved {{\n  \
           const tool = toolOf(name);\n  \
           if (tool === undefined) throw rt.unresolvable(name, NAMES);\n  \
           // The common case (valid arguments, the validator compiled by an\n  \
           // earlier call) here, so that its calls are this module's own.\n  \
           const valid = tool.validator;\n  \
           if (valid !== undefined && rt.isObject(args) && (tool.bounded || !rt.nestsTooDeep(args)) && valid(args)) {{\n    \
             const resolved = tool.outcomes[tool.match(args)];\n    \
             if (resolved !== undefined) return resolved;\n  \
           }}\n  \
           return tool.resolve(args);\n\
         }}\n\n\
         /**\n * Like `resolve`, for arguments the caller has already validated against\n \
         * the tool's `inputSchema`: the schema is not checked again.\n */\n\
         export function resolveValidated(name: string, args: rt.Args): rt.Resolved {{\n  \
           const tool = toolOf(name);\n  \
           if (tool === undefined) throw rt.unresolvable(name, NAMES);\n  \
           return tool.resolveValidated(args);\n\
         }}\n\n\
         /** Resolves a call and returns the JSON-RPC `result` text for `dialect`. */\n\
         export function resolveJson(name: string, args: unknown, dialect: rt.Dialect): string {{\n  \
           return resolve(name, args).resultJson(dialect);\n\
         }}\n\n\
         /** This resolver as a value, for code that serves any resolver. */\n\
         export const RULES: rt.Rules = {{\n  \
           serverName: SERVER_NAME,\n  \
           serverVersion: SERVER_VERSION,\n  \
           fingerprint: FINGERPRINT,\n  \
           signatureJson: SIGNATURE_JSON,\n  \
           toolNames: TOOL_NAMES,\n  \
           toolsListJson,\n  \
           resolve,\n  \
           resolveValidated,\n\
         }};\n"
    );
    Ok(out)
}

/// A resolvable tool's items: its `rt.Tool` (name, `inputSchema` text, the
/// SEP-1862 head its outcomes share, each outcome, and its matching
/// function's name with [`cond::Matcher::NUMBER`] for the number), and its
/// matching function.
fn tool_items(
    server: &Server,
    tool: &Tool,
    index: usize,
) -> Result<(String, cond::Matcher), Vec<Diagnostic>> {
    let matcher = cond::match_function(tool)?;
    let model = tool.to_model(&server.hints);
    let entry = model.list_entry(Dialect::Sep1862);
    let resolutions = crate::codegen::resolutions(server, tool);
    let pieces = crate::codegen::sep1862_pieces(&entry, &resolutions);
    // The head every outcome's SEP-1862 text starts with (the tool's entry
    // up to its annotations), held once; when the texts do not share one,
    // each is whole in its own pieces.
    let shared = pieces.windows(2).all(|w| w[0][0] == w[1][0]);
    let head = match pieces.first() {
        Some([head, _, _]) if shared => head.clone(),
        _ => String::new(),
    };
    let schema = serde_json::to_string(&tool.input_schema).unwrap_or_default();
    let name = comment_text(&tool.name);
    let mut out = String::new();
    let _ = write!(
        out,
        "// Tool `{name}`: its `inputSchema` (compiled on first use), then each\n\
         // variant's outcome in order, then the static annotations'.\n\
         const TOOL_{index} = new rt.Tool(\n  \
           {},\n  {},\n  {},\n  {},\n  [\n",
        js_string(&tool.name),
        js_string(&schema),
        mcp_resolve_runtime::schema_bounds_depth(&tool.input_schema),
        js_string(&head),
    );
    for (resolution, [piece_head, annotations, tail]) in resolutions.iter().zip(&pieces) {
        let hints = serde_json::to_string(&resolution.annotations).unwrap_or_default();
        let scopes = serde_json::to_string(&resolution.required_scopes).unwrap_or_default();
        let variant = resolution
            .variant
            .as_deref()
            .map_or("null".into(), js_string);
        // The runtime derives each dialect's text from the hints, the
        // tool's name and the shared SEP-1862 head: the texts this backend
        // would write, whenever the SEP-1862 annotations are the hints as
        // written (a test holds the two equal). Otherwise they are written.
        if shared && *annotations == hints {
            let _ = writeln!(
                out,
                "    rt.outcome({variant}, {}, {}, {}),",
                js_string(&hints),
                js_string(&scopes),
                js_string(tail),
            );
        } else {
            let text = |d: Dialect| {
                serde_json::to_string(&d.result(&entry, resolution)).unwrap_or_default()
            };
            let _ = writeln!(
                out,
                "    rt.outcome({variant}, {}, {}, \"\", {{ extension: {}, sep1862: {}, annotations: {} }}),",
                js_string(&hints),
                js_string(&scopes),
                js_string(&text(Dialect::Extension)),
                js_string(&(piece_head.clone() + annotations + tail)),
                js_string(&text(Dialect::Annotations)),
            );
        }
    }
    let _ = write!(out, "  ],\n  match_{},\n);\n\n", cond::Matcher::NUMBER);
    Ok((out, matcher))
}

/// What of a tool's `inputSchema` the runtime's validator cannot read as
/// the Rust one does: a `$schema` it is not set up for, a pattern outside
/// the two engines' common core (`schema_patterns`), a number that is not
/// exact in a double.
fn schema_portability(tool: &Tool, errors: &mut Vec<Diagnostic>) {
    if let Some(dialect) = tool.input_schema.get("$schema")
        && !dialect
            .as_str()
            .is_some_and(|d| SCHEMA_DIALECTS.contains(&d))
    {
        errors.push(
            Diagnostic::new(
                Code::NotPortable,
                format!(
                    "the inputSchema of tool `{}` declares `$schema` {dialect}, which the TypeScript runtime's validator (Ajv) is not set up for",
                    tool.name
                ),
            )
            .at(tool.schema_loc.0)
            .for_tool(&tool.name)
            .with_help("declare JSON Schema 2020-12, 2019-09 or draft-07, or leave `$schema` out (2020-12)"),
        );
    }
    if let Some((pattern, why)) = schema_patterns::first_not_portable(&tool.input_schema) {
        errors.push(
            Diagnostic::new(
                Code::NotPortable,
                format!(
                    "the inputSchema of tool `{}` has the pattern `{pattern}`, which the TypeScript runtime's validator (a JavaScript `RegExp`) reads otherwise than the Rust one: {why}",
                    tool.name
                ),
            )
            .at(tool.schema_loc.0)
            .for_tool(&tool.name)
            .with_help("write it with literals, classes, `\\d`, `\\w`, groups, alternation, repetition, `^` and `$` (for `.`, a class such as `[^\\n]`)"),
        );
    }
    if is_draft_07(&tool.input_schema)
        && let Some((pointer, keyword)) = ref_with_siblings(&tool.input_schema, String::new())
    {
        errors.push(
            Diagnostic::new(
                Code::NotPortable,
                format!(
                    "the inputSchema of tool `{}` has `{keyword}` beside `$ref` at `#{pointer}`: draft-07 reads a `$ref` alone, as the Rust validator does, but the TypeScript runtime's validator (Ajv) applies its siblings too",
                    tool.name,
                ),
            )
            .at(tool.schema_loc.0)
            .for_tool(&tool.name)
            .with_help("move the sibling keywords into the referenced schema or into an `allOf` beside the `$ref`, or declare JSON Schema 2020-12, which applies them in both"),
        );
    }
    let mut inexact = None;
    walk_numbers(&tool.input_schema, &mut |n| {
        if inexact.is_none() && !cond::exact_in_double(n) {
            inexact = Some(n.to_string());
        }
    });
    if let Some(n) = inexact {
        errors.push(
            Diagnostic::new(
                Code::NotPortable,
                format!(
                    "the inputSchema of tool `{}` holds the number {n}, which is not exact in a double (JavaScript's only number)",
                    tool.name
                ),
            )
            .at(tool.schema_loc.0)
            .for_tool(&tool.name)
            .with_help("write a number of at most 2^53 in magnitude, or one a double holds exactly"),
        );
    }
}

fn is_draft_07(schema: &Value) -> bool {
    schema
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|d| d.starts_with("http://json-schema.org/draft-07/schema"))
}

/// The first schema object, by JSON pointer, that has a keyword beside
/// `$ref` which draft-07 would ignore and Ajv applies: anything but the
/// annotations and the containers of definitions, which validate nothing.
fn ref_with_siblings(schema: &Value, pointer: String) -> Option<(String, String)> {
    const INERT: [&str; 10] = [
        "$ref",
        "$schema",
        "$comment",
        "title",
        "description",
        "default",
        "examples",
        "readOnly",
        "writeOnly",
        "definitions",
    ];
    let Value::Object(map) = schema else {
        return None;
    };
    if map.contains_key("$ref")
        && let Some(keyword) = map.keys().find(|k| !INERT.contains(&k.as_str()))
    {
        return Some((pointer, keyword.clone()));
    }
    schema_patterns::subschemas(map)
        .find_map(|(step, sub)| ref_with_siblings(sub, format!("{pointer}{step}")))
}

fn walk_numbers(value: &Value, f: &mut dyn FnMut(&serde_json::Number)) {
    match value {
        Value::Number(n) => f(n),
        Value::Array(items) => items.iter().for_each(|v| walk_numbers(v, f)),
        Value::Object(map) => map.values().for_each(|v| walk_numbers(v, f)),
        _ => {}
    }
}

fn header(server: &Server, fingerprint: &str, sources: &[String]) -> String {
    let mut h = String::new();
    h.push_str("// @generated by mcp-resolve. Do not edit: change the rules and regenerate\n");
    h.push_str("// (`mcp-resolve generate --lang typescript`).\n");
    h.push_str("//\n");
    let _ = writeln!(
        h,
        "// Server: {} {}",
        comment_text(&server.name),
        comment_text(&server.version)
    );
    for s in sources {
        let _ = writeln!(h, "// Input: {}", comment_text(s));
    }
    let _ = writeln!(h, "// Signature: {fingerprint}");
    h.push_str("//\n");
    h.push_str("// Use: `resolve(name, args)` → `rt.Resolved` (variant, annotations, scopes,\n");
    h.push_str("// and each dialect's result via `resultJson(dialect)`), or throws\n");
    h.push_str("// `rt.RpcError`.\n\n");
    h
}

/// A JavaScript string literal: JSON's, which JavaScript reads as the same
/// string (U+2028 and U+2029 included, since ES2019).
pub(crate) fn js_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// Appends [`js_string`] of the concatenation of `parts` (a document
/// written in parts: tens of megabytes at 10,000 tools) to `out`, escaped on
/// the machine's cores. JSON escapes each character on its own, so the
/// parts' escapes, joined, are the whole's.
pub(crate) fn push_js_string_of_parts(out: &mut String, parts: &[String], jobs: usize) {
    let escaped = crate::par::map(parts, crate::par::threads(jobs), None, |_, part| {
        js_string(part)
    });
    out.push('"');
    for part in escaped {
        let part = part.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        // Without its own quotes.
        out.push_str(&part[1..part.len() - 1]);
    }
    out.push('"');
}

/// User text inside a `//` comment: control characters and JavaScript's
/// other line terminators escaped, so nothing can end the comment early.
pub(crate) fn comment_text(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() || c == '\u{2028}' || c == '\u{2029}' {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}
