//! mcp-resolve: a compiler for MCP tool-resolution rules.
//!
//! Phases, data flowing one way: [`parse`] (YAML → AST with spans) →
//! [`lower`] (AST → [`ir`]) → [`check`] (diagnostics) → [`emit`]
//! (signature, `tools/list`), and [`resolve`] (the reference resolver).
//! [`project`] drives them; the CLI only wraps the library.
#![deny(missing_docs)]

pub mod analysis;
pub mod ast;
pub mod builder;
pub mod check;
pub mod codegen;
pub mod diagnostic;
pub mod diff;
pub mod emit;
pub mod eval;
#[cfg(feature = "cli")]
pub mod format;
pub mod hints;
pub mod ir;
pub mod lower;
pub mod parse;
pub mod project;
pub(crate) mod regex_cache;
pub mod registry;
pub mod resolve;
pub mod rules_schema;
pub mod schema;
pub mod source;
pub(crate) mod suggest;

pub use builder::Builder;
pub use project::{LoadError, Project, load, load_str};
pub use resolve::Resolver;
