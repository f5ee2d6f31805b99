//! Rust code generation (SPEC §9): the file `mcp-resolve generate` prints and
//! the build.rs [`Builder`](crate::Builder) writes.
//!
//! The shared items are built as tokens with `quote` (string literals
//! escaped by construction, whatever a tool name or pattern contains), parsed
//! with `syn` (so they are valid Rust before they are written) and printed
//! with `prettyplease`; their large literals (texts of JSON) are lexed on
//! their own and put in after printing. Each tool's items, its statics and
//! one matching function of a fixed shape, are written as text
//! (`matching.rs`): at 10,000 tools, a syntax tree and a printer for each was
//! a third of the time.
//! Matching is compiled: one function per tool tests each variant's condition
//! directly and returns the index of its outcome. Everything else is data.
//! Above eight tools, one table (`TOOLS`) indexed by a perfect-hash dispatch
//! on the tool name holds each tool's schema (compiled on first use) and its
//! outcomes, every response precomputed text, as one literal (decoded on
//! first use): the compiler's cost is in items and expressions, not in bytes
//! of literal. Up to eight, `resolve` is a `match` on the name, and each
//! tool's outcomes are a static array of `Resolved` written out, which the
//! compiler indexes at a constant: a few tools cost the build nothing, and
//! the call costs what a hand-written `match` does.

pub(crate) mod matching;
pub(crate) mod phf;

use mcp_resolve_runtime::outcomes::{self, OutcomeParts};
use mcp_resolve_runtime::{CODEGEN_VERSION, Dialect, Resolution};
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use serde_json::Value;

use crate::emit::signature::{SignatureText, signature_text};
use crate::emit::tools::tools_list_parts;
use crate::hints::HintTableExt;
use crate::ir::{Server, Tool};
use matching::{Code, Matcher};

/// What the generated file refers to and says about itself.
#[derive(Clone, Debug)]
pub struct Options {
    /// The path generated code names the runtime crate by.
    pub runtime_path: String,
    /// The input files (rules and schemas), as the header names them.
    pub sources: Vec<String>,
    /// Threads for per-tool work (0: every core); the output never depends
    /// on it.
    pub jobs: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            runtime_path: "::mcp_resolve_runtime".into(),
            sources: Vec::new(),
            jobs: 0,
        }
    }
}

/// Why code could not be generated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CodegenError(pub String);

/// Up to this many tools, dispatch is a `match` on the name.
pub const LINEAR_DISPATCH_MAX: usize = 8;

/// Generates the resolver for `server`, which must have passed `check`.
/// Fails when the runtime path is not a Rust path.
pub fn generate(server: &Server, options: &Options) -> Result<String, CodegenError> {
    Ok(generate_parts(server, options)?.concat())
}

