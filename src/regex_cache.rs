//! Regex compilation with limits, shared by checks, the resolver and
//! generated code (the implementation lives in the runtime crate).

pub use mcp_resolve_runtime::pattern::{REGEX_SIZE_LIMIT, compile_pattern};
