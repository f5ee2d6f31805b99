//! `invalid-schema`: every inputSchema compiles with a real JSON Schema
//! validator (draft by `$schema`, 2020-12 by default) and describes an object.
//!
//! Why: resolution validates arguments against the full inputSchema; a schema
//! that does not compile cannot be enforced, and MCP requires `type: object`.

use serde_json::Value;

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::Server;

/// Returns, per tool, its compiled validator when the schema is usable by later checks.
pub(super) fn check(
    server: &Server,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Option<jsonschema::Validator>> {
    server
        .tools
        .iter()
        .map(|tool| {
            let compiled = jsonschema::options()
                .should_validate_formats(false)
                .build(&tool.input_schema);
            let (validator, problem) = match compiled {
                Err(e) => (None, Some(e.to_string())),
                Ok(_) if tool.input_schema.get("type") != Some(&Value::String("object".into())) => {
                    (
                        None,
                        Some("an inputSchema must have `type: object`".to_string()),
                    )
                }
                Ok(v) => (Some(v), None),
            };
            if let Some(problem) = &problem {
                diags.push(
                    Diagnostic::new(
                        Code::InvalidSchema,
                        format!(
                            "inputSchema of tool `{}` is not a valid JSON Schema: {}",
                            tool.name,
                            first_line(problem)
                        ),
                    )
                    .at(tool.schema_loc.0)
                    .for_tool(&tool.name),
                );
            }
            validator
        })
        .collect()
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}
