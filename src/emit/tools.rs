//! `tools/list` tool objects, per dialect.

use mcp_resolve_runtime::Dialect;
use serde_json::{Map, Value};

use crate::ir::{Server, Tool};

/// The tool as `tools/list` advertises it: static (conservative) annotations,
/// and the dialect's resolvable marker when the tool has variants.
pub fn tool_object(server: &Server, tool: &Tool, dialect: Dialect) -> Value {
    let mut map = Map::new();
    map.insert("name".into(), Value::String(tool.name.clone()));
    if let Some(title) = &tool.title {
        map.insert("title".into(), Value::String(title.clone()));
    }
    if let Some(description) = &tool.description {
        map.insert("description".into(), Value::String(description.clone()));
    }
    map.insert("inputSchema".into(), tool.input_schema.clone());
    let annotations = server.hints.to_annotations(&tool.annotations);
    let annotations = match dialect {
        Dialect::Extension => annotations.core_json(),
        Dialect::Sep1862 | Dialect::Annotations => annotations.complete_json(),
    };
    map.insert("annotations".into(), annotations);
    if tool.resolvable {
        dialect.mark_resolvable(&mut map);
    }
    Value::Object(map)
}

/// The `tools/list` result for a dialect.
pub fn tools_list(server: &Server, dialect: Dialect) -> Value {
    let tools = server
        .tools
        .iter()
        .map(|t| tool_object(server, t, dialect))
        .collect();
    let mut map = Map::new();
    map.insert("tools".into(), Value::Array(tools));
    Value::Object(map)
}
