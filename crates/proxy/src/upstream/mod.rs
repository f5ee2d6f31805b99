//! A client of a running MCP server, over stdio (a child process this module
//! starts and always stops) or streamable HTTP.
//!
//! [`Session`] speaks the client side of a legacy `initialize` session:
//! `initialize`, `notifications/initialized`, then requests such as
//! `tools/list` (every page), and a clean shutdown — stdin closed, then
//! `SIGTERM` and `SIGKILL` to the child's whole process group if it lingers,
//! so nothing it started outlives the session. Every wait has a deadline;
//! a server that writes something other than JSON-RPC, answers with an error,
//! exits early or goes silent ends the session with an [`UpstreamError`]
//! that says which, with the last lines the server wrote to stderr.

pub(crate) mod http;
mod stdio;

use std::ffi::OsString;
use std::time::Duration;

use mcp_resolve_runtime::RpcError;
use serde_json::{Map, Value, json};
use tokio::time::{Instant, timeout_at};

pub use self::http::{HttpTransport, UpstreamHeaders, expand as expand_secret};
pub use self::stdio::StdioTransport;

/// The protocol version this client asks for in `initialize`.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// The most a single message (one stdio line, one HTTP body or event) may
/// hold; a larger one ends the session instead of exhausting memory.
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;

/// The most `tools/list` pages a session follows.
const MAX_PAGES: usize = 10_000;

/// Why talking to a server failed.
#[derive(Debug, thiserror::Error)]
pub enum UpstreamError {
    /// The command could not be started.
    #[error("cannot start `{command}`: {source}")]
    Spawn {
        /// The command line.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// The server's process ended (or closed its stdout) before answering.
    #[error("the server exited before answering `{method}` ({status}){}", stderr_tail(.stderr))]
    Exited {
        /// The request waiting for an answer.
        method: String,
        /// How the process ended.
        status: String,
        /// The last lines it wrote to stderr.
        stderr: Vec<String>,
    },
    /// No answer within the deadline.
    #[error("no answer to `{method}` within {}s (raise it with --timeout){}", .after.as_secs(), stderr_tail(.stderr))]
    Timeout {
        /// The request waiting for an answer.
        method: String,
        /// The deadline.
        after: Duration,
        /// The last lines the server wrote to stderr (stdio only).
        stderr: Vec<String>,
    },
    /// The server answered with a JSON-RPC error.
    #[error("the server answered `{method}` with error {code}: {message}")]
    Rpc {
        /// The request.
        method: String,
        /// The JSON-RPC error code.
        code: i64,
        /// Its message.
        message: String,
    },
    /// The server broke the protocol (a malformed result, a message too large, …).
    #[error("{0}")]
    Protocol(String),
    /// An HTTP exchange failed.
    #[error("{0}")]
    Http(String),
    /// Nothing answered at the server's address (the connection was
    /// refused, or could not be made).
    #[error("{method} {url}: {why}; is the server running and listening at that address?")]
    Unreachable {
        /// The HTTP method of the exchange.
        method: &'static str,
        /// The server's URL.
        url: String,
        /// What the connection attempt met (`connection refused`, …).
        why: String,
    },
    /// The user interrupted (`SIGINT`, `SIGTERM` or `SIGHUP`); the server
    /// was stopped.
    #[error("interrupted; the server was stopped")]
    Interrupted,
    /// Reading from or writing to the server failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// Why it failed.
        source: std::io::Error,
    },
}

pub(crate) fn stderr_tail(lines: &[String]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let mut text = String::from("\nthe server's last lines on stderr:");
    for line in lines {
        text.push_str("\n  | ");
        text.push_str(line);
    }
    text
}

/// How a transport hands over what the server sent.
pub(crate) enum Received {
    /// A JSON-RPC message (or each member of a batch, one at a time).
    Message(Value),
    /// Something that is not JSON-RPC; the session skips it with a warning.
    Garbage(String),
}

/// The two ways to reach a server.
pub enum Transport {
    /// A child process over its stdin and stdout.
    Stdio(StdioTransport),
    /// A streamable HTTP endpoint.
    Http(HttpTransport),
}