/// [`generate`]'s file in parts, to be written one after the other
/// ([`crate::builder::write_parts_if_changed`]): at 10,000 tools the file is
/// close to 200 MB, and joining it would hold it twice.
pub fn generate_parts(server: &Server, options: &Options) -> Result<Vec<String>, CodegenError> {
    let (rt, rt_text) = runtime_path(&options.runtime_path)?;
    let rt = quote!(#rt);

    let SignatureText {
        parts: signature_parts,
        fingerprint,
    } = signature_text(server, options.jobs);

    let names: Vec<&str> = server.tools.iter().map(|t| t.name.as_str()).collect();
    let table = phf::build(&names).ok_or_else(|| CodegenError("tool names repeat".into()))?;
    // A few names are found fastest by a `match` (a length check, then a
    // compare, per name); beyond that the perfect hash keeps dispatch flat.
    let linear = names.len() <= LINEAR_DISPATCH_MAX;

    let version = Literal::u32_unsuffixed(CODEGEN_VERSION);
    let server_name = &server.name;
    let server_version = &server.version;
    let tool_count = Literal::usize_unsuffixed(names.len());
    // The four large texts, in parts: the signature, and `tools/list` in
    // each dialect.
    let [ext, sep, ann] = tools_list_parts(server, options.jobs).map(text_literal_parts);
    let large = [text_literal_parts(signature_parts), ext, sep, ann];

    let Dispatch { order, slot_fn } = dispatch(&names, &table, linear, &rt);
    let [resolve_body, resolve_validated_body] = if linear {
        direct_dispatch(server, &rt)
    } else {
        [
            quote!(#rt::resolve_in(&TOOLS, slot(name), name, arguments)),
            quote!(#rt::resolve_validated_in(&TOOLS, slot(name), name, arguments)),
        ]
    };
    // A few tools' dispatch is small enough to inline into the caller,
    // which can then keep the outcome in registers and fold what it reads
    // from it.
    let inline = if linear {
        quote!(#[inline])
    } else {
        TokenStream::new()
    };
    let shared = |literals: [TokenStream; 4]| {
        let [signature_lit, list_ext, list_sep, list_ann] = literals;
        quote! {
        const _: () = ::core::assert!(
            #rt::CODEGEN_VERSION == #version,
            "this resolver was generated for another version of mcp-resolve-runtime: regenerate it with a matching mcp-resolve"
        );

        /// The server's name, as in `serverInfo`.
        #[allow(dead_code)]
        pub const SERVER_NAME: &str = #server_name;

        /// The server's version, as in `serverInfo`.
        #[allow(dead_code)]
        pub const SERVER_VERSION: &str = #server_version;

        /// The signature document's fingerprint (`sha256:` of its JCS form).
        #[allow(dead_code)]
        pub const FINGERPRINT: &str = #fingerprint;

        /// The signature document, exactly as `mcp-resolve signature` writes it.
        #[allow(dead_code)]
        pub const SIGNATURE_JSON: &str = #signature_lit;

        /// Every tool name, in declaration order.
        #[allow(dead_code)]
        pub static TOOL_NAMES: [&str; #tool_count] = [#(#names),*];

        /// The `tools/list` result for `dialect`, as JSON text: the static
        /// (conservative) annotations and the dialect's resolvable markers.
        #[allow(dead_code)]
        pub fn tools_list_json(dialect: #rt::Dialect) -> &'static str {
            match dialect {
                #rt::Dialect::Extension => #list_ext,
                #rt::Dialect::Sep1862 => #list_sep,
                #rt::Dialect::Annotations => #list_ann,
            }
        }

        /// Resolves a call: `-32602` for an unknown or non-resolvable tool and
        /// for arguments that are not a valid object for its `inputSchema`;
        /// otherwise the first variant whose condition holds, or the static
        /// annotations when none does.
        #[allow(dead_code)]
        #inline
        pub fn resolve(
            name: &str,
            arguments: &#rt::serde_json::Value,
        ) -> ::core::result::Result<&'static #rt::Resolved, #rt::RpcError> {
            #resolve_body
        }

        /// Like [`resolve`], for arguments the caller has already validated
        /// against the tool's `inputSchema` (by deserializing them into a
        /// typed struct, say): the schema is not checked again. Arguments
        /// that do not conform resolve to whatever their values match.
        #[allow(dead_code)]
        #inline
        pub fn resolve_validated(
            name: &str,
            arguments: &#rt::serde_json::Map<::std::string::String, #rt::serde_json::Value>,
        ) -> ::core::result::Result<&'static #rt::Resolved, #rt::RpcError> {
            #resolve_validated_body
        }

        /// Resolves a call and returns the JSON-RPC `result` text for `dialect`.
        #[allow(dead_code)]
        #inline
        pub fn resolve_json(
            name: &str,
            arguments: &#rt::serde_json::Value,
            dialect: #rt::Dialect,
        ) -> ::core::result::Result<::std::borrow::Cow<'static, str>, #rt::RpcError> {
            resolve(name, arguments).map(|resolved| resolved.result_json(dialect))
        }

        /// This resolver as a value, for code that serves any resolver
        /// (the `rmcp` wiring of `mcp-resolve-runtime`, say).
        #[allow(dead_code)]
        pub static RULES: #rt::Rules = #rt::Rules {
            server_name: SERVER_NAME,
            server_version: SERVER_VERSION,
            fingerprint: FINGERPRINT,
            signature_json: SIGNATURE_JSON,
            tool_names: &TOOL_NAMES,
            tools_list_json,
            resolve,
            resolve_validated,
        };

        #slot_fn
        }
    };

    // The shared items, then each resolvable tool's items, written on the
    // machine's cores; last, the table of tools. No syntax tree of the whole
    // file is ever held, nor the file as one string.
    let mut parts = vec![header(server, &fingerprint, &options.sources)];
    parts.extend(print_with_literals(
        "mcp-resolve placeholder s.",
        large,
        shared,
    )?);
    let threads = crate::par::threads(options.jobs);
    let printed = crate::par::map(
        &server.tools,
        threads,
        Some(crate::par::WORK_STACK),
        |i, tool| {
            tool.resolvable.then(|| {
                let literals = tool_literals(server, tool, linear.then_some(&*rt_text));
                tool_items(tool, i, &rt_text, linear, literals)
            })
        },
    );
    for result in printed {
        if let Some(text) = result.unwrap_or_else(|panic| std::panic::resume_unwind(panic)) {
            parts.push(text);
        }
    }
    let mut entries = Vec::with_capacity(order.len());
    for &i in &order {
        let Some(tool) = server.tools.get(i) else {
            return Err(CodegenError(
                "the name table names a tool that is not there".into(),
            ));
        };
        entries.push(if tool.resolvable {
            let t = format_ident!("TOOL_{}", i);
            quote!(::core::option::Option::Some(&#t))
        } else {
            quote!(::core::option::Option::None)
        });
    }
    if !linear {
        parts.push(print_items(quote! {
            /// Each tool in its slot (see `slot`); `None` for a tool that is not
            /// resolvable.
            static TOOLS: [::core::option::Option<&#rt::GeneratedTool>; #tool_count] = [#(#entries),*];
        })?);
    }
    Ok(parts)
}

/// Placeholder `i` after `prefix`, padded to the width of `lit` (the
/// literal it stands for, in parts) up to a line's width.
fn placeholder(prefix: &str, i: usize, lit: &[String]) -> String {
    const WIDE: usize = 160;
    let mut p = format!("{prefix}{i}");
    // Two quotes around it when printed.
    let width = lit
        .iter()
        .flat_map(|part| part.chars())
        .take(WIDE)
        .count()
        .saturating_sub(2);
    while p.len() < width {
        p.push('_');
    }
    p
}

/// Items printed with their large literals put in after printing: the
/// printer is given a short placeholder for each (as wide as its literal up
/// to a line's width, so the layout is the same) and would only copy the
/// literal, several times over. Each literal was written as Rust source on
/// its own ([`text_literal`]). The result is the printed text in pieces with
/// the literals moved in between, never copied into one string. Should a
/// text of the items spell a placeholder, they are printed with the
/// literals in place instead.
fn print_with_literals<const N: usize>(
    prefix: &str,
    large: [Vec<String>; N],
    items: impl Fn([TokenStream; N]) -> TokenStream,
) -> Result<Vec<String>, CodegenError> {
    let placeholders: [String; N] = std::array::from_fn(|i| placeholder(prefix, i, &large[i]));
    let stand_ins = placeholders
        .each_ref()
        .map(|p| quote_literal(Literal::string(p)));
    let printed = print_items(items(stand_ins))?;
    if let Ok(spans) = placeholder_spans(&printed, &placeholders) {
        let mut large = large.map(Some);
        let mut pieces = Vec::with_capacity(2 * N + 1);
        let mut from = 0;
        for (at, len, i) in spans {
            pieces.push(printed[from..at].to_string());
            pieces.extend(large[i].take().unwrap_or_default());
            from = at + len;
        }
        pieces.push(printed[from..].to_string());
        return Ok(pieces);
    }
    let mut literals = Vec::with_capacity(N);
    for source in &large {
        literals.push(source_literal(&source.concat())?);
    }
    let literals: [TokenStream; N] = literals
        .try_into()
        .map_err(|_| CodegenError("a literal went missing".into()))?;
    Ok(vec![print_items(items(literals))?])
}

fn quote_literal(lit: Literal) -> TokenStream {
    quote!(#lit)
}

/// A literal from its Rust source (as [`text_literal`] writes it).
fn source_literal(source: &str) -> Result<TokenStream, CodegenError> {
    source
        .parse::<Literal>()
        .map(quote_literal)
        .map_err(|e| CodegenError(format!("generated literal does not parse: {e}")))
}

/// Where each placeholder's literal is in `text` (offset, length, which
/// placeholder), in the order of the text; an error when one is not found
/// exactly once.
fn placeholder_spans(
    text: &str,
    placeholders: &[String],
) -> Result<Vec<(usize, usize, usize)>, CodegenError> {
    let mut spans = Vec::with_capacity(placeholders.len());
    for (i, p) in placeholders.iter().enumerate() {
        let quoted = Literal::string(p).to_string();
        let mut found = text.match_indices(&quoted);
        match (found.next(), found.next()) {
            (Some((at, _)), None) => spans.push((at, quoted.len(), i)),
            _ => return Err(CodegenError(format!("placeholder {p} is not in place"))),
        }
    }
    spans.sort_by_key(|&(at, _, _)| at);
    Ok(spans)
}

/// Items as prettyplease prints them, checked to parse back (what is
/// written must parse, not only the tokens it was printed from).
fn print_items(tokens: TokenStream) -> Result<String, CodegenError> {
    let file: syn::File = syn::parse2(tokens)
        .map_err(|e| CodegenError(format!("generated code does not parse: {e}")))?;
    let text = prettyplease::unparse(&file);
    syn::parse_file(&text)
        .map_err(|e| CodegenError(format!("generated code does not parse back: {e}")))?;
    Ok(text)
}

/// The bodies of `resolve` and `resolve_validated` for a few tools: a
/// `match` on the name whose arms validate (in `resolve`), call the tool's
/// matching function by name, so the compiler can inline it into the
/// dispatch (through the table's pointer it cannot), and pick the outcome
/// from the tool's static array. The errors are
/// [`mcp_resolve_runtime::resolve_in`]'s: every other name is answered by
/// `RpcError::unresolvable`.
fn direct_dispatch(server: &Server, rt: &TokenStream) -> [TokenStream; 2] {
    let arms = |validated: bool| {
        let arms = server
            .tools
            .iter()
            .enumerate()
            .filter(|(_, t)| t.resolvable)
            .map(|(i, tool)| {
                let name = tool.name.as_str();
                let (schema, outcomes, m) = (
                    format_ident!("SCHEMA_{}", i),
                    format_ident!("OUTCOMES_{}", i),
                    format_ident!("match_{}", i),
                );
                let arguments = if validated {
                    quote!(arguments)
                } else {
                    quote!(#schema.validate(#name, arguments)?)
                };
                quote!(#name => #rt::outcomes::select(&#outcomes, #m(#arguments)),)
            });
        let unresolvable =
            quote!(::core::result::Result::Err(#rt::RpcError::unresolvable(name, &TOOL_NAMES)));
        if !server.tools.iter().any(|t| t.resolvable) {
            // Nothing to match, and the arguments are never looked at.
            return quote! {
                let _ = arguments;
                #unresolvable
            };
        }
        quote! {
            match name {
                #(#arms)*
                _ => #unresolvable,
            }
        }
    };
    [arms(false), arms(true)]
}

/// The name dispatch of the generated resolver: the `slot` function, and
/// the tool in each slot (the order of the `TOOLS` table).
struct Dispatch {
    order: Vec<usize>,
    slot_fn: TokenStream,
}

fn dispatch(names: &[&str], table: &phf::Table, linear: bool, rt: &TokenStream) -> Dispatch {
    if linear {
        // `resolve` matches the name itself ([`direct_dispatch`]).
        return Dispatch {
            order: (0..names.len()).collect(),
            slot_fn: TokenStream::new(),
        };
    }
    let order = table.order.clone();
    let seed = Literal::u64_unsuffixed(table.seed);
    let displacements = table.displacements.iter().map(|(d1, d2)| {
        let (d1, d2) = (Literal::u32_unsuffixed(*d1), Literal::u32_unsuffixed(*d2));
        quote!((#d1, #d2))
    });
    let slot_names = order.iter().map(|&i| names[i]);
    let slot_fn = quote! {
        /// The slot of a tool name, through a perfect hash built when
        /// this file was generated.
        #[inline]
        fn slot(name: &str) -> ::core::option::Option<usize> {
            static INDEX: #rt::index::NameIndex = #rt::index::NameIndex {
                seed: #seed,
                displacements: &[#(#displacements),*],
                names: &[#(#slot_names),*],
            };
            INDEX.get(name)
        }
    };
    Dispatch { order, slot_fn }
}

fn header(server: &Server, fingerprint: &str, sources: &[String]) -> String {
    let clean = |s: &str| s.escape_debug().to_string();
    let mut h = String::new();
    h.push_str("// @generated by mcp-resolve. Do not edit: change the rules and regenerate\n");
    h.push_str("// (`mcp-resolve generate`, or `mcp_resolve::Builder` in build.rs).\n");
    h.push_str("//\n");
    h.push_str(&format!(
        "// Server: {} {}\n",
        clean(&server.name),
        clean(&server.version)
    ));
    for s in sources {
        h.push_str(&format!("// Input: {}\n", clean(s)));
    }
    h.push_str(&format!("// Signature: {fingerprint}\n"));
    h.push_str("//\n");
    h.push_str(
        "// Use: `resolve(name, &arguments)` → `&'static Resolved` (variant, annotations,\n",
    );
    h.push_str("// scopes, and each dialect's response via `result_json`), or `RpcError`.\n\n");
    h
}

/// The two large items of a tool, as Rust source: its outcomes and its
/// `inputSchema` (a literal). The outcomes are the literal the runtime
/// decodes (see [`mcp_resolve_runtime::outcomes`]), or, for a resolver of
/// a few tools (`array_in`: the runtime's path), an array of `Resolved`
/// written out (see [`outcomes_array`]).
fn tool_literals(server: &Server, tool: &Tool, array_in: Option<&str>) -> [String; 2] {
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
fn tool_items(tool: &Tool, index: usize, rt: &str, direct: bool, literals: [String; 2]) -> String {
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
fn runtime_path(path: &str) -> Result<(syn::Path, String), CodegenError> {
    let parsed: syn::Path =
        syn::parse_str(path).map_err(|e| CodegenError(format!("runtime path `{path}`: {e}")))?;
    let mut text = String::new();
    if parsed.leading_colon.is_some() {
        text.push_str("::");
    }
    for (i, segment) in parsed.segments.iter().enumerate() {
        if !segment.arguments.is_none() {
            return Err(CodegenError(format!(
                "runtime path `{path}`: a module path has no generic arguments"
            )));
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
fn doc_text(s: &str) -> String {
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

/// A tool's outcomes, every dialect's response precomputed, as the literal
/// the runtime decodes, or as an array of `Resolved` in the runtime at
/// `array_in`. `tool` is the tool's SEP-1862 `tools/list` entry; the
/// SEP-1862 results share the tool's head rather than repeat it.
fn encode_outcomes(
    tool: &Value,
    name: &str,
    resolutions: &[Resolution],
    array_in: Option<&str>,
) -> String {
    struct Texts {
        extension: String,
        sep1862: [String; 3],
        annotations: String,
    }
    let text =
        |d: Dialect, r: &Resolution| serde_json::to_string(&d.result(tool, r)).unwrap_or_default();
    let sep1862 = sep1862_pieces(tool, resolutions);
    // What every outcome's SEP-1862 text starts with.
    let head = sep1862
        .first()
        .map(|[head, _, _]| head.clone())
        .unwrap_or_default();
    let texts: Vec<Texts> = resolutions
        .iter()
        .zip(sep1862)
        .map(|(r, sep1862)| Texts {
            extension: text(Dialect::Extension, r),
            sep1862,
            annotations: text(Dialect::Annotations, r),
        })
        .collect();
    let parts: Vec<OutcomeParts<'_>> = resolutions
        .iter()
        .zip(&texts)
        .map(|(r, t)| {
            let a = &r.annotations;
            OutcomeParts {
                variant: r.variant.as_deref(),
                core: [a.read_only, a.destructive, a.idempotent, a.open_world],
                extra: a.extra.iter().collect(),
                scopes: r.required_scopes.iter().map(String::as_str).collect(),
                extension: &t.extension,
                sep1862: [&t.sep1862[0], &t.sep1862[1], &t.sep1862[2]],
                annotations: &t.annotations,
            }
        })
        .collect();
    match array_in {
        Some(rt) => outcomes_array(rt, name, &head, &parts),
        None => outcomes::encode(name, &head, &parts),
    }
}

/// A tool's outcomes as a Rust array of `Resolved` (the initializer of a
/// `static`), for the resolvers of a few tools: the outcome a call resolves
/// to is then an address the compiler knows, with no decoding on first use
/// to check for. The SEP-1862 texts that start with `head` share it, a
/// `const` in the block.
fn outcomes_array(rt: &str, name: &str, head: &str, parts: &[OutcomeParts<'_>]) -> String {
    use std::fmt::Write as _;
    let string = |s: &str| Literal::string(s).to_string();
    let mut out = format!(
        "{{
    const HEAD: &str = {};
    [
",
        text_literal(head)
    );
    for o in parts {
        let variant = match o.variant {
            Some(v) => format!("::core::option::Option::Some({})", string(v)),
            None => "::core::option::Option::None".into(),
        };
        let [read_only, destructive, idempotent, open_world] = o.core;
        let extra: Vec<String> = o
            .extra
            .iter()
            .map(|(hint, value)| format!("({}, {value})", string(hint)))
            .collect();
        let scopes: Vec<String> = o.scopes.iter().map(|s| string(s)).collect();
        // Written whole (see `sep1862_pieces`), a result has its own first
        // piece, as `outcomes::encode` keeps it.
        let [sep_head, sep_middle, sep_tail] = o.sep1862;
        let sep_head = if sep_head == head {
            "HEAD".to_string()
        } else {
            text_literal(sep_head)
        };
        let _ = write!(
            out,
            "        {rt}::Resolved {{
            \
                 tool: {tool},
            \
                 variant: {variant},
            \
                 annotations: {rt}::Annotations {{
                \
                     read_only: {read_only},
                \
                     destructive: {destructive},
                \
                     idempotent: {idempotent},
                \
                     open_world: {open_world},
                \
                     extra: {rt}::ExtraHints::Static(&[{extra}]),
            \
                 }},
            \
                 required_scopes: &[{scopes}],
            \
                 results: {rt}::ResultTexts {{
                \
                     extension: {extension},
                \
                     sep1862: [{sep_head}, {sep_middle}, {sep_tail}],
                \
                     annotations: {annotations},
            \
                 }},
        \
             }},
",
            tool = string(name),
            extra = extra.join(", "),
            scopes = scopes.join(", "),
            extension = text_literal(o.extension),
            sep_middle = text_literal(sep_middle),
            sep_tail = text_literal(sep_tail),
            annotations = text_literal(o.annotations),
        );
    }
    out.push_str(
        "    ]
}",
    );
    out
}

/// The SEP-1862 result texts of `resolutions`, each in three pieces:
/// everything before the annotations object (the same for every outcome of
/// a tool), the annotations object, and everything after it.
///
/// The runtime's [`Dialect::result`] shapes the result. Only its
/// annotations and `securitySchemes` differ from one resolution to the
/// next, so the tool's result is built and written once with a mark in
/// place of each, and each resolution's pieces are that text cut at the
/// marks with its own two values (taken from a result of the same
/// resolution for an empty tool) put in. When a mark is not found exactly
/// once, each result is written whole as its first piece.
fn sep1862_pieces(tool: &Value, resolutions: &[Resolution]) -> Vec<[String; 3]> {
    const ANNOTATIONS: &str = "\u{0}mcp-resolve:annotations\u{0}";
    const SCHEMES: &str = "\u{0}mcp-resolve:securitySchemes\u{0}";
    let whole = || {
        resolutions
            .iter()
            .map(|r| {
                let text = serde_json::to_string(&Dialect::Sep1862.result(tool, r));
                [text.unwrap_or_default(), String::new(), String::new()]
            })
            .collect()
    };
    let Some(first) = resolutions.first() else {
        return Vec::new();
    };
    let mut result = Dialect::Sep1862.result(tool, first);
    for (pointer, mark) in [
        ("/tool/annotations", ANNOTATIONS),
        ("/tool/securitySchemes", SCHEMES),
    ] {
        match result.pointer_mut(pointer) {
            Some(slot) => *slot = Value::String(mark.into()),
            None => return whole(),
        }
    }
    let text = serde_json::to_string(&result).unwrap_or_default();
    let once = |mark: &str| {
        let quoted = serde_json::to_string(mark).unwrap_or_default();
        let mut found = text.match_indices(&quoted);
        match (found.next(), found.next()) {
            (Some((at, _)), None) => Some((at, at + quoted.len())),
            _ => None,
        }
    };
    let (Some(annotations), Some(schemes)) = (once(ANNOTATIONS), once(SCHEMES)) else {
        return whole();
    };
    let empty = Value::Object(serde_json::Map::new());
    resolutions
        .iter()
        .map(|r| {
            let own = Dialect::Sep1862.result(&empty, r);
            let value = |pointer: &str| {
                serde_json::to_string(own.pointer(pointer).unwrap_or(&Value::Null))
                    .unwrap_or_default()
            };
            let (middle, scheme) = (value("/tool/annotations"), value("/tool/securitySchemes"));
            let head = &text[..annotations.0];
            // The annotations come before `securitySchemes` or after them.
            let tail = if annotations.1 <= schemes.0 {
                [&text[annotations.1..schemes.0], &scheme, &text[schemes.1..]].concat()
            } else {
                return [
                    [&text[..schemes.0], &scheme, &text[schemes.1..annotations.0]].concat(),
                    middle,
                    text[annotations.1..].to_string(),
                ];
            };
            [head.to_string(), middle, tail]
        })
        .collect()
}

/// A string literal for JSON text, as Rust source: raw (readable) when it
/// can be, escaped otherwise. Raw by construction — no bare CR, and a fence
/// of one `#` more than the longest run of `#` after a `"` (at most 255,
/// Rust's limit) — so it is not lexed again: for the signature of 10,000
/// tools that was a second pass over 90 MB.
fn text_literal(text: &str) -> String {
    let Some(hashes) = raw_fence(&[text]) else {
        return Literal::string(text).to_string();
    };
    let fence = "#".repeat(hashes);
    format!("r{fence}\"{text}\"{fence}")
}

/// [`text_literal`] of the text `parts` make, in parts: the raw literal's
/// opening, the parts themselves (moved, not copied), and its closing.
fn text_literal_parts(parts: Vec<String>) -> Vec<String> {
    let Some(hashes) = raw_fence(&parts) else {
        return vec![Literal::string(&parts.concat()).to_string()];
    };
    let fence = "#".repeat(hashes);
    let mut out = Vec::with_capacity(parts.len() + 2);
    out.push(format!("r{fence}\""));
    out.extend(parts);
    out.push(format!("\"{fence}"));
    out
}

/// How many `#` a raw string literal of the text `parts` make needs: one
/// more than the longest run of `#` after a `"` (none without a `"`); `None`
/// when no raw literal will do (a carriage return, which a raw literal
/// cannot hold, or a fence past the 255 `#` Rust allows).
///
/// JSON text is full of `"` and all but free of `#` and `\r`, so the scan
/// jumps from one `#` or `\r` to the next (`memchr`, many bytes at a time)
/// instead of stepping through every byte: at 10,000 tools the literals
/// are 150 MB.
fn raw_fence<S: AsRef<str>>(parts: &[S]) -> Option<usize> {
    const MAX_HASHES: usize = 255;
    let mut hashes = usize::from(
        parts
            .iter()
            .any(|p| memchr::memchr(b'"', p.as_ref().as_bytes()).is_some()),
    );
    // The run of `#` after a `"` that the part before ended in, if it did.
    let mut carried: Option<usize> = None;
    for part in parts {
        let bytes = part.as_ref().as_bytes();
        let mut at = 0;
        while let Some(found) = memchr::memchr2(b'#', b'\r', &bytes[at..]) {
            let start = at + found;
            if bytes[start] == b'\r' {
                return None;
            }
            let run = bytes[start..].iter().take_while(|&&b| b == b'#').count();
            let after_quote = match start.checked_sub(1) {
                Some(before) => (bytes[before] == b'"').then_some(0),
                None => carried,
            };
            if let Some(earlier) = after_quote {
                hashes = hashes.max(earlier + run + 1);
            }
            at = start + run;
        }
        let trailing = bytes.iter().rev().take_while(|&&b| b == b'#').count();
        carried = if trailing == bytes.len() {
            carried.map(|earlier| earlier + trailing)
        } else if bytes[bytes.len() - 1 - trailing] == b'"' {
            Some(trailing)
        } else {
            None
        };
    }
    (hashes <= MAX_HASHES).then_some(hashes)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The byte-at-a-time reading of the fence [`raw_fence`] computes with
    /// `memchr`.
    fn raw_fence_reference(parts: &[String]) -> Option<usize> {
        let (mut hashes, mut run, mut carriage_return) = (0, None, false);
        for &b in parts.iter().flat_map(|p| p.as_bytes()) {
            run = match (b, run) {
                (b'"', _) => Some(0),
                (b'#', Some(n)) => Some(n + 1),
                (b'\r', _) => {
                    carriage_return = true;
                    None
                }
                _ => None,
            };
            if let Some(n) = run {
                hashes = std::cmp::max(hashes, n + 1);
            }
        }
        (!carriage_return && hashes <= 255).then_some(hashes)
    }

    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        #[test]
        fn the_fence_is_the_byte_by_byte_one(
            parts in proptest::collection::vec(
                proptest::collection::vec(
                    proptest::sample::select(vec!['"', '#', 'a', '\r', 'é']), 0..12
                ).prop_map(|cs| cs.into_iter().collect::<String>()),
                0..5,
            )
        ) {
            proptest::prop_assert_eq!(raw_fence(&parts), raw_fence_reference(&parts));
        }
    }

    #[test]
    fn long_fences_are_measured_across_parts() {
        let parts =
            |a: usize, b: usize| vec![format!("x\"{}", "#".repeat(a)), "#".repeat(b), "y".into()];
        for (a, b) in [
            (0, 0),
            (3, 4),
            (200, 54),
            (200, 55),
            (0, 255),
            (255, 0),
            (300, 0),
        ] {
            assert_eq!(
                raw_fence(&parts(a, b)),
                raw_fence_reference(&parts(a, b)),
                "{a} {b}"
            );
        }
    }

    #[test]
    fn placeholders_are_filled_only_when_found_exactly_once() {
        let lits = ["r#\"big \"text\"#".to_string(), "\"b\"".to_string()];
        let parts = || lits.clone().map(|lit| vec![lit]);
        let ps = [0, 1].map(|i| placeholder("p.", i, &[lits[i].clone()]));
        assert_eq!(ps[0].len(), lits[0].len() - 2);
        let q = ps.each_ref().map(|p| Literal::string(p).to_string());
        let text = format!("const A: &str = {};\nconst B: &str = {};\n", q[0], q[1]);
        assert_eq!(
            placeholder_spans(&text, &ps).unwrap(),
            vec![(16, q[0].len(), 0), (16 + q[0].len() + 18, q[1].len(), 1)]
        );
        // Twice (a user's text spelling it), or not at all: not filled.
        let twice = format!("{text}// {}\n", q[1]);
        assert!(placeholder_spans(&twice, &ps).is_err());
        assert!(placeholder_spans("fn f() {}", &ps).is_err());

        // Printed in pieces, the literals moved in between.
        let items = |[a, b]: [TokenStream; 2]| quote!(const A: &str = #a; const B: &str = #b;);
        let pieces = print_with_literals("p.", parts(), items).unwrap();
        assert_eq!(pieces.len(), 5);
        assert_eq!(
            pieces.concat(),
            format!(
                "const A: &str = {};\nconst B: &str = {};\n",
                lits[0], lits[1]
            )
        );
        // A text that spells a placeholder: printed with the literals in place.
        let spelled = |[a, b]: [TokenStream; 2]| {
            let p = ps[0].as_str();
            quote!(const A: &str = #a; const B: &str = #b; const C: &str = #p;)
        };
        let pieces = print_with_literals("p.", parts(), spelled).unwrap();
        assert_eq!(pieces.len(), 1);
        assert!(pieces[0].contains(&lits[0]) && pieces[0].contains(&lits[1]));
    }

    #[test]
    fn raw_literals_survive_quotes_and_hashes() {
        let fence_255 = format!("\"{}", "#".repeat(254));
        let fence_256 = format!("\"{}", "#".repeat(255));
        for text in [
            "plain",
            "a\"b",
            "\"#",
            "x\"##y",
            "",
            "\"",
            "#",
            "new\nline",
            "a\rb",
            "nul\0 and é",
            &fence_255,
            &fence_256,
        ] {
            let lit = text_literal(text);
            let parsed: syn::LitStr = syn::parse_str(&lit).unwrap();
            assert_eq!(parsed.value(), text);
        }
        // In parts: a run of hashes across a part's end counts whole.
        let split = text_literal_parts(vec!["a\"#".into(), "#b".into()]);
        assert_eq!(split.first().map(String::as_str), Some("r###\""));
        assert_eq!(split.concat(), text_literal("a\"##b"));
        assert_eq!(text_literal_parts(Vec::new()).concat(), "r\"\"");
        assert_eq!(
            text_literal_parts(vec!["a".into(), "\r".into()]),
            vec!["\"a\\r\"".to_string()]
        );
        assert!(text_literal(&fence_255).starts_with('r'));
        assert!(text_literal(&fence_256).starts_with('"'));
        assert!(text_literal("a\rb").starts_with('"'));
    }
}
