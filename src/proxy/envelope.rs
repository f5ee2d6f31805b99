//! The envelope of a JSON-RPC message — its id, method and whether it is a
//! response — read without building the message: the proxy passes most
//! messages on as they were written, and needs only this much to route
//! them. `params` stays raw text until a message the proxy owns needs it.

use std::borrow::Cow;

use serde::de::{Deserializer, IgnoredAny};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

/// What the proxy reads of a message.
#[derive(Debug, Deserialize)]
pub(crate) struct Envelope<'a> {
    /// The id, when the member is present (`Some(Value::Null)` for
    /// `"id": null`).
    #[serde(default, deserialize_with = "present_value")]
    pub id: Option<Value>,
    /// The method (requests and notifications).
    #[serde(default, borrow)]
    pub method: Option<Cow<'a, str>>,
    /// `params`, unparsed.
    #[serde(default, borrow)]
    pub params: Option<&'a RawValue>,
    /// Whether `result` is present (even as `null`).
    #[serde(default, deserialize_with = "present")]
    pub result: bool,
    /// Whether `error` is present.
    #[serde(default, deserialize_with = "present")]
    pub error: bool,
}

fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    IgnoredAny::deserialize(deserializer).map(|_| true)
}

fn present_value<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

impl<'a> Envelope<'a> {
    /// The envelope of `text`, when it is one JSON object.
    pub(crate) fn of(text: &'a str) -> Option<Self> {
        // A derived struct also reads arrays, by position: only objects are
        // messages.
        if !text.trim_start().starts_with('{') {
            return None;
        }
        serde_json::from_str(text).ok()
    }

    /// A response (a `result` or an `error`, no method).
    pub(crate) fn is_response(&self) -> bool {
        self.method.is_none() && (self.result || self.error)
    }

    /// A request (a method and an id).
    pub(crate) fn is_request(&self) -> bool {
        self.method.is_some() && self.id.is_some()
    }

    /// `params`, parsed (`None` when absent or not JSON).
    pub(crate) fn params(&self) -> Option<Value> {
        self.params
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
    }
}

/// A key for a JSON-RPC id that does not depend on how it was written
/// (ids are strings or integers; `"a"` and `"\u0061"` are one id).
pub(crate) fn id_key(id: &Value) -> String {
    id.to_string()
}

/// A response carrying `error` for request `id`, as a line of JSON.
pub(crate) fn error_line(id: &Value, error: &mcp_resolve_runtime::RpcError) -> String {
    #[derive(Serialize)]
    struct Response<'r> {
        jsonrpc: &'static str,
        id: &'r Value,
        error: Value,
    }
    serde_json::to_string(&Response {
        jsonrpc: "2.0",
        id,
        error: error.to_json(),
    })
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_envelope_without_the_rest() {
        let request =
            Envelope::of(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"a":[1,2]}}"#)
                .unwrap();
        assert!(request.is_request());
        assert_eq!(request.id, Some(Value::from(7)));
        assert_eq!(request.params.unwrap().get(), r#"{"a":[1,2]}"#);
        let response = Envelope::of(r#"{"jsonrpc":"2.0","id":"x","result":null}"#).unwrap();
        assert!(response.is_response());
        let error = Envelope::of(r#"{"id":null,"error":{"code":-32700}}"#).unwrap();
        assert!(error.is_response());
        assert_eq!(error.id, Some(Value::Null));
        let notification = Envelope::of(r#"{"method":"notifications/x"}"#).unwrap();
        assert!(!notification.is_request() && !notification.is_response());
        assert!(notification.id.is_none());
        // Escapes in a method are read, not compared raw.
        let escaped = Envelope::of(r#"{"id":1,"method":"tools\/list"}"#).unwrap();
        assert_eq!(escaped.method.as_deref(), Some("tools/list"));
    }

    #[test]
    fn refuses_what_is_not_one_object() {
        for text in ["[1, \"m\"]", "[]", "3", "\"x\"", "not json", "{\"id\":"] {
            assert!(Envelope::of(text).is_none(), "{text}");
        }
    }

    #[test]
    fn ids_compare_as_values() {
        let a: Value = serde_json::from_str(r#""\u0061""#).unwrap();
        assert_eq!(id_key(&a), id_key(&Value::from("a")));
        assert_ne!(id_key(&Value::from(1)), id_key(&Value::from("1")));
    }
}
