//! `invalid-schema`: every inputSchema and outputSchema compiles with a real
//! JSON Schema validator (draft by `$schema`, 2020-12 by default) and
//! describes an object.
//!
//! Why: resolution validates arguments against the full inputSchema; a schema
//! that does not compile cannot be enforced, and MCP requires `type: object`.

use serde_json::Value;

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::Tool;
use mcp_resolve_runtime::pattern::schema_validator_options;

/// Returns the tool's compiled validator when the schema is usable by later checks.
pub(super) fn check_tool(
    tool: &Tool,
    diags: &mut Vec<Diagnostic>,
) -> Option<jsonschema::Validator> {
    check_output_schema(tool, diags);
    let compiled = schema_validator_options().build(&tool.input_schema);
    let (validator, problem) = match compiled {
        Err(e) => (None, Some(e.to_string())),
        Ok(_) if tool.input_schema.get("type") != Some(&Value::String("object".into())) => (
            None,
            Some("an inputSchema must have `type: object`".to_string()),
        ),
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
}

fn check_output_schema(tool: &Tool, diags: &mut Vec<Diagnostic>) {
    let Some(schema) = &tool.output_schema else {
        return;
    };
    let problem = match schema_validator_options().build(schema) {
        Err(e) => e.to_string(),
        Ok(_) if schema.get("type") != Some(&Value::String("object".into())) => {
            "an outputSchema must have `type: object`".to_string()
        }
        Ok(_) => return,
    };
    diags.push(
        Diagnostic::new(
            Code::InvalidSchema,
            format!(
                "outputSchema of tool `{}` is not a valid JSON Schema: {}",
                tool.name,
                first_line(&problem)
            ),
        )
        .at(tool.output_schema_loc.0)
        .for_tool(&tool.name),
    );
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}
