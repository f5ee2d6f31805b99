//! The vocabulary of MCP's JSON-RPC messages, in one place for everything
//! that speaks it — a generated resolver's rmcp wiring and the framing in
//! front of it (`mcp-resolve-runtime`), and the proxy's core: JSON-RPC
//! errors ([`RpcError`], with the codes the extension defines) and the one
//! set of response builders, a message's [`Envelope`] read in one pass and
//! the [`Screen`] that judges its framing, the extension's identifiers, the
//! 2026-07-28 cut-off ([`is_stateless_version`]) and the one rule for "the
//! client declares the extension" ([`declares_extension`]). No I/O and no
//! async runtime here.
#![deny(missing_docs)]
// No library function over 100 lines (clippy.toml); each exception says why
// it reads better whole. Tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

mod envelope;
mod error;
pub mod json;
mod params;
pub mod scan;
mod screen;

pub use envelope::{Envelope, Raw, id_key, splice};
pub use error::{ErrorObject, RpcError};
pub use params::{Key, MetaAt, ParamsRead};
pub use screen::{Parsed, Screen, Screened};

use serde::Serialize;
use serde_json::{Map, Value};

/// The extension identifier of the tool-resolution extension (draft 2026-08-20).
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/tool-resolution";

/// The extension identifier of this project's companion extension: a client
/// that declares it (with an empty settings object) gets, in each resolve
/// result's `_meta` under this key, the variant that matched and the scopes
/// the call needs — `{"variant": "read" | null, "requiredScopes": […]}` —
/// so a host can show or log *why* a call resolved as it did. Servers
/// advertise it next to [`EXTENSION_ID`]; clients that do not declare it
/// never see the key (the extension allows result `_meta` only for
/// negotiated extensions).
pub const VARIANT_EXTENSION_ID: &str = "io.github.mcp-resolve/variant";

/// The request `_meta` key of the protocol version (protocol 2026-07-28).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The request `_meta` key of the client capabilities (protocol 2026-07-28).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The first protocol version whose requests are stateless: each names
/// its version in `_meta` (or the `MCP-Protocol-Version` header), needs no
/// session, travels with the SEP-2243 headers over HTTP and is cancelled
/// over HTTP by closing its answer.
pub const STATELESS_VERSION: &str = "2026-07-28";

/// Whether `version` (a protocol version, `YYYY-MM-DD`) is
/// [`STATELESS_VERSION`] or later.
pub fn is_stateless_version(version: &str) -> bool {
    version >= STATELESS_VERSION
}

/// The method of the Server Capability Signature draft (this project's
/// signature document).
pub const SIGNATURE_METHOD: &str = "signature";

/// Whether a JSON object's text could have a `_meta` member: it names the
/// word, or has an escape that could spell it. `false` is a proof that it
/// has none, without reading it.
pub fn may_name_meta(object: &str) -> bool {
    // One pass for both bytes, where two `contains` each set up a search.
    let bytes = object.as_bytes();
    memchr::memchr2_iter(b'_', b'\\', bytes)
        .any(|at| bytes[at] == b'\\' || bytes[at..].starts_with(b"_meta"))
}

/// A response to request `id` whose `result` is the JSON text `result`, as
/// a line of JSON (the result spliced in as it is, not re-serialised).
pub fn result_response(id: &Value, result: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
}

/// A response carrying `error` for request `id`, as a line of JSON.
pub fn error_response(id: &Value, error: &RpcError) -> String {
    serde_json::to_string(&Response {
        jsonrpc: "2.0",
        id,
        error: error.to_json(),
    })
    .unwrap_or_default()
}

/// [`error_response`] as a JSON value.
pub fn error_value(id: &Value, error: &RpcError) -> Value {
    serde_json::to_value(Response {
        jsonrpc: "2.0",
        id,
        error: error.to_json(),
    })
    .unwrap_or_default()
}

