use std::fmt;

use serde_json::{Map, Value};

/// A JSON-RPC error object, as `tools/resolve` returns it.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcError {
    /// The JSON-RPC error code.
    pub code: i64,
    /// A short human-readable message.
    pub message: String,
    /// Structured details (for invalid arguments: the validation errors).
    pub data: Option<Value>,
}

impl RpcError {
    /// Invalid params: unknown tool, a tool that is not resolvable, bad arguments.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal error: the server cannot compute trustworthy metadata.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// Method not found.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The client did not declare the tool-resolution extension capability.
    pub const MISSING_CAPABILITY: i64 = -32021;

    /// An error with code `-32602`.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        RpcError {
            code: Self::INVALID_PARAMS,
            message: message.into(),
            data: None,
        }
    }

    /// `-32602` for a tool name the server does not know.
    pub fn unknown_tool(name: &str) -> Self {
        Self::invalid_params(format!("unknown tool: {name}"))
    }

    /// `-32602` for a tool that exists but is not marked resolvable.
    pub fn not_resolvable(name: &str) -> Self {
        Self::invalid_params(format!("tool is not resolvable: {name}"))
    }

    /// `-32602` for a name no resolvable tool has: [`RpcError::not_resolvable`]
    /// when it is one of `tools` (the server's names), else
    /// [`RpcError::unknown_tool`]. Generated resolvers of a few tools answer
    /// every name their `match` has no arm for with it.
    #[cold]
    pub fn unresolvable(name: &str, tools: &[&str]) -> Self {
        if tools.contains(&name) {
            Self::not_resolvable(name)
        } else {
            Self::unknown_tool(name)
        }
    }

    /// The error as a JSON-RPC `error` object.
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("code".into(), Value::from(self.code));
        map.insert("message".into(), Value::String(self.message.clone()));
        if let Some(data) = &self.data {
            map.insert("data".into(), data.clone());
        }
        Value::Object(map)
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for RpcError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_without_a_resolvable_tool_is_unknown_or_not_resolvable() {
        let tools = ["look", "run"];
        assert_eq!(
            RpcError::unresolvable("look", &tools),
            RpcError::not_resolvable("look")
        );
        assert_eq!(
            RpcError::unresolvable("other", &tools),
            RpcError::unknown_tool("other")
        );
        assert_eq!(RpcError::unresolvable("", &[]), RpcError::unknown_tool(""));
    }
}
