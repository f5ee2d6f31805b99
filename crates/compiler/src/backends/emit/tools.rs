//! The `tools/list` result, per dialect.

use mcp_resolve_runtime::Dialect;
use serde_json::{Map, Value};

use crate::ir::Server;

/// The `tools/list` result for a dialect: every tool's
/// [`list_entry`](mcp_resolve_host::signature::SignatureTool::list_entry).
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

/// [`tools_list`] as compact JSON text in each dialect of
/// [`Dialect::ALL`], built tool by tool on `jobs` threads (0: every core)
/// and returned in parts: `{"tools":[`, each tool's entry (after a comma
/// but the first), `]}`. Joined, each is `serde_json::to_string` of
/// [`tools_list`], byte for byte (compact JSON text is compositional).
pub fn tools_list_parts(server: &Server, jobs: usize) -> [Vec<String>; 3] {
    let threads = crate::par::threads(jobs);
    let entries = crate::par::map(&server.tools, threads, None, |i, tool| {
        let model = tool.to_model(&server.hints);
        Dialect::ALL.map(|dialect| {
            let mut text = Vec::with_capacity(1024);
            if i > 0 {
                text.push(b',');
            }
            // Writing a JSON value to a Vec cannot fail.
            let _ = serde_json::to_writer(&mut text, &model.list_entry(dialect));
            String::from_utf8(text).unwrap_or_default()
        })
    });
    let mut lists: [Vec<String>; 3] = std::array::from_fn(|_| {
        let mut parts = Vec::with_capacity(server.tools.len() + 2);
        parts.push("{\"tools\":[".to_string());
        parts
    });
    for entry in entries {
        let entry = entry.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        for (list, text) in lists.iter_mut().zip(entry) {
            list.push(text);
        }
    }
    for list in &mut lists {
        list.push("]}".to_string());
    }
    lists
}
