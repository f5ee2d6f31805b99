use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::RpcError;

/// The deepest argument nesting a resolver accepts; deeper objects are rejected
/// with `-32602` before validation, so hostile input cannot exhaust the stack.
pub const MAX_ARGUMENT_DEPTH: usize = 64;

/// The maximum number of validation errors reported in an error's `data`.
const MAX_REPORTED_ERRORS: usize = 16;

/// Why a tool's `inputSchema` is not a usable JSON Schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SchemaError {
    message: String,
}

impl SchemaError {
    /// The one-line reason.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// A compiled validator for one tool's full `inputSchema`.
#[derive(Debug)]
pub struct ArgumentValidator {
    validator: jsonschema::Validator,
}

impl ArgumentValidator {
    /// Compiles `schema`; the error message says why it is not a usable schema.
    pub fn new(schema: &Value) -> Result<Self, SchemaError> {
        crate::pattern::schema_validator_options()
            .build(schema)
            .map(|validator| ArgumentValidator { validator })
            .map_err(|e| SchemaError {
                message: e.to_string(),
            })
    }

    /// Compiles a schema given as JSON text (as generated code holds it).
    pub fn from_json(schema: &str) -> Result<Self, SchemaError> {
        let schema: Value = serde_json::from_str(schema).map_err(|e| SchemaError {
            message: e.to_string(),
        })?;
        Self::new(&schema)
    }

    /// Whether `arguments` are an object, within [`MAX_ARGUMENT_DEPTH`], that
    /// the schema accepts: [`ArgumentValidator::validate`] without the report.
    #[inline]
    pub fn is_valid(&self, arguments: &Value) -> bool {
        matches!(arguments, Value::Object(object) if !nests_too_deep(object))
            && self.validator.is_valid(arguments)
    }

    /// Checks `arguments` against the schema: `-32602` with the validation
    /// errors in `data` when they do not conform.
    pub fn validate(&self, tool: &str, arguments: &Value) -> Result<(), RpcError> {
        self.validate_object(tool, arguments).map(|_| ())
    }

    /// Like [`ArgumentValidator::validate`], returning the arguments object.
    ///
    /// Inlined into the caller (generated code calls it on every resolve);
    /// the refusal, with its report, is written out of line.
    #[inline]
    pub fn validate_object<'a>(
        &self,
        tool: &str,
        arguments: &'a Value,
    ) -> Result<&'a Map<String, Value>, RpcError> {
        match arguments {
            Value::Object(object)
                if !nests_too_deep(object) && self.validator.is_valid(arguments) =>
            {
                Ok(object)
            }
            _ => Err(self.refusal(tool, arguments)),
        }
    }

    /// Why [`ArgumentValidator::validate_object`] refuses `arguments`: not an
    /// object, nested too deep, or the schema's errors (in that order).
    #[cold]
    #[inline(never)]
    fn refusal(&self, tool: &str, arguments: &Value) -> RpcError {
        let Value::Object(object) = arguments else {
            return RpcError::invalid_params(format!(
                "arguments for tool {tool} must be an object"
            ));
        };
        if nests_too_deep(object) {
            return RpcError::invalid_params(format!(
                "arguments for tool {tool} nest deeper than {MAX_ARGUMENT_DEPTH} levels"
            ));
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
        RpcError {
            code: RpcError::INVALID_PARAMS,
            message: format!("invalid arguments for tool {tool}"),
            data: Some(Value::Array(errors)),
        }
    }
}

/// Validates `arguments` with a validator compiled lazily from generated code:
/// a schema that failed to compile is `-32603`, never a panic.
#[inline]
pub fn validate_with<'a>(
    validator: &Result<ArgumentValidator, SchemaError>,
    tool: &str,
    arguments: &'a Value,
) -> Result<&'a Map<String, Value>, RpcError> {
    match validator {
        Ok(v) => v.validate_object(tool, arguments),
        Err(e) => Err(does_not_compile(tool, e)),
    }
}

#[cold]
#[inline(never)]
fn does_not_compile(tool: &str, e: &SchemaError) -> RpcError {
    RpcError {
        code: RpcError::INTERNAL_ERROR,
        message: format!("the inputSchema of tool {tool} does not compile: {e}"),
        data: None,
    }
}

