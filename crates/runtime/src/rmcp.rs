//! `tools/resolve` for servers built on the official Rust SDK, [`rmcp`]
//! (feature `rmcp`).
//!
//! [`ToolResolution`] wraps a generated resolver ([`Rules`]) and answers the
//! parts of the protocol it owns: the capability it advertises, the
//! `tools/list` tools (static, conservative annotations and the resolvable
//! marker), the `tools/resolve` request (or `tools/annotations`, in that
//! dialect) with the client-capability check, and the `signature` request of
//! the Server Capability Signature draft. A server keeps its own `call_tool`.
//!
//! ```ignore
//! mod resolve { include!(concat!(env!("OUT_DIR"), "/server_resolve.rs")); }
//! use mcp_resolve_runtime::rmcp::ToolResolution;
//!
//! struct Server { resolution: ToolResolution }
//!
//! impl rmcp::ServerHandler for Server {
//!     fn get_info(&self) -> rmcp::model::ServerConfig {
//!         self.resolution.server_config(rmcp::model::ServerCapabilities::builder().enable_tools().build())
//!     }
//!     async fn list_tools(&self, _: Option<PaginatedRequestParams>, context: RequestContext<RoleServer>)
//!         -> Result<ListToolsResult, ErrorData> { Ok(self.resolution.list_tools_for(&context)) }
//!     async fn on_custom_request(&self, request: CustomRequest, context: RequestContext<RoleServer>)
//!         -> Result<CustomResult, ErrorData> { self.resolution.on_custom_request(&request, &context) }
//!     // call_tool: your tools
//! }
//! ```

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use ::rmcp::ErrorData;
use ::rmcp::model::{
    CustomRequest, CustomResult, ErrorCode, Implementation, JsonObject, ListToolsResult,
    ServerCapabilities, ServerConfig, Tool,
};
use ::rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value};

use crate::serve::serve_resolve;

use crate::{
    ArgumentValidator, Dialect, EXTENSION_ID, Resolved, RpcError, Rules, VARIANT_EXTENSION_ID,
};

/// The method of the Server Capability Signature draft.
pub const SIGNATURE_METHOD: &str = "signature";

/// The key under `experimental` capabilities that advertises [`SIGNATURE_METHOD`]
/// (the draft's top-level `signature` capability has no field in rmcp's
/// typed capabilities).
pub const SIGNATURE_CAPABILITY: &str = "signature";

/// A server's own checks of a call's arguments, beyond its `inputSchema`
/// (paths inside a sandbox, fields one action needs): `Err` refuses the call
/// with `-32602`. It must be a pure function of the tool name and the
/// arguments — resolution has no side effects — and it runs for
/// `tools/resolve` and `tools/call` alike ([`ToolResolution::check_call`]),
/// so a call the server would refuse never resolves.
pub type ArgumentCheck = Arc<dyn Fn(&str, &Value) -> Result<(), RpcError> + Send + Sync>;

/// Serves `tools/resolve` and `signature` from a generated resolver.
#[derive(Clone)]
pub struct ToolResolution {
    rules: &'static Rules,
    dialect: Dialect,
    tools: Arc<[Tool]>,
    /// Validators of the tools without variants (the resolver validates the
    /// others), compiled once.
    validators: Arc<BTreeMap<String, Result<ArgumentValidator, crate::SchemaError>>>,
    /// The signature document, parsed once.
    signature: Arc<Value>,
    /// The server's own argument checks.
    check: Option<ArgumentCheck>,
}

impl std::fmt::Debug for ToolResolution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolResolution")
            .field("server", &self.rules.server_name)
            .field("dialect", &self.dialect)
            .field("tools", &self.tools.len())
            .field("argument_check", &self.check.is_some())
            .finish()
    }
}

impl ToolResolution {
    /// Serves `rules` in the extension dialect.
    pub fn new(rules: &'static Rules) -> Self {
        Self::with_dialect(rules, Dialect::Extension)
    }

    /// Serves `rules` in `dialect`.
    pub fn with_dialect(rules: &'static Rules, dialect: Dialect) -> Self {
        // The extension dialect's list carries the `_meta` marker and exactly
        // the core hints: the shape rmcp's typed `Tool` can carry. Top-level
        // markers of the older dialects (`resolve`, `dynamicAnnotations`)
        // have no field there, so every dialect lists tools this way.
        let tools = rules
            .tools(Dialect::Extension)
            .into_iter()
            .filter_map(|tool| serde_json::from_value::<Tool>(tool).ok())
            .collect::<Arc<[Tool]>>();
        let validators = tools
            .iter()
            .filter(|tool| !is_marked(tool))
            .map(|tool| {
                let schema = Value::Object(tool.input_schema.as_ref().clone());
                (tool.name.to_string(), ArgumentValidator::new(&schema))
            })
            .collect();
        ToolResolution {
            rules,
            dialect,
            tools,
            validators: Arc::new(validators),
            signature: Arc::new(rules.signature()),
            check: None,
        }
    }

