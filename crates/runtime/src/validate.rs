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
    /// The schema proves that no instance it accepts nests deeper than
    /// [`MAX_ARGUMENT_DEPTH`], and validating any instance recurses no
    /// deeper than the schema ([`schema_bounds_depth`]): the nesting check
    /// can wait for a refusal.
    bounded: bool,
}

impl ArgumentValidator {
    /// Compiles `schema`; the error message says why it is not a usable schema.
    pub fn new(schema: &Value) -> Result<Self, SchemaError> {
        crate::pattern::schema_validator_options()
            .build(schema)
            .map(|validator| ArgumentValidator {
                validator,
                bounded: schema_bounds_depth(schema),
            })
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
        matches!(arguments, Value::Object(object) if self.within_depth(object))
            && self.validator.is_valid(arguments)
    }

    /// Whether `object` may be handed to the validator: always when the
    /// schema bounds the depth (anything deeper is refused by the schema, and
    /// the refusal checks the depth first, so the answer is the same),
    /// otherwise when it is within [`MAX_ARGUMENT_DEPTH`].
    #[inline]
    fn within_depth(&self, object: &Map<String, Value>) -> bool {
        self.bounded || !nests_too_deep(object)
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
                if self.within_depth(object) && self.validator.is_valid(arguments) =>
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
        RpcError::new(
            RpcError::INVALID_PARAMS,
            format!("invalid arguments for tool {tool}"),
            Some(Value::Array(errors)),
        )
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
    RpcError::new(
        RpcError::INTERNAL_ERROR,
        format!("the inputSchema of tool {tool} does not compile: {e}"),
        None,
    )
}

/// A tool's `inputSchema` as generated code holds it: JSON text, compiled
/// into an [`ArgumentValidator`] on first use (once per process, by whichever
/// thread comes first). One non-generic type for every tool, so a resolver of
/// thousands of tools holds them in one table rather than a lazy static each.
#[derive(Debug)]
pub struct LazyValidator {
    /// The text the schema is in, from `start` to `end`.
    source: &'static str,
    start: usize,
    end: usize,
    compiled: OnceLock<Result<ArgumentValidator, SchemaError>>,
}

impl LazyValidator {
    /// A validator for `schema` (JSON text), compiled when first used.
    pub const fn new(schema: &'static str) -> Self {
        LazyValidator::within(schema, 0, schema.len())
    }

    /// A validator for the schema at `start..end` of `source` (generated
    /// code points into the text that holds it already, the tool's
    /// `tools/list` entry). A range that is not in `source` is an error
    /// when first used, as a schema that does not compile is.
    pub const fn within(source: &'static str, start: usize, end: usize) -> Self {
        LazyValidator {
            source,
            start,
            end,
            compiled: OnceLock::new(),
        }
    }

