use serde_json::{Map, Value};

use crate::RpcError;

/// The deepest argument nesting a resolver accepts; deeper objects are rejected
/// with `-32602` before validation, so hostile input cannot exhaust the stack.
pub const MAX_ARGUMENT_DEPTH: usize = 64;

/// The maximum number of validation errors reported in an error's `data`.
const MAX_REPORTED_ERRORS: usize = 16;

/// A compiled validator for one tool's full `inputSchema`.
#[derive(Debug)]
pub struct ArgumentValidator {
    validator: jsonschema::Validator,
}

impl ArgumentValidator {
    /// Compiles `schema`; the error message says why it is not a usable schema.
    pub fn new(schema: &Value) -> Result<Self, String> {
        jsonschema::options()
            .should_validate_formats(false)
            .build(schema)
            .map(|validator| ArgumentValidator { validator })
            .map_err(|e| e.to_string())
    }

    /// Checks `arguments` against the schema: `-32602` with the validation
    /// errors in `data` when they do not conform.
    pub fn validate(&self, tool: &str, arguments: &Value) -> Result<(), RpcError> {
        if !arguments.is_object() {
            return Err(RpcError::invalid_params(format!(
                "arguments for tool {tool} must be an object"
            )));
        }
        if depth_exceeds(arguments, MAX_ARGUMENT_DEPTH) {
            return Err(RpcError::invalid_params(format!(
                "arguments for tool {tool} nest deeper than {MAX_ARGUMENT_DEPTH} levels"
            )));
        }
        if self.validator.is_valid(arguments) {
            return Ok(());
        }
        let errors: Vec<Value> = self
            .validator
            .iter_errors(arguments)
            .take(MAX_REPORTED_ERRORS)
            .map(|e| {
                let mut map = Map::new();
                map.insert(
                    "instancePath".into(),
                    Value::String(e.instance_path().to_string()),
                );
                map.insert("message".into(), Value::String(truncate(&e.to_string())));
                Value::Object(map)
            })
            .collect();
        Err(RpcError {
            code: RpcError::INVALID_PARAMS,
            message: format!("invalid arguments for tool {tool}"),
            data: Some(Value::Array(errors)),
        })
    }
}

/// Error messages quote the offending value; keep a megabyte string out of the response.
fn truncate(message: &str) -> String {
    const LIMIT: usize = 512;
    if message.len() <= LIMIT {
        return message.to_string();
    }
    let mut end = LIMIT;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &message[..end])
}

/// Whether `value` nests deeper than `limit`, checked without recursion.
fn depth_exceeds(value: &Value, limit: usize) -> bool {
    let mut stack = vec![(value, 1usize)];
    while let Some((v, depth)) = stack.pop() {
        if depth > limit {
            return true;
        }
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|i| (i, depth + 1))),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nesting_limit_is_enforced_before_validation() {
        let mut deep = json!(1);
        for _ in 0..100 {
            deep = json!({ "a": deep });
        }
        let v = ArgumentValidator::new(&json!({"type": "object"})).unwrap();
        let err = v.validate("t", &deep).unwrap_err();
        assert_eq!(err.code, RpcError::INVALID_PARAMS);
        assert!(err.message.contains("nest deeper"));
    }

    #[test]
    fn long_messages_are_truncated_on_a_char_boundary() {
        let s = "é".repeat(1000);
        let t = truncate(&s);
        assert!(t.len() < 600);
        assert!(t.ends_with('…'));
    }
}
