//! One handle on everything a generated resolver exposes, so code that serves
//! `tools/resolve` (such as the [`rmcp`](crate::rmcp) wiring) can take any
//! generated resolver as a value.

use serde_json::{Map, Value};

use crate::outcomes::Outcomes;
use crate::validate::LazyValidator;
use crate::{Dialect, Resolved, RpcError};

/// The resolver generated from one rules set, as a value.
///
/// Every generated file defines `pub static RULES: Rules` pointing at its own
/// functions and data; pass `&resolve::RULES` wherever a resolver is needed.
/// The fields are public so generated code can build it; call the methods.
#[derive(Clone, Copy)]
pub struct Rules {
    /// The server's name, as in `serverInfo`.
    pub server_name: &'static str,
    /// The server's version, as in `serverInfo`.
    pub server_version: &'static str,
    /// The signature document's fingerprint, `sha256:<hex>`.
    pub fingerprint: &'static str,
    /// The signature document, in its canonical form (RFC 8785, as
    /// `mcp-resolve signature --canonical` writes it).
    pub signature_json: &'static str,
    /// Every tool name, in declaration order.
    pub tool_names: &'static [&'static str],
    /// The `tools/list` result text for a dialect.
    pub tools_list_json: fn(Dialect) -> &'static str,
    /// Validates and resolves a call.
    pub resolve: fn(&str, &Value) -> Result<&'static Resolved, RpcError>,
    /// Resolves a call whose arguments are already known to be valid.
    pub resolve_validated: fn(&str, &Map<String, Value>) -> Result<&'static Resolved, RpcError>,
}

impl Rules {
    /// Resolves a call: `-32602` for an unknown or non-resolvable tool and for
    /// arguments that do not conform to the tool's `inputSchema`.
    pub fn resolve(&self, name: &str, arguments: &Value) -> Result<&'static Resolved, RpcError> {
        (self.resolve)(name, arguments)
    }

    /// Resolves a call whose arguments were validated by the caller.
    pub fn resolve_validated(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
    ) -> Result<&'static Resolved, RpcError> {
        (self.resolve_validated)(name, arguments)
    }

    /// The `tools/list` result for `dialect`, as JSON text.
    pub fn tools_list_json(&self, dialect: Dialect) -> &'static str {
        (self.tools_list_json)(dialect)
    }

    /// The `tools/list` tool objects for `dialect`.
    pub fn tools(&self, dialect: Dialect) -> Vec<Value> {
        match serde_json::from_str::<Value>(self.tools_list_json(dialect)) {
            Ok(Value::Object(mut list)) => match list.remove("tools") {
                Some(Value::Array(tools)) => tools,
                _ => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    /// The signature document as JSON.
    pub fn signature(&self) -> Value {
        serde_json::from_str(self.signature_json).unwrap_or(Value::Null)
    }

    /// Whether `name` is a tool of this server.
    pub fn has_tool(&self, name: &str) -> bool {
        self.tool_names.contains(&name)
    }
}

/// One resolvable tool of a generated resolver: its `inputSchema`, compiled
/// on first use, and the generated function that matches its arguments.
/// Generated code keeps them in one table indexed by the tool's slot, so
/// the per-tool code is only the matching itself.
#[derive(Debug)]
pub struct GeneratedTool {
    /// The tool's name.
    pub name: &'static str,
    /// The tool's `inputSchema`.
    pub schema: LazyValidator,
    /// Each variant's outcome, then the static fallback's.
    pub outcomes: Outcomes,
    /// Matches validated arguments to the index of their outcome.
    pub matcher: fn(&Map<String, Value>) -> usize,
}

impl GeneratedTool {
    /// Validates the arguments against the tool's `inputSchema`, then
    /// matches them: `-32602` for arguments that do not conform, `-32603`
    /// when the schema does not compile.
    #[inline]
    pub fn resolve(&'static self, arguments: &Value) -> Result<&'static Resolved, RpcError> {
        self.resolve_with(arguments, self.matcher)
    }

    /// Matches arguments the caller has already validated.
    #[inline]
    pub fn resolve_validated(
        &'static self,
        arguments: &Map<String, Value>,
    ) -> Result<&'static Resolved, RpcError> {
        self.resolve_validated_with(arguments, self.matcher)
    }

    /// [`GeneratedTool::resolve`] with the tool's matcher named by the
    /// caller: generated code that dispatches with a `match` passes the
    /// matching function itself, which the compiler can then inline (a call
    /// through the [`GeneratedTool::matcher`] pointer it cannot).
    #[inline]
    pub fn resolve_with(
        &'static self,
        arguments: &Value,
        matcher: impl FnOnce(&Map<String, Value>) -> usize,
    ) -> Result<&'static Resolved, RpcError> {
        let arguments = self.schema.validate(self.name, arguments)?;
        self.outcomes.get(matcher(arguments))
    }

    /// [`GeneratedTool::resolve_validated`] with the matcher named by the
    /// caller, as in [`GeneratedTool::resolve_with`].
    #[inline]
    pub fn resolve_validated_with(
        &'static self,
        arguments: &Map<String, Value>,
        matcher: impl FnOnce(&Map<String, Value>) -> usize,
    ) -> Result<&'static Resolved, RpcError> {
        self.outcomes.get(matcher(arguments))
    }
}

/// [`GeneratedTool::resolve`] for the tool in `slot` of a generated table:
/// `-32602` for an unknown name (no slot) or a tool that is not resolvable
/// (an empty slot).
#[inline]
pub fn resolve_in(
    tools: &[Option<&'static GeneratedTool>],
    slot: Option<usize>,
    name: &str,
    arguments: &Value,
) -> Result<&'static Resolved, RpcError> {
    match slot.and_then(|i| tools.get(i)) {
        Some(Some(tool)) => tool.resolve(arguments),
        Some(None) => Err(RpcError::not_resolvable(name)),
        None => Err(RpcError::unknown_tool(name)),
    }
}

/// [`GeneratedTool::resolve_validated`] for the tool in `slot`, with
/// [`resolve_in`]'s errors.
#[inline]
pub fn resolve_validated_in(
    tools: &[Option<&'static GeneratedTool>],
    slot: Option<usize>,
    name: &str,
    arguments: &Map<String, Value>,
) -> Result<&'static Resolved, RpcError> {
    match slot.and_then(|i| tools.get(i)) {
        Some(Some(tool)) => tool.resolve_validated(arguments),
        Some(None) => Err(RpcError::not_resolvable(name)),
        None => Err(RpcError::unknown_tool(name)),
    }
}

impl std::fmt::Debug for Rules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rules")
            .field("server_name", &self.server_name)
            .field("server_version", &self.server_version)
            .field("fingerprint", &self.fingerprint)
            .field("tool_names", &self.tool_names)
            .finish_non_exhaustive()
    }
}