#[derive(Serialize)]
struct Response<'r> {
    jsonrpc: &'static str,
    id: &'r Value,
    error: Value,
}

/// Whether an extension's settings, as a client declared them, are ones
/// this version supports: present, and an empty object. The extension asks
/// a server to treat settings it does not know (any non-empty object, or
/// anything that is not an object) as unsupported, so such a client is
/// answered like one that declares nothing (`-32021` for a resolve
/// request).
pub fn supported_settings(settings: Option<&Value>) -> bool {
    supported_settings_object(settings.and_then(Value::as_object))
}

/// [`supported_settings`] of settings already read as an object (`None`
/// when absent or not an object).
pub fn supported_settings_object(settings: Option<&Map<String, Value>>) -> bool {
    settings.is_some_and(Map::is_empty)
}

/// The client capabilities that apply to a request: those in its own
/// `_meta` (2026-07-28), else those the session declared at `initialize`.
pub fn client_capabilities<'v>(
    params: Option<&'v Value>,
    session: Option<&'v Value>,
) -> Option<&'v Value> {
    params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(META_CLIENT_CAPABILITIES))
        .or(session)
}

/// Whether a client declares extension `id` for a request (see
/// [`client_capabilities`] and [`supported_settings`]).
pub fn declares_extension(params: Option<&Value>, session: Option<&Value>, id: &str) -> bool {
    supported_settings(
        client_capabilities(params, session)
            .and_then(|caps| caps.get("extensions"))
            .and_then(|extensions| extensions.get(id)),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    proptest::proptest! {
        /// The one-pass search says what searching for each does.
        #[test]
        fn may_name_meta_is_contains_for_either(text in "[_a-z\\\\\"{}:]{0,40}") {
            proptest::prop_assert_eq!(
                may_name_meta(&text),
                text.contains("_meta") || text.contains('\\')
            );
        }
    }

    #[test]
    fn may_name_meta_finds_the_word_or_an_escape() {
        assert!(may_name_meta(r#"{"_meta":{}}"#));
        assert!(may_name_meta(r#"{"a":"b__meta"}"#));
        assert!(may_name_meta(r#"{"\u005fmeta":{}}"#));
        assert!(!may_name_meta(r#"{"name":"manage_files","a":"_met"}"#));
        assert!(!may_name_meta(""));
        assert!(!may_name_meta("_"));
    }

    #[test]
    fn only_an_empty_settings_object_declares_an_extension() {
        assert!(supported_settings(Some(&json!({}))));
        for settings in [
            json!({"futureRequiredMode": true}),
            json!(true),
            Value::Null,
        ] {
            assert!(!supported_settings(Some(&settings)), "{settings}");
        }
        assert!(!supported_settings(None));
        let declared = json!({"extensions": {EXTENSION_ID: {}}});
        let request = json!({"_meta": {META_CLIENT_CAPABILITIES: declared}});
        assert!(declares_extension(Some(&request), None, EXTENSION_ID));
        assert!(declares_extension(None, Some(&declared), EXTENSION_ID));
        // The request's own capabilities win over the session's.
        let none = json!({"_meta": {META_CLIENT_CAPABILITIES: {}}});
        assert!(!declares_extension(
            Some(&none),
            Some(&declared),
            EXTENSION_ID
        ));
    }

    #[test]
    fn responses_are_built_one_way() {
        assert_eq!(
            result_response(&json!("a"), r#"{"x":1}"#),
            r#"{"jsonrpc":"2.0","id":"a","result":{"x":1}}"#
        );
        let error = RpcError::missing_capability();
        let line = error_response(&json!(7), &error);
        let value: Value = crate::json::from_str(&line).unwrap();
        assert_eq!(value, error_value(&json!(7), &error));
        assert_eq!(value["error"]["code"], -32021);
        assert_eq!(
            value["error"]["data"]["requiredCapabilities"]["extensions"][EXTENSION_ID],
            json!({})
        );
    }
}