impl Transport {
    async fn send(&mut self, message: &Value) -> Result<(), UpstreamError> {
        match self {
            Transport::Stdio(t) => t.send(message).await,
            Transport::Http(t) => t.send(message).await,
        }
    }

    /// The next thing the server sent; `None` when it has nothing more
    /// (its stdout closed, or no HTTP stream is open).
    async fn recv(&mut self) -> Result<Option<Received>, UpstreamError> {
        match self {
            Transport::Stdio(t) => t.recv().await,
            Transport::Http(t) => t.recv().await,
        }
    }

    async fn ended(&mut self, method: &str) -> UpstreamError {
        match self {
            Transport::Stdio(t) => t.ended(method).await,
            Transport::Http(_) => UpstreamError::Protocol(format!(
                "the server closed the HTTP response without answering `{method}`"
            )),
        }
    }

    fn stderr(&self) -> Vec<String> {
        match self {
            Transport::Stdio(t) => t.stderr(),
            Transport::Http(_) => Vec::new(),
        }
    }

    async fn close(self, grace: Duration) -> Result<(), UpstreamError> {
        match self {
            Transport::Stdio(t) => t.close(grace).await,
            Transport::Http(t) => {
                // A server that does not answer the DELETE is left to expire.
                let _ = tokio::time::timeout(grace, t.close()).await;
                Ok(())
            }
        }
    }
}

/// A client session with one server.
pub struct Session {
    transport: Transport,
    next_id: u64,
    timeout: Duration,
    /// What the server answered to `initialize` (`null` for a server that
    /// has no `initialize`).
    pub initialize: Value,
    /// Things the server did that a client tolerates but a user should
    /// hear about (lines that are not JSON-RPC, answers to unknown ids).
    pub warnings: Vec<String>,
}

impl Session {
    /// Starts `command` and opens a session with it over its stdio.
    pub async fn spawn(command: &[OsString], timeout: Duration) -> Result<Self, UpstreamError> {
        Self::spawn_declaring(command, timeout, host_capabilities()).await
    }

    /// [`Session::spawn`], declaring `capabilities` at `initialize` instead
    /// of a full host's ([`host_capabilities`]).
    pub async fn spawn_declaring(
        command: &[OsString],
        timeout: Duration,
        capabilities: Value,
    ) -> Result<Self, UpstreamError> {
        let transport = Transport::Stdio(StdioTransport::spawn(command)?);
        Self::open(transport, timeout, capabilities).await
    }

    /// Opens a session with the streamable HTTP endpoint at `url`.
    pub async fn connect(url: &str, timeout: Duration) -> Result<Self, UpstreamError> {
        Self::connect_declaring(url, timeout, host_capabilities()).await
    }

    /// [`Session::connect`], sending `headers` with every request.
    pub async fn connect_with(
        url: &str,
        headers: &UpstreamHeaders,
        timeout: Duration,
    ) -> Result<Self, UpstreamError> {
        let transport = Transport::Http(HttpTransport::with_headers(url, headers)?);
        Self::open(transport, timeout, host_capabilities()).await
    }

    /// [`Session::connect`], declaring `capabilities` at `initialize`.
    pub async fn connect_declaring(
        url: &str,
        timeout: Duration,
        capabilities: Value,
    ) -> Result<Self, UpstreamError> {
        let transport = Transport::Http(HttpTransport::new(url)?);
        Self::open(transport, timeout, capabilities).await
    }