    /// Adds the server's own argument checks ([`ArgumentCheck`]), run after
    /// the `inputSchema` validation for resolve requests and for
    /// [`ToolResolution::check_call`].
    pub fn with_argument_check(
        mut self,
        check: impl Fn(&str, &Value) -> Result<(), RpcError> + Send + Sync + 'static,
    ) -> Self {
        self.check = Some(Arc::new(check));
        self
    }

    /// Runs the server's own checks, if any.
    fn server_check(&self, name: &str, arguments: &Value) -> Result<(), ErrorData> {
        match &self.check {
            Some(check) => check(name, arguments).map_err(to_error_data),
            None => Ok(()),
        }
    }

    /// The resolver served.
    pub fn rules(&self) -> &'static Rules {
        self.rules
    }

    /// The dialect of the resolve responses.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The request method that resolves a call in this dialect:
    /// `tools/annotations` in the `annotations` dialect, else `tools/resolve`.
    pub fn method(&self) -> &'static str {
        self.dialect.method()
    }

    /// Adds what this server supports to `capabilities`: in the extension
    /// dialect `extensions["io.modelcontextprotocol/tool-resolution"] = {}`;
    /// in the others `experimental["tools/resolve"]` (or
    /// `experimental["tools/annotations"]`), since rmcp's typed `tools`
    /// capability has no `resolve` field; `experimental["signature"]`; and
    /// the companion extension [`VARIANT_EXTENSION_ID`].
    pub fn advertise(&self, capabilities: &mut ServerCapabilities) {
        capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(VARIANT_EXTENSION_ID.to_string(), JsonObject::new());
        if self.dialect == Dialect::Extension {
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(EXTENSION_ID.to_string(), JsonObject::new());
        } else {
            capabilities
                .experimental
                .get_or_insert_with(Default::default)
                .insert(self.method().to_string(), JsonObject::new());
        }
        capabilities
            .experimental
            .get_or_insert_with(Default::default)
            .insert(SIGNATURE_CAPABILITY.to_string(), JsonObject::new());
    }

    /// A server configuration for `get_info`: `capabilities` with
    /// [`ToolResolution::advertise`] applied and the rules' server name and
    /// version as `serverInfo`.
    pub fn server_config(&self, mut capabilities: ServerCapabilities) -> ServerConfig {
        self.advertise(&mut capabilities);
        let mut config = ServerConfig::new(capabilities);
        config.server_info = Implementation::new(self.rules.server_name, self.rules.server_version);
        config
    }

    /// Every tool, with its static (conservative) annotations; resolvable
    /// tools carry `_meta["io.modelcontextprotocol/tool-resolution"] = {"resolvable": true}`.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tool called `name`.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// The `tools/list` result, every resolvable tool with its marker.
    pub fn list_tools(&self) -> ListToolsResult {
        ListToolsResult::with_all_items(self.tools.to_vec())
    }

    /// The `tools/list` result for the client of `context`: in the extension
    /// dialect the resolvable marker is listed only to a client that
    /// declares the extension (the extension says servers SHOULD NOT offer
    /// it to others); the tools are otherwise identical.
    pub fn list_tools_for(&self, context: &RequestContext<RoleServer>) -> ListToolsResult {
        if self.dialect != Dialect::Extension || client_declares_extension(context) {
            return self.list_tools();
        }
        let tools = self
            .tools
            .iter()
            .cloned()
            .map(|mut tool| {
                if let Some(meta) = tool.meta.as_mut() {
                    meta.0.remove(EXTENSION_ID);
                    if meta.0.is_empty() {
                        tool.meta = None;
                    }
                }
                tool
            })
            .collect();
        ListToolsResult::with_all_items(tools)
    }

    /// Checks a `tools/call`'s arguments against the tool's full `inputSchema`
    /// with the resolver's own validator and the server's own
    /// [`ArgumentCheck`], and resolves them. Tools without
    /// variants are only validated: `Ok(None)`.
    pub fn check_call(
        &self,
        name: &str,
        arguments: Option<&JsonObject>,
    ) -> Result<Option<&'static Resolved>, ErrorData> {
        let arguments = Value::Object(arguments.cloned().unwrap_or_default());
        let resolved = match self.validators.get(name) {
            None => self
                .rules
                .resolve(name, &arguments)
                .map(Some)
                .map_err(to_error_data),
            Some(Ok(validator)) => validator
                .validate(name, &arguments)
                .map(|()| None)
                .map_err(to_error_data),
            Some(Err(e)) => Err(ErrorData::internal_error(
                format!("the inputSchema of {name} does not compile: {e}"),
                None,
            )),
        }?;
        self.server_check(name, &arguments)?;
        Ok(resolved)
    }

    /// Handles the requests this crate owns — the resolve method of the
    /// dialect and `signature` — and returns `None` for any other method, so
    /// a server can chain its own custom requests.
    pub fn handle(
        &self,
        request: &CustomRequest,
        context: &RequestContext<RoleServer>,
    ) -> Option<Result<CustomResult, ErrorData>> {
        if request.method == SIGNATURE_METHOD {
            // Every result carries `resultType` under protocol 2026-07-28
            // (clients of that version reject a result without it); the
            // fingerprint leaves it out, so the document still verifies.
            let mut document = self.signature.as_ref().clone();
            if let Value::Object(map) = &mut document {
                map.insert("resultType".into(), Value::String("complete".into()));
            }
            return Some(Ok(CustomResult::new(document)));
        }
        if request.method != self.method() {
            return None;
        }
        Some(self.resolve(request.params.as_ref(), |id| client_declares(context, id)))
    }

    /// [`ToolResolution::handle`], with `-32601` for methods it does not own:
    /// the whole body of `ServerHandler::on_custom_request` for a server with
    /// no custom methods of its own.
    pub fn on_custom_request(
        &self,
        request: &CustomRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        self.handle(request, context).unwrap_or_else(|| {
            Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: {}", request.method),
                None,
            ))
        })
    }

    /// Resolves the `params` of a resolve request (`{name, arguments}`) to the
    /// dialect's result, without the capability check.
    pub fn resolve_params(&self, params: Option<&Value>) -> Result<CustomResult, ErrorData> {
        // Without a capability check: as if the client declared the
        // extension, and not the companion one.
        self.resolve(params, |id| id == EXTENSION_ID)
    }

    /// Serves a resolve request ([`crate::serve::serve_resolve`]: the
    /// capability and params checks), with the companion extension's
    /// result `_meta` ([`VARIANT_EXTENSION_ID`]) when the client declares it.
    fn resolve(
        &self,
        params: Option<&Value>,
        declares: impl Fn(&str) -> bool,
    ) -> Result<CustomResult, ErrorData> {
        let served = serve_resolve(self.dialect, params, declares, |name, arguments| {
            self.rules
                .resolve(name, arguments)
                .map(|r| (name, arguments, r))
        })
        .map_err(to_error_data)?;
        let (name, arguments, resolved) = served.resolved;
        self.server_check(name, arguments)?;
        let mut result: Value =
            serde_json::from_str(&resolved.result_json(self.dialect)).map_err(|e| {
                ErrorData::internal_error(format!("resolver result is not JSON: {e}"), None)
            })?;
        if served.variant_meta
            && let Value::Object(map) = &mut result
        {
            let meta = map
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(meta) = meta {
                meta.insert(VARIANT_EXTENSION_ID.into(), resolved.variant_meta());
            }
        }
        Ok(CustomResult::new(result))
    }
}

