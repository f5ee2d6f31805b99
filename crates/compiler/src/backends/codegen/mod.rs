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
//! outcomes; each tool is one literal (`DATA_N`: its `tools/list` entry,
//! then its outcomes as facts, decoded on first use, the response texts
//! derived from them) that the schema is a range of and `tools/list` is
//! built from: the compiler's cost is in items and expressions, and the
//! file's size in texts held more than once. Up to eight, `resolve` is a
//! `match` on the name, and each
//! tool's outcomes are a static array of `Resolved` written out, which the
//! compiler indexes at a constant: a few tools cost the build nothing, and
//! the call costs what a hand-written `match` does.

mod literals;
pub(crate) mod matching;
mod outcome_items;
pub(crate) mod phf;
mod tool;

use mcp_resolve_runtime::listing::{self, EntryParts};
use mcp_resolve_runtime::outcomes::{self, OutcomeParts};
use mcp_resolve_runtime::{CODEGEN_VERSION, Dialect, Resolution};
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use serde_json::Value;

use self::literals::*;
pub(crate) use self::outcome_items::sep1862_pieces;
use self::outcome_items::*;
pub(crate) use self::tool::resolutions;
use self::tool::*;
use crate::emit::signature::{Layout, SignatureText, signature_text};
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

/// Why code could not be generated. Each is a bug of the generator (the
/// emitters assume checked rules) or a bad runtime path.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodegenError {
    /// Two tools share a name.
    #[error("tool names repeat")]
    RepeatedNames,
    /// The name table names a tool that is not there.
    #[error("the name table names a tool that is not there")]
    MissingTool,
    /// A large literal was lost between lexing and printing.
    #[error("a literal went missing")]
    MissingLiteral,
    /// A large literal's source does not lex.
    #[error("generated literal does not parse: {0}")]
    Literal(#[source] proc_macro2::LexError),
    /// A literal's placeholder is not in the printed text exactly once.
    #[error("placeholder {0} is not in place")]
    Placeholder(String),
    /// The generated items do not parse.
    #[error("generated code does not parse: {0}")]
    Parse(#[source] syn::Error),
    /// The printed items do not parse back.
    #[error("generated code does not parse back: {0}")]
    ParseBack(#[source] syn::Error),
    /// The runtime path (`Options::runtime_path`) is not a module path.
    #[error("runtime path `{path}`: {why}")]
    RuntimePath {
        /// The path given.
        path: String,
        /// Why it is not a module path.
        why: String,
    },
}

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
    } = signature_text(server, options.jobs, Layout::Canonical);

    let names: Vec<&str> = server.tools.iter().map(|t| t.name.as_str()).collect();
    let table = phf::build(&names).ok_or(CodegenError::RepeatedNames)?;
    // A few names are found fastest by a `match` (a length check, then a
    // compare, per name); beyond that the perfect hash keeps dispatch flat.
    let linear = names.len() <= LINEAR_DISPATCH_MAX;
    let Dispatch { order, slot_fn } = dispatch(&names, &table, linear, &rt);
    let head = Head::new(server, &fingerprint, linear, slot_fn, &rt);

    // The shared items, then each resolvable tool's items, written on the
    // machine's cores; last, the table of tools. No syntax tree of the whole
    // file is ever held, nor the file as one string.
    let mut parts = vec![header(server, &fingerprint, &options.sources)];
    parts.extend(head.parts(server, options.jobs, text_literal_parts(signature_parts))?);
    parts.extend(tool_parts(server, linear, &rt_text, options.jobs));
    if !linear {
        parts.push(tools_table(server, &order, &rt)?);
    }
    Ok(parts)
}

/// What the shared items of a generated file are made of.
struct Head<'a> {
    rt: &'a TokenStream,
    linear: bool,
    version: Literal,
    server_name: &'a str,
    server_version: &'a str,
    fingerprint: &'a str,
    names: Vec<&'a str>,
    tool_count: Literal,
    resolve_body: TokenStream,
    resolve_validated_body: TokenStream,
    /// `#[inline]` on the entry points of a few tools' dispatch, which is
    /// small enough to inline into the caller (which can then keep the
    /// outcome in registers and fold what it reads from it).
    inline: TokenStream,
    slot_fn: TokenStream,
}