    async fn open(
        transport: Transport,
        timeout: Duration,
        capabilities: Value,
    ) -> Result<Self, UpstreamError> {
        let mut session = Session {
            transport,
            next_id: 1,
            timeout,
            initialize: Value::Null,
            warnings: Vec::new(),
        };
        let params = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": capabilities,
            "clientInfo": {"name": "mcp-resolve", "version": env!("CARGO_PKG_VERSION")},
        });
        match session.request("initialize", params).await {
            Ok(result) => {
                let version = result.get("protocolVersion").and_then(Value::as_str);
                let Some(version) = version else {
                    return Err(session
                        .fail(UpstreamError::Protocol(
                            "the server's `initialize` result has no `protocolVersion`".into(),
                        ))
                        .await);
                };
                if let Transport::Http(t) = &mut session.transport {
                    t.set_protocol_version(version);
                }
                session.initialize = result;
                session
                    .notify("notifications/initialized", json!({}))
                    .await?;
            }
            // A server without `initialize` (stateless protocol versions)
            // still answers `tools/list`.
            Err(UpstreamError::Rpc {
                code: RpcError::METHOD_NOT_FOUND,
                ..
            }) => session
                .warnings
                .push("the server has no `initialize`; going on without a session".into()),
            Err(e) => return Err(session.fail(e).await),
        }
        Ok(session)
    }

    /// Closes the session, then returns `error`.
    async fn fail(self, error: UpstreamError) -> UpstreamError {
        let _ = self.transport.close(Duration::from_secs(2)).await;
        error
    }

    /// The server's `serverInfo` member, if it sent one.
    pub fn server_info(&self) -> Option<&Map<String, Value>> {
        self.initialize.get("serverInfo").and_then(Value::as_object)
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) -> Result<(), UpstreamError> {
        let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
        let deadline = Instant::now() + self.timeout;
        self.send_by(deadline, method, &message).await
    }

    /// Sends `message` (about `method`), failing at `deadline`: a server
    /// that stops reading its stdin, or an HTTP endpoint that never
    /// answers the `POST`, cannot hang the session.
    async fn send_by(
        &mut self,
        deadline: Instant,
        method: &str,
        message: &Value,
    ) -> Result<(), UpstreamError> {
        match timeout_at(deadline, self.transport.send(message)).await {
            Ok(sent) => sent,
            Err(_) => Err(UpstreamError::Timeout {
                method: method.into(),
                after: self.timeout,
                stderr: self.transport.stderr(),
            }),
        }
    }

    /// Sends a request and waits (until the session's deadline) for its
    /// result, answering the server's own requests meanwhile (`ping` with
    /// an empty result, `roots/list` with no roots, `elicitation/create`
    /// declined, `sampling/createMessage` refused, anything else with
    /// "method not found").
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, UpstreamError> {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let deadline = Instant::now() + self.timeout;
        self.send_by(deadline, method, &message).await?;
        loop {
            let received = match timeout_at(deadline, self.transport.recv()).await {
                Ok(received) => received?,
                Err(_) => {
                    return Err(UpstreamError::Timeout {
                        method: method.into(),
                        after: self.timeout,
                        stderr: self.transport.stderr(),
                    });
                }
            };
            let message = match received {
                None => return Err(self.transport.ended(method).await),
                Some(Received::Garbage(line)) => {
                    self.warnings.push(format!(
                        "the server wrote something that is not JSON-RPC: {line}"
                    ));
                    continue;
                }
                Some(Received::Message(message)) => message,
            };
            if let Some(request) = message.get("method").and_then(Value::as_str) {
                if let Some(their_id) = message.get("id") {
                    // What a host that declared these would answer and
                    // this session cannot do otherwise: no roots, no
                    // sampling, every question declined.
                    let result = match request {
                        "ping" => Some(json!({})),
                        "roots/list" => Some(json!({"roots": []})),
                        "elicitation/create" => Some(json!({"action": "decline"})),
                        _ => None,
                    };
                    let reply = if let Some(result) = result {
                        json!({"jsonrpc": "2.0", "id": their_id, "result": result})
                    } else if request == "sampling/createMessage" {
                        let error = RpcError::new(-1, "mcp-resolve does not sample", None);
                        mcp_resolve_protocol::error_value(their_id, &error)
                    } else {
                        let error = RpcError::new(
                            RpcError::METHOD_NOT_FOUND,
                            format!("method not found: {request}"),
                            None,
                        );
                        mcp_resolve_protocol::error_value(their_id, &error)
                    };
                    self.send_by(deadline, method, &reply).await?;
                }
                continue;
            }
            if message.get("id") != Some(&json!(id)) {
                self.warnings.push(format!(
                    "the server answered an id this client never sent: {}",
                    excerpt(&message.to_string())
                ));
                continue;
            }
            if let Some(error) = message.get("error") {
                return Err(UpstreamError::Rpc {
                    method: method.into(),
                    code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
                    message: error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("(no message)")
                        .into(),
                });
            }
            return match message.get("result") {
                Some(result) if result.is_object() => Ok(result.clone()),
                _ => Err(UpstreamError::Protocol(format!(
                    "the server's answer to `{method}` has no result object"
                ))),
            };
        }
    }

    /// Every tool the server lists, following `nextCursor` page by page.
    pub async fn list_tools(&mut self) -> Result<Vec<Value>, UpstreamError> {
        let mut tools = Vec::new();
        let mut cursors = std::collections::HashSet::new();
        let mut params = json!({});
        for _ in 0..MAX_PAGES {
            let page = self.request("tools/list", params).await?;
            let Some(listed) = page.get("tools").and_then(Value::as_array) else {
                return Err(UpstreamError::Protocol(
                    "the server's `tools/list` result has no `tools` array".into(),
                ));
            };
            tools.extend(listed.iter().cloned());
            match page.get("nextCursor") {
                None | Some(Value::Null) => return Ok(tools),
                Some(Value::String(cursor)) => {
                    if !cursors.insert(cursor.clone()) {
                        return Err(UpstreamError::Protocol(format!(
                            "the server's `tools/list` repeated the cursor `{}`",
                            excerpt(cursor)
                        )));
                    }
                    params = json!({"cursor": cursor});
                }
                Some(_) => {
                    return Err(UpstreamError::Protocol(
                        "the server's `nextCursor` is not a string".into(),
                    ));
                }
            }
        }
        Err(UpstreamError::Protocol(format!(
            "the server's `tools/list` went on for more than {MAX_PAGES} pages"
        )))
    }

    /// Ends the session: the HTTP session is deleted; a child process gets
    /// its stdin closed and `grace` to exit before its process group is
    /// sent `SIGTERM`, then `SIGKILL`.
    pub async fn close(self, grace: Duration) -> Result<(), UpstreamError> {
        self.transport.close(grace).await
    }
}