/// Whether a listed tool carries the resolvable marker.
fn is_marked(tool: &Tool) -> bool {
    tool.meta
        .as_ref()
        .is_some_and(|meta| meta.0.contains_key(EXTENSION_ID))
}

/// Whether the request (its `_meta` client capabilities, or the session's
/// `initialize`) declares the tool-resolution extension in the form this
/// version supports: an empty settings object. The extension requires a
/// server to treat settings it does not know (any non-empty object) as
/// unsupported, so such a client gets `-32021` like one that declares
/// nothing.
pub fn client_declares_extension(context: &RequestContext<RoleServer>) -> bool {
    client_declares(context, EXTENSION_ID)
}

/// Whether the request (or the session) declares the extension `id` with
/// an empty settings object (see [`client_declares_extension`]).
pub fn client_declares(context: &RequestContext<RoleServer>, id: &str) -> bool {
    context
        .client_capabilities()
        .and_then(|caps| caps.extensions)
        .is_some_and(|extensions| supported_settings_object(extensions.get(id)))
}

/// Whether the extension's settings object, as a client declared it, is one
/// this version supports (present and empty): the protocol crate's one rule.
pub use mcp_resolve_protocol::supported_settings_object;

/// `-32021` naming the tool-resolution extension as the missing capability
/// ([`RpcError::missing_capability`]).
pub fn missing_capability() -> ErrorData {
    to_error_data(RpcError::missing_capability())
}

/// A resolver error as rmcp's JSON-RPC error.
pub fn to_error_data(error: RpcError) -> ErrorData {
    let error = error.into_object();
    let code = i32::try_from(error.code).unwrap_or(ErrorCode::INTERNAL_ERROR.0);
    ErrorData::new(ErrorCode(code), Cow::Owned(error.message), error.data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_empty_settings_are_supported() {
        assert!(supported_settings_object(Some(&JsonObject::new())));
        assert!(!supported_settings_object(None));
        let mut future = JsonObject::new();
        future.insert("futureRequiredMode".into(), Value::Bool(true));
        assert!(!supported_settings_object(Some(&future)));
    }
}
