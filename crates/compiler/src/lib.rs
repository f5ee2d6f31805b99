//! mcp-resolve: a compiler for MCP tool-resolution rules.
//!
//! The library face is small: [`load`] (or [`load_str`]) reads rules files
//! into a checked [`Project`] — its [`ir`] servers, [`ast`] files and
//! [`diagnostic`]s — which [`emit`] turns into a signature document or a
//! `tools/list`, [`Resolver`] resolves calls against, [`diff`] compares, and
//! [`Builder`] turns into a Rust resolver from `build.rs`.
//!
//! This is what a `build.rs` compiles: no command line, async runtime or
//! HTTP stack is in its dependency tree (the `mcp-resolve` command is the
//! `mcp-resolve-cli` crate, the proxy `mcp-resolve-proxy`).
//!
//! Inside, data flows one way: parse (YAML or `.rules` → AST with spans) →
//! lower (AST → IR) → check (diagnostics) → analysis (derived facts) →
//! emit / codegen; `docs/architecture.md` maps where each concept lives.
//! Those phases are private; what other crates need of them is documented
//! API ([`suggest`], [`yaml`], [`facts`]), and the project's tests,
//! benchmarks and fuzz targets reach the rest through the hidden
//! `internals` module, which carries no stability promise.
#![deny(missing_docs)]
// No library function over 100 lines (clippy.toml); each exception says why
// it reads better whole. Tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

// The modules by layer, a directory each: util < model < semantics <
// phases < driver < backends (a module uses its own layer and those below,
// never one above: `tests/it/layering.rs`), re-exported here under the
// names the crate has always had.
mod backends;
mod driver;
mod model;
mod phases;
mod semantics;
mod util;

pub use backends::{
    builder, diff, emit, explain, format, import, matcher, python, registry, resolve, rules_schema,
    typescript,
};
pub use driver::project;
pub use model::{ast, diagnostic, hints, ir};
pub use util::source;

use backends::codegen;
use phases::{analysis, check, lower, parse};
use semantics::{eval, schema};
use util::{markup, par, regex_cache};

pub use analysis::{AnalysisCache, Limits as AnalysisLimits};
pub use builder::Builder;
pub use project::{
    LoadError, LoadOptions, Project, Stage, analyse, analyse_until, load, load_str, load_str_with,
    load_texts, load_with,
};
pub use resolve::Resolver;

/// "Did you mean" suggestions and backticked lists, worded as the
/// compiler's diagnostics word them: for the crates that report on files
/// of their own alike (the policy crate's YAML policies, the command).
pub mod suggest {
    pub use crate::util::suggest::{backticked, closest, did_you_mean};
}

/// YAML read into a tree that keeps each node's span, with the rules
/// files' resource limits (no alias bomb, no file over
/// [`yaml::MAX_FILE_BYTES`]): for other YAML files read with the same
/// diagnostics (the policy crate's YAML policies).
pub mod yaml {
    pub use crate::parse::yaml::{MAX_FILE_BYTES, YNode, YValue, YamlError, parse, parse_within};
}

/// What the analysis proves of a server read without a [`Project`] (the
/// policy crate's decision tables, the language server's hovers).
pub mod facts {
    use serde_json::Value;

    /// For each of `server`'s tools, in order, whether its variants are
    /// proved to cover every call its `inputSchema` accepts; `false` when
    /// they are not, or when the analysis could not decide.
    pub fn exhaustive(server: &crate::ir::Server) -> Vec<bool> {
        let mut diagnostics = Vec::new();
        crate::analysis::analyze_server(server, &mut diagnostics)
            .iter()
            .map(|analysis| analysis.as_ref().is_some_and(|a| a.is_exhaustive()))
            .collect()
    }

    /// The smallest value `schema` accepts, as the analysis builds its
    /// examples (within its default limits); `None` when it finds none.
    pub fn minimal_value(schema: &Value) -> Option<Value> {
        crate::analysis::minimal_value(schema, crate::analysis::Limits::default())
    }
}

/// The compiler's phases, for the project's tests, benchmarks and fuzz
/// targets only: no library or command source uses them (the layering test
/// `no_library_or_command_uses_the_compilers_internals` holds that). Not
/// part of the documented API: anything here may change in any release.
#[doc(hidden)]
pub mod internals {
    /// Semantic analysis: reachability, exhaustiveness, the derived bound.
    pub mod analysis {
        pub use crate::analysis::*;
    }
    /// The checks behind every diagnostic.
    pub mod check {
        pub use crate::check::*;
    }
    /// Rust code generation.
    pub mod codegen {
        pub use crate::codegen::*;
    }
    /// The reference evaluator of `when` conditions.
    pub mod eval {
        pub use crate::eval::*;
    }
    /// AST → IR.
    pub mod lower {
        pub use crate::lower::*;
    }
    /// YAML and `.rules` → AST.
    pub mod parse {
        pub use crate::parse::*;
    }
    /// JSON Schema navigation shared by the phases.
    pub mod schema {
        pub use crate::schema::*;
    }
}
