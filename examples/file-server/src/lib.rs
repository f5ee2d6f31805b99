//! An MCP server on the official Rust SDK (`rmcp`) whose tool annotations
//! resolve per call: its `build.rs` compiles `rules/file-server.yaml` with
//! `mcp_resolve::Builder`, and `mcp_resolve_runtime::rmcp` serves the result
//! (`tools/list` markers, `tools/resolve`, `signature`).
//!
//! Run it as `file-server --root DIR [--dialect D] [--http ADDR]`.

pub mod sandbox;
pub mod server;
