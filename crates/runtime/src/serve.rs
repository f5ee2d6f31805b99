//! Serving a resolve request: the one function the rmcp wiring of a
//! generated resolver and the proxy's core both call ([`serve_resolve`]),
//! and the screen in front of a server that serves one ([`screen`]).

use serde_json::{Map, Value};

use mcp_resolve_protocol::Screen;

use crate::{Dialect, EXTENSION_ID, RpcError, VARIANT_EXTENSION_ID};

/// The screen of a server answering resolve requests of `dialect`: in the
/// extension dialect it answers `-32021` for a resolve request whose
/// client does not declare the extension ([`Screen::checking`]); in the
/// others it checks the framing alone.
pub fn screen(dialect: Dialect) -> Screen {
    if dialect == Dialect::Extension {
        Screen::checking(dialect.method())
    } else {
        Screen::default()
    }
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
