use std::fmt;
use std::ops::{Deref, DerefMut};

use serde_json::{Map, Value};

/// A JSON-RPC error, as `tools/resolve` returns it: an [`ErrorObject`]
/// behind one pointer, which it dereferences to (`error.code`,
/// `error.message`, `error.data`).
///
/// Boxed, as `serde_json::Error` is, so that a `Result` carrying it is two
/// machine words: a resolver's `Result<&'static Resolved, RpcError>` comes
/// back in registers rather than through memory, and the error path, which
/// allocates its message anyway, pays for the box.
#[derive(Clone, PartialEq)]
pub struct RpcError(Box<ErrorObject>);

/// The members of a JSON-RPC error object.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorObject {
    /// The JSON-RPC error code.
    pub code: i64,
    /// A short human-readable message.
    pub message: String,
    /// Structured details (for invalid arguments: the validation errors).
    pub data: Option<Value>,
}

impl Deref for RpcError {
    type Target = ErrorObject;

    fn deref(&self) -> &ErrorObject {
        &self.0
    }
}

impl DerefMut for RpcError {
    fn deref_mut(&mut self) -> &mut ErrorObject {
        &mut self.0
    }
}

impl From<ErrorObject> for RpcError {
    fn from(object: ErrorObject) -> Self {
        RpcError(Box::new(object))
    }
}

impl fmt::Debug for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RpcError")
            .field("code", &self.code)
            .field("message", &self.message)
            .field("data", &self.data)
            .finish()
    }
}

impl RpcError {
    /// Parse error: the message is not JSON (or not UTF-8).
    pub const PARSE_ERROR: i64 = -32700;
    /// Invalid request: not a JSON-RPC 2.0 request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// Invalid params: unknown tool, a tool that is not resolvable, bad arguments.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal error: the server cannot compute trustworthy metadata.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// Method not found.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The client did not declare the tool-resolution extension capability.
    pub const MISSING_CAPABILITY: i64 = -32021;

    /// `-32021` naming the tool-resolution extension as the missing client
    /// capability (the one form of it: the rmcp wiring, the framing and
    /// the proxy all answer with this).
    pub fn missing_capability() -> Self {
        Self::new(
            Self::MISSING_CAPABILITY,
            "Missing required client capability",
            Some(serde_json::json!({
                "requiredCapabilities": {"extensions": {crate::EXTENSION_ID: {}}}
            })),
        )
    }

    /// An error with `code`, `message` and, when there are any, details.
    pub fn new(code: i64, message: impl Into<String>, data: Option<Value>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data,
        }
        .into()
    }

    /// The error object, out of its box.
    pub fn into_object(self) -> ErrorObject {
        *self.0
    }

    /// An error with code `-32602`.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(Self::INVALID_PARAMS, message, None)
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
    fn a_result_with_an_error_is_two_words() {
        use std::mem::size_of;
        assert_eq!(size_of::<RpcError>(), size_of::<usize>());
        assert_eq!(
            size_of::<Result<&'static String, RpcError>>(),
            2 * size_of::<usize>()
        );
    }

    #[test]
    fn an_error_reads_and_writes_through_to_its_object() {
        let mut e = RpcError::new(-32603, "broken", Some(Value::from(1)));
        assert_eq!((e.code, e.message.as_str()), (-32603, "broken"));
        e.data = None;
        e.message.push('!');
        let object = e.clone().into_object();
        assert_eq!(RpcError::from(object.clone()), e);
        assert_eq!(object.message, "broken!");
        assert_eq!(
            e.to_json(),
            serde_json::json!({"code": -32603, "message": "broken!"})
        );
        assert_eq!(
            format!("{e:?}"),
            r#"RpcError { code: -32603, message: "broken!", data: None }"#
        );
    }

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