/// A tool's `inputSchema` as generated code holds it: JSON text, compiled
/// into an [`ArgumentValidator`] on first use (once per process, by whichever
/// thread comes first). One non-generic type for every tool, so a resolver of
/// thousands of tools holds them in one table rather than a lazy static each.
#[derive(Debug)]
pub struct LazyValidator {
    schema: &'static str,
    compiled: OnceLock<Result<ArgumentValidator, SchemaError>>,
}

impl LazyValidator {
    /// A validator for `schema` (JSON text), compiled when first used.
    pub const fn new(schema: &'static str) -> Self {
        LazyValidator {
            schema,
            compiled: OnceLock::new(),
        }
    }

    /// The compiled validator, or why the schema does not compile.
    #[inline]
    pub fn get(&self) -> &Result<ArgumentValidator, SchemaError> {
        self.compiled
            .get_or_init(|| ArgumentValidator::from_json(self.schema))
    }

    /// [`validate_with`] this validator: the arguments object, `-32602` when
    /// the arguments do not conform, `-32603` when the schema does not compile.
    #[inline]
    pub fn validate<'a>(
        &self,
        tool: &str,
        arguments: &'a Value,
    ) -> Result<&'a Map<String, Value>, RpcError> {
        validate_with(self.get(), tool, arguments)
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

/// Whether an arguments object (itself one level) nests deeper than
/// [`MAX_ARGUMENT_DEPTH`]: [`depth_exceeds`] without a call for each
/// top-level scalar, the common case.
#[inline]
fn nests_too_deep(object: &Map<String, Value>) -> bool {
    object.values().any(|v| {
        matches!(v, Value::Array(_) | Value::Object(_)) && depth_exceeds(v, MAX_ARGUMENT_DEPTH - 1)
    })
}

/// Whether `value` nests deeper than `limit`. Recursion is bounded by
/// `limit` itself, and nothing is allocated (this runs on every call).
fn depth_exceeds(value: &Value, limit: usize) -> bool {
    if limit == 0 {
        return true;
    }
    match value {
        Value::Array(items) => items.iter().any(|i| depth_exceeds(i, limit - 1)),
        Value::Object(map) => map.values().any(|i| depth_exceeds(i, limit - 1)),
        _ => false,
    }
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
    fn depth_counts_the_outermost_value_as_one() {
        let mut v = json!(1);
        for _ in 0..3 {
            v = json!([v]);
        }
        // [[[1]]]: four levels.
        assert!(!depth_exceeds(&v, 4));
        assert!(depth_exceeds(&v, 3));
        assert!(!depth_exceeds(&json!({"a": []}), 2));
        assert!(depth_exceeds(&json!({"a": []}), 1));
        assert!(!depth_exceeds(&json!({}), 1));
    }

    #[test]
    fn the_limit_is_exact_for_objects_and_arrays() {
        let v = ArgumentValidator::new(&json!({"type": "object"})).unwrap();
        for inner in [json!({}), json!([]), json!("x")] {
            let levels = 1; // a scalar is a level too, as `[[[1]]]` is four
            // `{"a": {"a": … inner}}`: the arguments object is level one.
            let nested = |depth: usize| {
                let mut value = inner.clone();
                for _ in 0..depth - 1 - levels {
                    value = json!({ "a": value });
                }
                json!({ "a": value })
            };
            for depth in [
                MAX_ARGUMENT_DEPTH - 1,
                MAX_ARGUMENT_DEPTH,
                MAX_ARGUMENT_DEPTH + 1,
            ] {
                let args = nested(depth);
                let deep = depth_exceeds(&args, MAX_ARGUMENT_DEPTH);
                assert_eq!(deep, depth > MAX_ARGUMENT_DEPTH, "{depth} levels, {inner}");
                assert_eq!(nests_too_deep(args.as_object().unwrap()), deep);
                assert_eq!(v.is_valid(&args), !deep);
                assert_eq!(v.validate("t", &args).is_ok(), !deep);
            }
        }
    }

    #[test]
    fn long_messages_are_truncated_on_a_char_boundary() {
        let s = "é".repeat(1000);
        let t = truncate(&s);
        assert!(t.len() < 600);
        assert!(t.ends_with('…'));
    }
}
