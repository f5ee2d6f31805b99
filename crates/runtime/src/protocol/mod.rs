//! The protocol's vocabulary, in one place for everything that speaks it —
//! the rmcp wiring of a generated resolver, the framing in front of it, and
//! the proxy: JSON-RPC error codes ([`RpcError`]'s constants) and the one
//! set of response builders, a message's [`Envelope`] read in one pass and
//! the [`Screen`] that judges its framing, the one rule for "the client
//! declares the extension", and the one function that serves a resolve
//! request ([`serve_resolve`]). No I/O and no async runtime here.

mod envelope;
mod screen;

pub use envelope::{Envelope, id_key, splice};
pub use screen::{Screen, Screened};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::{Dialect, EXTENSION_ID, RpcError, VARIANT_EXTENSION_ID};

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

/// A resolve request served: what `resolve` gave, and whether the client
/// declared the companion variant extension (so the result's `_meta` names
/// the variant).
#[derive(Debug)]
pub struct Served<R> {
    /// What the resolver gave.
    pub resolved: R,
    /// The client declared [`VARIANT_EXTENSION_ID`].
    pub variant_meta: bool,
}

/// Serves a resolve request of `dialect` whose params are `params`: the
/// capability check of the extension dialect (`-32021`), the params checks
/// (`-32602`: an object, `name` a string, `arguments` required by the
/// extension and `{}` by default in the older drafts), then `resolve` with
/// the tool's name and arguments. `declares` says whether the client
/// declares an extension (by id) for this request. Used by the rmcp wiring
/// and the proxy alike.
pub fn serve_resolve<'p, R>(
    dialect: Dialect,
    params: Option<&'p Value>,
    declares: impl Fn(&str) -> bool,
    resolve: impl FnOnce(&'p str, &'p Value) -> Result<R, RpcError>,
) -> Result<Served<R>, RpcError> {
    static NO_ARGUMENTS: std::sync::LazyLock<Value> =
        std::sync::LazyLock::new(|| Value::Object(Map::new()));
    if dialect == Dialect::Extension && !declares(EXTENSION_ID) {
        return Err(RpcError::missing_capability());
    }
    let params = match params {
        None => None,
        Some(Value::Object(params)) => Some(params),
        Some(_) => return Err(RpcError::invalid_params("params must be an object")),
    };
    let Some(Value::String(name)) = params.and_then(|p| p.get("name")) else {
        return Err(RpcError::invalid_params(
            "params.name must be a string (the tool name)",
        ));
    };
    // The extension requires the complete arguments object (`{}` for a
    // no-argument tool); the older drafts let it be omitted.
    let arguments = match params.and_then(|p| p.get("arguments")) {
        Some(arguments) => arguments,
        None if dialect == Dialect::Extension => {
            return Err(RpcError::invalid_params(
                "params.arguments is required: the complete arguments object of the call ({} for a tool without arguments)",
            ));
        }
        None => &NO_ARGUMENTS,
    };
    Ok(Served {
        resolved: resolve(name, arguments)?,
        variant_meta: declares(VARIANT_EXTENSION_ID),
    })
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
        let value: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(value, error_value(&json!(7), &error));
        assert_eq!(value["error"]["code"], -32021);
        assert_eq!(
            value["error"]["data"]["requiredCapabilities"]["extensions"][EXTENSION_ID],
            json!({})
        );
    }

    #[test]
    fn a_resolve_request_is_checked_before_it_is_resolved() {
        let all = |_: &str| true;
        let resolve = |name: &str, arguments: &Value| Ok(format!("{name} {arguments}"));
        let served = serve_resolve(
            Dialect::Extension,
            Some(&json!({"name": "t", "arguments": {"a": 1}})),
            all,
            resolve,
        )
        .unwrap();
        assert_eq!(served.resolved, r#"t {"a":1}"#);
        assert!(served.variant_meta);
        let code = |dialect, params: Value, declares: fn(&str) -> bool| {
            serve_resolve(dialect, Some(&params), declares, resolve)
                .unwrap_err()
                .code
        };
        assert_eq!(
            code(
                Dialect::Extension,
                json!({"name": "t", "arguments": {}}),
                |_| false
            ),
            -32021
        );
        assert_eq!(code(Dialect::Extension, json!({"name": "t"}), all), -32602);
        assert_eq!(code(Dialect::Extension, json!({"name": 1}), all), -32602);
        assert_eq!(code(Dialect::Extension, json!([]), all), -32602);
        // The older drafts: no capability, arguments default to `{}`.
        let served = serve_resolve(
            Dialect::Sep1862,
            Some(&json!({"name": "t"})),
            |_| false,
            resolve,
        )
        .unwrap();
        assert_eq!(served.resolved, "t {}");
        assert!(!served.variant_meta);
    }
}