impl<'a> Head<'a> {
    fn new(
        server: &'a Server,
        fingerprint: &'a str,
        linear: bool,
        slot_fn: TokenStream,
        rt: &'a TokenStream,
    ) -> Head<'a> {
        let [resolve_body, resolve_validated_body] = if linear {
            direct_dispatch(server, rt)
        } else {
            [
                quote!(#rt::resolve_in(&TOOLS, slot(name), name, arguments)),
                quote!(#rt::resolve_validated_in(&TOOLS, slot(name), name, arguments)),
            ]
        };
        let names: Vec<&str> = server.tools.iter().map(|t| t.name.as_str()).collect();
        Head {
            rt,
            linear,
            version: Literal::u32_unsuffixed(CODEGEN_VERSION),
            server_name: &server.name,
            server_version: &server.version,
            fingerprint,
            tool_count: Literal::usize_unsuffixed(names.len()),
            names,
            resolve_body,
            resolve_validated_body,
            inline: if linear {
                quote!(#[inline])
            } else {
                TokenStream::new()
            },
            slot_fn,
        }
    }

    /// The shared items, printed with the signature's literal (and, for a
    /// few tools, the `tools/list` literals) written in.
    fn parts(
        &self,
        server: &Server,
        jobs: usize,
        signature: Vec<String>,
    ) -> Result<Vec<String>, CodegenError> {
        let rt = self.rt;
        if self.linear {
            // A few tools' lists are literals: nothing to build on first use.
            let [ext, sep, ann] = tools_list_parts(server, jobs).map(text_literal_parts);
            print_with_literals(
                "mcp-resolve placeholder s.",
                [signature, ext, sep, ann],
                |[signature, ext, sep, ann]| {
                    let body = quote! {
                        match dialect {
                            #rt::Dialect::Extension => #ext,
                            #rt::Dialect::Sep1862 => #sep,
                            #rt::Dialect::Annotations => #ann,
                        }
                    };
                    self.items(signature, body, TokenStream::new())
                },
            )
        } else {
            // Built from each tool's literal (its entry) on first use.
            let data = (0..self.names.len()).map(|i| format_ident!("DATA_{}", i));
            let list_static = quote! {
                /// The `tools/list` results, built from each tool's literal.
                static TOOLS_LIST: #rt::listing::ToolsList = #rt::listing::ToolsList::new(&[#(#data),*]);
            };
            print_with_literals("mcp-resolve placeholder s.", [signature], |[signature]| {
                self.items(
                    signature,
                    quote!(TOOLS_LIST.get(dialect)),
                    list_static.clone(),
                )
            })
        }
    }

    /// The shared items: constants, `tools_list_json`, the entry points,
    /// `RULES` and the slot function.
    fn items(
        &self,
        signature_lit: TokenStream,
        list_body: TokenStream,
        list_static: TokenStream,
    ) -> TokenStream {
        let Head {
            rt,
            version,
            server_name,
            server_version,
            fingerprint,
            names,
            tool_count,
            resolve_body,
            resolve_validated_body,
            inline,
            slot_fn,
            ..
        } = self;
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

        /// The signature document in its canonical form (RFC 8785, fingerprint
        /// included): the line `mcp-resolve signature --canonical` writes.
        #[allow(dead_code)]
        pub const SIGNATURE_JSON: &str = #signature_lit;

        /// Every tool name, in declaration order.
        #[allow(dead_code)]
        pub static TOOL_NAMES: [&str; #tool_count] = [#(#names),*];

        /// The `tools/list` result for `dialect`, as JSON text: the static
        /// (conservative) annotations and the dialect's resolvable markers.
        #[allow(dead_code)]
        pub fn tools_list_json(dialect: #rt::Dialect) -> &'static str {
            #list_body
        }
        #list_static

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
    }
}

/// Each tool's items, written on the machine's cores: a few tools' when
/// they are resolvable (`linear`), every tool's literal otherwise.
fn tool_parts(server: &Server, linear: bool, rt_text: &str, jobs: usize) -> Vec<String> {
    let threads = crate::par::threads(jobs);
    let printed = crate::par::map(
        &server.tools,
        threads,
        Some(crate::par::WORK_STACK),
        |i, tool| {
            if linear {
                tool.resolvable.then(|| {
                    let literals = tool_literals(server, tool, rt_text);
                    tool_items(tool, i, rt_text, literals)
                })
            } else {
                Some(table_tool_items(server, tool, i, rt_text))
            }
        },
    );
    printed
        .into_iter()
        .filter_map(|result| result.unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
        .collect()
}

/// The table of tools in their slots (`order`), past a few tools.
fn tools_table(server: &Server, order: &[usize], rt: &TokenStream) -> Result<String, CodegenError> {
    let mut entries = Vec::with_capacity(order.len());
    for &i in order {
        let Some(tool) = server.tools.get(i) else {
            return Err(CodegenError::MissingTool);
        };
        entries.push(if tool.resolvable {
            let t = format_ident!("TOOL_{}", i);
            quote!(::core::option::Option::Some(&#t))
        } else {
            quote!(::core::option::Option::None)
        });
    }
    let tool_count = Literal::usize_unsuffixed(server.tools.len());
    print_items(quote! {
        /// Each tool in its slot (see `slot`); `None` for a tool that is not
        /// resolvable.
        static TOOLS: [::core::option::Option<&#rt::GeneratedTool>; #tool_count] = [#(#entries),*];
    })
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
