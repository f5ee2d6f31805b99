//! The backends, over a checked project: the reference resolver, the
//! signature and `tools/list` emitters, code generation and the load-time
//! matcher's compiler, `diff`, `explain`, `fmt`/`convert`, `import`, the
//! build.rs `Builder`, the registry's `server.json`, the rules schema, and
//! the TypeScript resolver.

pub mod builder;
pub(crate) mod codegen;
pub mod diff;
pub mod emit;
pub mod explain;
pub mod format;
pub mod import;
pub mod matcher;
pub mod python;
pub mod registry;
pub mod resolve;
pub mod rules_schema;
pub mod typescript;