/// Runs `work` until it ends or the user interrupts (`SIGINT`, and on Unix
/// `SIGTERM` and `SIGHUP`). On an interruption `work` is dropped — with it
/// any session it holds, whose child process group is then killed — and
/// the result is [`UpstreamError::Interrupted`].
pub async fn until_interrupted<T>(
    work: impl std::future::Future<Output = Result<T, UpstreamError>>,
) -> Result<T, UpstreamError> {
    tokio::select! {
        result = work => result,
        () = interrupted() => Err(UpstreamError::Interrupted),
    }
}

/// Resolves when the user interrupts (`SIGINT`, and on Unix `SIGTERM` and
/// `SIGHUP`).
///
/// The signals are watched by a task of their own, which says so through a
/// channel: the future a session's loop polls at each of its wake-ups is
/// that channel, not three signal streams.
#[cfg(unix)]
pub async fn interrupted() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        return std::future::pending().await;
    };
    let (tell, told) = tokio::sync::oneshot::channel();
    let watch = Watch(tokio::spawn(async move {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
            _ = hup.recv() => {}
        }
        let _ = tell.send(());
    }));
    if told.await.is_err() {
        std::future::pending::<()>().await;
    }
    drop(watch);
}

/// A task that ends with the future that started it.
#[cfg(unix)]
struct Watch(tokio::task::JoinHandle<()>);

#[cfg(unix)]
impl Drop for Watch {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Resolves when the user interrupts (`SIGINT`).
#[cfg(not(unix))]
pub async fn interrupted() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

pub(crate) use mcp_resolve_proxy_core::excerpt;

/// `command` as a user would type it.
pub fn command_line(command: &[OsString]) -> String {
    command
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The capabilities a full host declares at `initialize` (sampling,
/// elicitation, roots): a server that lists tools by the client's
/// capabilities lists them all. The session answers what they invite as
/// well as it can: no roots, no sampling, every question declined.
pub fn host_capabilities() -> Value {
    json!({"sampling": {}, "elicitation": {}, "roots": {"listChanged": false}})
}
