//! The MCP server: tools from the rules file, `tools/call` on the sandbox,
//! and `tools/resolve` and `signature` through `mcp_resolve_runtime::rmcp`.

use std::sync::Arc;

use mcp_resolve_runtime::rmcp::ToolResolution;
use mcp_resolve_runtime::{Dialect, RpcError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::Deserialize;

use crate::sandbox::{Refused, Sandbox, check_path};

/// The resolver `build.rs` generated from `rules/file-server.yaml`.
pub mod resolve {
    include!(concat!(env!("OUT_DIR"), "/file-server_resolve.rs"));
}

/// The file server: one sandbox, shared by every session.
#[derive(Clone, Debug)]
pub struct FileServer {
    sandbox: Arc<Sandbox>,
    resolution: ToolResolution,
}

impl FileServer {
    /// A server on `sandbox` answering resolve requests in `dialect`.
    pub fn new(sandbox: Arc<Sandbox>, dialect: Dialect) -> FileServer {
        FileServer {
            sandbox,
            resolution: ToolResolution::with_dialect(&resolve::RULES, dialect)
                .with_argument_check(check_arguments),
        }
    }

    /// The tool-resolution wiring this server answers with.
    pub fn resolution(&self) -> &ToolResolution {
        &self.resolution
    }

    fn run(&self, name: &str, arguments: JsonObject) -> Result<String, Refused> {
        let arguments = serde_json::Value::Object(arguments);
        let parse = |e: serde_json::Error| Refused(format!("invalid arguments: {e}"));
        match name {
            "manage_files" => {
                let args = ManageFiles::deserialize(arguments).map_err(parse)?;
                let content = || {
                    args.content
                        .as_deref()
                        .ok_or_else(|| Refused(format!("`content` is required to {}", args.action)))
                };
                match args.action.as_str() {
                    "read" => self.sandbox.read(&args.path),
                    "append" => {
                        let content = content()?;
                        self.sandbox.append(&args.path, content)?;
                        Ok(format!("appended {} bytes to {}", content.len(), args.path))
                    }
                    "replace" => {
                        let content = content()?;
                        self.sandbox.replace(&args.path, content)?;
                        Ok(format!("wrote {} bytes to {}", content.len(), args.path))
                    }
                    "delete" => {
                        self.sandbox.delete(&args.path)?;
                        Ok(format!("deleted {}", args.path))
                    }
                    other => Err(Refused(format!("unknown action {other}"))),
                }
            }
            "copy_file" => {
                let args = CopyFile::deserialize(arguments).map_err(parse)?;
                let bytes = self
                    .sandbox
                    .copy(&args.source, &args.destination, args.overwrite)?;
                Ok(format!(
                    "copied {bytes} bytes from {} to {}",
                    args.source, args.destination
                ))
            }
            "list_directory" => {
                let args = ListDirectory::deserialize(arguments).map_err(parse)?;
                Ok(self.sandbox.list(&args.path)?.join("\n"))
            }
            other => Err(Refused(format!("unknown tool {other}"))),
        }
    }
}

/// The server's own checks, beyond the inputSchema, that `tools/resolve` and
/// `tools/call` share: every path stays inside the sandbox (lexically; the
/// call's walk also refuses symlinks that leave it), and the actions that
/// write have `content`. Pure, as resolution must be.
pub fn check_arguments(name: &str, arguments: &serde_json::Value) -> Result<(), RpcError> {
    let refuse = |r: Refused| RpcError::invalid_params(r.0);
    let paths: &[&str] = match name {
        "manage_files" | "list_directory" => &["path"],
        "copy_file" => &["source", "destination"],
        _ => &[],
    };
    for key in paths {
        if let Some(path) = arguments.get(*key).and_then(serde_json::Value::as_str) {
            check_path(path).map_err(refuse)?;
        }
    }
    if name == "manage_files"
        && let Some(action @ ("append" | "replace")) =
            arguments.get("action").and_then(serde_json::Value::as_str)
        && arguments.get("content").is_none()
    {
        return Err(RpcError::invalid_params(format!(
            "`content` is required to {action}"
        )));
    }
    Ok(())
}

#[derive(Deserialize)]
struct ManageFiles {
    path: String,
    action: String,
    content: Option<String>,
}

#[derive(Deserialize)]
struct CopyFile {
    source: String,
    destination: String,
    #[serde(default)]
    overwrite: bool,
}

#[derive(Deserialize)]
struct ListDirectory {
    #[serde(default = "current_dir")]
    path: String,
}

fn current_dir() -> String {
    ".".to_string()
}

impl ServerHandler for FileServer {
    fn get_info(&self) -> ServerConfig {
        let mut config = self
            .resolution
            .server_config(ServerCapabilities::builder().enable_tools().build());
        config.instructions = Some(format!(
            "Files in one sandbox directory. Ask `{}` for the annotations of a call \
             before making it: reads are read-only, appends are not destructive.",
            self.resolution.method()
        ));
        config
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(self.resolution.list_tools_for(&context))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.as_ref();
        if self.resolution.tool(name).is_none() {
            return Err(ErrorData::invalid_params(
                format!("unknown tool: {name}"),
                None,
            ));
        }
        // The arguments are checked against the tool's full inputSchema by the
        // same validator `tools/resolve` uses; a bad call is a tool error the
        // model can read and correct.
        if let Err(error) = self.resolution.check_call(name, request.arguments.as_ref()) {
            let mut text = error.message.to_string();
            if let Some(data) = &error.data {
                text.push_str(&format!("\n{data}"));
            }
            return Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into());
        }
        let arguments = request.arguments.unwrap_or_default();
        let name = name.to_string();
        let server = self.clone();
        // File I/O is blocking: keep it off the async workers.
        let outcome = tokio::task::spawn_blocking(move || server.run(&name, arguments))
            .await
            .map_err(|e| ErrorData::internal_error(format!("tool task failed: {e}"), None))?;
        Ok(match outcome {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(refused) => CallToolResult::error(vec![ContentBlock::text(refused.0)]),
        }
        .into())
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        self.resolution.on_custom_request(&request, &context)
    }
}
