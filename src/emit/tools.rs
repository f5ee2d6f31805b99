//! The `tools/list` result, per dialect.

use mcp_resolve_runtime::Dialect;
use serde_json::{Map, Value};

use crate::ir::Server;

/// The `tools/list` result for a dialect: every tool's
/// [`list_entry`](mcp_resolve_runtime::signature::SignatureTool::list_entry).
pub fn tools_list(server: &Server, dialect: Dialect) -> Value {
    let tools = server
        .tools
        .iter()
        .map(|t| t.to_model(&server.hints).list_entry(dialect))
        .collect();
    let mut map = Map::new();
    map.insert("tools".into(), Value::Array(tools));
    Value::Object(map)
}