    /// The compiled validator, or why the schema does not compile.
    #[inline]
    pub fn get(&self) -> &Result<ArgumentValidator, SchemaError> {
        self.compiled
            .get_or_init(|| match self.source.get(self.start..self.end) {
                Some(schema) => ArgumentValidator::from_json(schema),
                None => Err(SchemaError {
                    message: format!(
                        "the schema's range {}..{} is not in its text of {} bytes",
                        self.start,
                        self.end,
                        self.source.len()
                    ),
                }),
            })
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

/// Whether `schema` proves that every instance it accepts is within
/// [`MAX_ARGUMENT_DEPTH`] levels and mentions nothing that makes validation
/// recurse along the instance rather than the schema (`$ref` and its kin,
/// which may be recursive; `uniqueItems`, which compares whole items).
///
/// Sound, not complete: only `type`, `enum`, `properties`,
/// `patternProperties`, `additionalProperties`, `items`, `prefixItems` and
/// the `allOf`/`anyOf`/`oneOf` applicators are read; every other keyword
/// can only refuse more, so ignoring it never claims a bound that does not
/// hold. A schema this cannot bound keeps the check before validation.
pub fn schema_bounds_depth(schema: &Value) -> bool {
    !mentions_instance_recursion(schema)
        && levels_bound(schema, MAX_ARGUMENT_DEPTH).is_some_and(|l| l <= MAX_ARGUMENT_DEPTH)
}

/// Whether any object in `schema` has a key that makes validation follow the
/// instance: read conservatively, a property named `uniqueItems` counts too.
fn mentions_instance_recursion(schema: &Value) -> bool {
    const KEYS: [&str; 4] = ["$ref", "$dynamicRef", "$recursiveRef", "uniqueItems"];
    match schema {
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| KEYS.contains(&k.as_str()) || mentions_instance_recursion(v)),
        Value::Array(items) => items.iter().any(mentions_instance_recursion),
        _ => false,
    }
}

/// The most levels (a scalar is one, as in [`depth_exceeds`]) an instance
/// `schema` accepts can have, or `None` when the keywords read do not bound
/// it. `budget` is the schema depth still allowed: deeper schemas are not
/// bounded (and not walked).
fn levels_bound(schema: &Value, budget: usize) -> Option<usize> {
    let map = match schema {
        Value::Bool(false) => return Some(0),
        Value::Object(map) if budget > 0 => map,
        _ => return None,
    };
    let budget = budget - 1;
    // The tightest of the conjuncts that bound it.
    let mut bound: Option<usize> = None;
    let mut tighten = |b: Option<usize>| {
        if let Some(b) = b {
            bound = Some(bound.map_or(b, |old| old.min(b)));
        }
    };
    let (mut objects, mut arrays) = (true, true);
    match map.get("type") {
        None => {}
        Some(Value::String(t)) => {
            objects = t == "object";
            arrays = t == "array";
        }
        Some(Value::Array(types)) if types.iter().all(Value::is_string) => {
            objects = types.iter().any(|t| t == "object");
            arrays = types.iter().any(|t| t == "array");
        }
        Some(_) => return None,
    }
    // By the shape: scalars are one level, containers one more than their
    // members.
    let objects = if objects {
        object_members_bound(map, budget)
    } else {
        Some(0)
    };
    let arrays = if arrays {
        array_items_bound(map, budget)
    } else {
        Some(0)
    };
    tighten(objects.zip(arrays).map(|(o, a)| 1 + o.max(a)));
    if let Some(Value::Array(values)) = map.get("enum") {
        tighten(
            values
                .iter()
                .try_fold(0, |m, v| Some(m.max(levels_within(v, MAX_ARGUMENT_DEPTH)?))),
        );
    }
    if let Some(Value::Array(all)) = map.get("allOf") {
        for s in all {
            tighten(levels_bound(s, budget));
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(any)) = map.get(key) {
            tighten(
                any.iter()
                    .map(|s| levels_bound(s, budget))
                    .try_fold(0, |m, b| Some(m.max(b?))),
            );
        }
    }
    bound
}

/// The most levels a member of an object `map` accepts can have: bounded
/// when `additionalProperties` is `false` or bounded, and every property and
/// pattern property is.
fn object_members_bound(map: &Map<String, Value>, budget: usize) -> Option<usize> {
    let mut most = match map.get("additionalProperties")? {
        Value::Bool(false) => 0,
        other => levels_bound(other, budget)?,
    };
    for key in ["properties", "patternProperties"] {
        match map.get(key) {
            None => {}
            Some(Value::Object(members)) => {
                for s in members.values() {
                    most = most.max(levels_bound(s, budget)?);
                }
            }
            Some(_) => return None,
        }
    }
    Some(most)
}

/// The most levels an item of an array `map` accepts can have: bounded when
/// `items` is one schema that is, and every `prefixItems` schema is (under
/// a draft without `prefixItems` it is ignored, and the bound of `items`
/// alone holds all the more). The older tuple form of `items` is not read.
fn array_items_bound(map: &Map<String, Value>, budget: usize) -> Option<usize> {
    let mut most = match map.get("items")? {
        s @ (Value::Object(_) | Value::Bool(_)) => levels_bound(s, budget)?,
        _ => return None,
    };
    match map.get("prefixItems") {
        None => {}
        Some(Value::Array(prefix)) => {
            for s in prefix {
                most = most.max(levels_bound(s, budget)?);
            }
        }
        Some(_) => return None,
    }
    Some(most)
}

/// How many levels `value` has (a scalar is one), if no more than `cap`.
fn levels_within(value: &Value, cap: usize) -> Option<usize> {
    let cap = cap.checked_sub(1)?;
    let most = |m: usize, v: &Value| Some(m.max(levels_within(v, cap)?));
    match value {
        Value::Array(items) => items.iter().try_fold(0, most).map(|m| m + 1),
        Value::Object(map) => map.values().try_fold(0, most).map(|m| m + 1),
        _ => Some(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A schema within a larger text validates as the schema alone; a range
    /// that is not in the text (or not on a character boundary) is an error
    /// when first used, not a panic.
    #[test]
    fn a_schema_within_a_text_is_that_schema() {
        static TEXT: &str = r#"4:é,{"type":"object","required":["a"]},rest"#;
        static WITHIN: LazyValidator = LazyValidator::within(TEXT, 5, 39);
        assert!(WITHIN.validate("t", &json!({"a": 1})).is_ok());
        assert_eq!(
            WITHIN.validate("t", &json!({})).unwrap_err().code,
            RpcError::INVALID_PARAMS
        );
        for (start, end) in [(5, 400), (39, 5), (3, 39)] {
            let outside = LazyValidator::within(TEXT, start, end);
            let error = outside.validate("t", &json!({"a": 1})).unwrap_err();
            assert_eq!(error.code, RpcError::INTERNAL_ERROR, "{start}..{end}");
        }
    }

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

    /// `levels` objects nested in one another, around `leaf`.
    fn chain(levels: usize, leaf: Value) -> Value {
        (1..levels).fold(leaf, |inner, _| {
            json!({"type": "object", "properties": {"a": inner}, "additionalProperties": false})
        })
    }

    #[test]
    fn schemas_that_bound_the_depth() {
        let bounded = [
            // The usual tool: flat, closed, scalar members.
            json!({"type": "object", "properties": {"path": {"type": "string"}, "n": {"type": ["integer", "null"]}}, "additionalProperties": false}),
            json!({"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}, "additionalProperties": {"type": "boolean"}}),
            json!({"type": "object", "additionalProperties": false, "patternProperties": {"^x": {"enum": [1, [2, [3]]]}}}),
            json!({"anyOf": [{"type": "string"}, {"type": "object", "additionalProperties": false}]}),
            json!({"allOf": [{}, {"type": "integer"}]}),
            json!({"type": "array", "prefixItems": [{"type": "string"}], "items": false}),
            json!({"enum": [{"a": {"b": 1}}, 2]}),
            json!(false),
            chain(MAX_ARGUMENT_DEPTH, json!({"type": "string"})),
        ];
        for schema in bounded {
            assert!(schema_bounds_depth(&schema), "{schema}");
        }
        let unbounded = [
            json!(true),
            json!({}),
            json!({"type": "object"}),
            json!({"type": "object", "properties": {"a": {"type": "string"}}}),
            json!({"type": "object", "additionalProperties": false, "properties": {"a": {}}}),
            json!({"type": "object", "additionalProperties": false, "properties": {"a": {"$ref": "#"}}}),
            json!({"type": "object", "additionalProperties": false, "properties": {"a": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}}}),
            json!({"type": "array", "items": [{"type": "string"}], "additionalItems": false}),
            json!({"type": "array"}),
            json!({"anyOf": [{"type": "string"}, {}]}),
            json!({"type": 7}),
            chain(MAX_ARGUMENT_DEPTH + 1, json!({"type": "string"})),
            chain(
                MAX_ARGUMENT_DEPTH,
                json!({"type": "array", "items": {"type": "string"}}),
            ),
            chain(300, json!(false)),
        ];
        for schema in unbounded {
            assert!(!schema_bounds_depth(&schema), "{schema}");
        }
    }

    #[test]
    fn a_bounded_schema_refuses_deep_arguments_as_the_check_would() {
        // Bounded: the check waits for the refusal, which gives the same answer.
        let schema = chain(3, json!({"type": "string"}));
        let v = ArgumentValidator::new(&schema).unwrap();
        assert!(v.bounded);
        let mut deep = json!("x");
        for _ in 0..MAX_ARGUMENT_DEPTH {
            deep = json!({ "a": deep });
        }
        let err = v.validate("t", &deep).unwrap_err();
        assert!(err.message.contains("nest deeper"), "{err}");
        assert!(!v.is_valid(&deep));
        assert!(v.is_valid(&json!({"a": {"a": "x"}})));
        let shallow = v.validate("t", &json!({"a": {"a": 1}})).unwrap_err();
        assert_eq!(shallow.message, "invalid arguments for tool t");
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
