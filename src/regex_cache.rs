//! Regex compilation with limits, shared by checks, the resolver and
//! generated code (the implementation lives in the runtime crate).

pub(crate) use mcp_resolve_runtime::pattern::compile_pattern;
