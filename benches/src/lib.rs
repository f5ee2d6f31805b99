//! What the benchmarks in `benches/resolve.rs` compare: resolvers generated
//! by `build.rs`, and the hand-written Rust a careful author would write for
//! the same `manage_files` rules (the limit generated code is held to).

/// Generated from `rules/file-server.yaml`.
pub mod file_server {
    include!(concat!(env!("OUT_DIR"), "/file_server.rs"));
}

/// Generated servers of 10, 1,000 and 10,000 tools, for dispatch cost.
pub mod synthetic {
    /// 10 tools.
    pub mod tools_10 {
        include!(concat!(env!("OUT_DIR"), "/synthetic_10.rs"));
    }
    /// 1,000 tools.
    pub mod tools_1000 {
        include!(concat!(env!("OUT_DIR"), "/synthetic_1000.rs"));
    }
    /// 10,000 tools.
    pub mod tools_10000 {
        include!(concat!(env!("OUT_DIR"), "/synthetic_10000.rs"));
    }
}

/// A hand-written resolver for `manage_files`: a `match` on the name and on
/// `action`, responses as precomputed text, validation with the same
/// `jsonschema` validator compiled once.
pub mod hand {
    use std::sync::LazyLock;

    use serde_json::{Map, Value};

    const READ: &str = r#"{"resultType":"complete","name":"manage_files","annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}}"#;
    const APPEND: &str = r#"{"resultType":"complete","name":"manage_files","annotations":{"readOnlyHint":false,"destructiveHint":false,"idempotentHint":false,"openWorldHint":false}}"#;
    const OVERWRITE: &str = r#"{"resultType":"complete","name":"manage_files","annotations":{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":true,"openWorldHint":false}}"#;
    const STATIC: &str = r#"{"resultType":"complete","name":"manage_files","annotations":{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false,"openWorldHint":false}}"#;

    /// Matching only (arguments already valid): the extension-dialect
    /// response, or `None` for an unknown tool.
    ///
    /// `#[inline]`, as the generated functions of a few tools are: each
    /// side can be inlined into the caller, as in the server's own crate.
    #[inline]
    pub fn matching(name: &str, args: &Map<String, Value>) -> Option<&'static str> {
        match name {
            "manage_files" => Some(match args.get("action").and_then(Value::as_str) {
                Some("read") => READ,
                Some("append") => APPEND,
                Some("replace" | "delete") => OVERWRITE,
                _ => STATIC,
            }),
            _ => None,
        }
    }

    static SCHEMA: LazyLock<Option<jsonschema::Validator>> = LazyLock::new(|| {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "path": { "type": "string", "minLength": 1 },
                "action": { "type": "string", "enum": ["read", "append", "replace", "delete"] },
                "content": { "type": "string" }
            },
            "required": ["path", "action"],
            "additionalProperties": false
        });
        jsonschema::options()
            .should_validate_formats(false)
            .build(&schema)
            .ok()
    });

    /// Validation, matching and the response text (`#[inline]` too).
    #[inline]
    pub fn full(name: &str, args: &Value) -> Option<&'static str> {
        let validator = SCHEMA.as_ref()?;
        if !validator.is_valid(args) {
            return None;
        }
        matching(name, args.as_object()?)
    }
}
