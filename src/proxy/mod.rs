//! `mcp-resolve proxy`: `tools/resolve` for any MCP server, with no change
//! to it. The proxy starts the server as a child over stdio and speaks MCP
//! to the host on its own stdio. Every message passes through unchanged,
//! except what the proxy owns ([`rules`]): the capabilities it adds to
//! `initialize` / `server/discover` answers, the annotations and markers it
//! sets in `tools/list` answers, and the requests it answers itself (the
//! dialect's resolve method and `signature`).
//!
//! Faults: host input goes through the runtime's JSON-RPC screen (malformed
//! messages are answered, never forwarded); a line from the server that is
//! not JSON-RPC, or is over the size limit, is logged and skipped; a request
//! the server leaves unanswered past the timeout gets an error; when the
//! server exits, every pending request gets an error and the proxy exits
//! non-zero naming why; when the host goes away, the server's process group
//! is stopped (stdin closed, then `SIGTERM`, then `SIGKILL`).

pub mod rules;

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::time::Duration;

use mcp_resolve_runtime::framing::{Line, Screen, Screened, read_line_within};
use mcp_resolve_runtime::{Dialect, RpcError};
use serde_json::{Value, json};
use tokio::io::{AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::time::Instant;

pub use self::rules::{ProxyRules, Rewrite};
use crate::upstream::{StdioTransport, UpstreamError, command_line, excerpt};

/// How long the server gets to exit after its stdin closes, and again after
/// `SIGTERM`.
const GRACE: Duration = Duration::from_secs(2);

/// The proxy's settings.
#[derive(Clone, Debug)]
pub struct Options {
    /// How long a forwarded request may wait for the server's answer;
    /// `None`: forever.
    pub timeout: Option<Duration>,
    /// The largest message read from either side.
    pub max_message_bytes: usize,
}

/// How a proxy session ended.
#[derive(Debug)]
pub enum Ended {
    /// The host closed its side; the server was stopped.
    HostClosed,
    /// The server exited or closed its output; pending requests were
    /// answered with an error.
    ServerExited(String),
}

/// A request forwarded to the server and not answered yet.
struct Pending {
    method: String,
    rewrite: Rewrite,
    deadline: Option<Instant>,
}

/// What a reader task hands over.
enum Input {
    Line(String),
    TooLong,
    NotUtf8,
}

/// Reads `reader` line by line into a channel, each line at most `max`
/// bytes; the channel closes at the end of the input.
fn read_lines<R>(reader: R, max: usize) -> mpsc::Receiver<Input>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(async move {
        let mut reader = BufReader::new(reader);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let input = match read_line_within(&mut reader, &mut buf, max).await {
                Ok(Line::Eof) | Err(_) => break,
                Ok(Line::TooLong) => Input::TooLong,
                Ok(Line::Complete) => match std::str::from_utf8(&buf) {
                    Ok(text) => Input::Line(text.trim_end_matches(['\n', '\r']).to_string()),
                    Err(_) => Input::NotUtf8,
                },
            };
            if tx.send(input).await.is_err() {
                break;
            }
        }
    });
    rx
}

/// A key for a JSON-RPC id (ids are strings or integers).
fn id_key(id: &Value) -> String {
    id.to_string()
}

fn error_response(id: &Value, error: &RpcError) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": error.to_json()})
}

async fn write_line<W: AsyncWrite + Unpin>(out: &mut W, text: &str) -> std::io::Result<()> {
    out.write_all(text.as_bytes()).await?;
    out.write_all(b"\n").await?;
    out.flush().await
}

/// Logs one line on stderr.
fn log(message: &str) {
    eprintln!("mcp-resolve proxy: {message}");
}

/// One proxy session between a host (`host_in`, `host_out`) and the server
/// started from `command`, until either side ends.
pub async fn run<R, W>(
    rules: &ProxyRules,
    options: &Options,
    command: &[OsString],
    host_in: R,
    mut host_out: W,
) -> Result<Ended, UpstreamError>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin,
{
    let mut server = StdioTransport::spawn(command)?;
    let Some((mut server_in, server_out)) = server.take_pipes() else {
        return Err(UpstreamError::Protocol(
            "the child process has no piped stdio".into(),
        ));
    };
    let mut from_server = read_lines(server_out, options.max_message_bytes);
    let mut from_host = read_lines(host_in, options.max_message_bytes);
    let mut screen = if rules.dialect() == Dialect::Extension {
        Screen::checking(rules.method())
    } else {
        Screen::default()
    };
    let mut pending: HashMap<String, Pending> = HashMap::new();
    // Requests the host already got a timeout error for: a late answer is
    // dropped (a second response to one id would break JSON-RPC).
    let mut expired: HashSet<String> = HashSet::new();
    // The capabilities the host declared at `initialize` (legacy sessions).
    let mut session_caps: Option<Value> = None;
    let mut ticker = tokio::time::interval(Duration::from_millis(250));
    let io_error = |e: std::io::Error, what: &str| UpstreamError::Io {
        context: format!("cannot write to the {what}"),
        source: e,
    };

    let ended = loop {
        tokio::select! {
            input = from_host.recv() => {
                let text = match input {
                    None => break Ended::HostClosed,
                    Some(Input::TooLong) => {
                        let answer = error_response(&Value::Null, &RpcError {
                            code: -32600,
                            message: format!("Invalid Request: the message is larger than {} bytes", options.max_message_bytes),
                            data: None,
                        });
                        write_line(&mut host_out, &answer.to_string()).await.map_err(|e| io_error(e, "host"))?;
                        continue;
                    }
                    Some(Input::NotUtf8) => {
                        let answer = json!({"jsonrpc": "2.0", "id": null,
                            "error": {"code": -32700, "message": "Parse error: the line is not UTF-8"}});
                        write_line(&mut host_out, &answer.to_string()).await.map_err(|e| io_error(e, "host"))?;
                        continue;
                    }
                    Some(Input::Line(text)) => text,
                };
                match screen.line(&text) {
                    Screened::Drop(_) => continue,
                    Screened::Reply(answer) => {
                        write_line(&mut host_out, &answer.to_string()).await.map_err(|e| io_error(e, "host"))?;
                        continue;
                    }
                    Screened::Forward => {}
                }
                let Ok(message) = serde_json::from_str::<Value>(&text) else {
                    continue; // the screen forwards only JSON objects
                };
                let method = message.get("method").and_then(Value::as_str);
                let params = message.get("params");
                match (method, message.get("id")) {
                    (Some(method), Some(id)) => {
                        if let Some(answer) = rules.answer(method, params, session_caps.as_ref()) {
                            // The result text is spliced in as computed at start.
                            let response = match answer {
                                Ok(result) => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
                                Err(error) => error_response(id, &error).to_string(),
                            };
                            write_line(&mut host_out, &response).await.map_err(|e| io_error(e, "host"))?;
                            continue;
                        }
                        let rewrite = match method {
                            "initialize" => {
                                session_caps = params.and_then(|p| p.get("capabilities")).cloned();
                                Rewrite::Capabilities
                            }
                            "server/discover" => Rewrite::Capabilities,
                            "tools/list" => Rewrite::Tools { marked: rules.may_mark(params, session_caps.as_ref()) },
                            _ => Rewrite::None,
                        };
                        pending.insert(id_key(id), Pending {
                            method: method.to_string(),
                            rewrite,
                            deadline: options.timeout.map(|t| Instant::now() + t),
                        });
                    }
                    (Some("notifications/cancelled"), None) => {
                        if let Some(id) = params.and_then(|p| p.get("requestId")) {
                            pending.remove(&id_key(id));
                        }
                    }
                    _ => {}
                }
                // Passed on exactly as the host wrote it.
                if let Err(e) = write_line(&mut server_in, &text).await {
                    log(&format!("cannot write to the server: {e}"));
                }
            }
            input = from_server.recv() => {
                let text = match input {
                    None => {
                        let status = server.wait_exit(GRACE).await.unwrap_or_else(|| "its stdout closed".into());
                        break Ended::ServerExited(status);
                    }
                    Some(Input::TooLong) => {
                        log(&format!("the server wrote a message over {} bytes; skipped", options.max_message_bytes));
                        continue;
                    }
                    Some(Input::NotUtf8) => {
                        log("the server wrote a line that is not UTF-8; skipped");
                        continue;
                    }
                    Some(Input::Line(text)) => text,
                };
                if text.trim().is_empty() {
                    continue;
                }
                let message = match serde_json::from_str::<Value>(&text) {
                    Ok(message @ Value::Object(_)) => message,
                    _ => {
                        log(&format!("the server wrote something that is not JSON-RPC; skipped: {}", excerpt(&text)));
                        continue;
                    }
                };
                let is_response = message.get("method").is_none()
                    && (message.get("result").is_some() || message.get("error").is_some());
                if is_response
                    && let Some(id) = message.get("id")
                    && expired.remove(&id_key(id))
                {
                    log(&format!("a late answer to request {id}, which already timed out, was dropped"));
                    continue;
                }
                let waiting = if is_response {
                    message.get("id").and_then(|id| pending.remove(&id_key(id)))
                } else {
                    None
                };
                let out = match waiting {
                    Some(Pending { rewrite, .. }) if rewrite != Rewrite::None && message.get("result").is_some() => {
                        let mut message = message;
                        if let Some(result) = message.get_mut("result") {
                            rules.rewrite(&rewrite, result);
                        }
                        message.to_string()
                    }
                    // Everything else exactly as the server wrote it.
                    _ => text,
                };
                write_line(&mut host_out, &out).await.map_err(|e| io_error(e, "host"))?;
            }
            _ = ticker.tick(), if options.timeout.is_some() && !pending.is_empty() => {
                let now = Instant::now();
                let overdue: Vec<String> = pending
                    .iter()
                    .filter(|(_, p)| p.deadline.is_some_and(|d| d <= now))
                    .map(|(id, _)| id.clone())
                    .collect();
                for key in overdue {
                    let Some(request) = pending.remove(&key) else { continue };
                    expired.insert(key.clone());
                    let id: Value = serde_json::from_str(&key).unwrap_or(Value::Null);
                    let after = options.timeout.unwrap_or_default().as_secs();
                    log(&format!("no answer to `{}` within {after}s", request.method));
                    let error = RpcError {
                        code: RpcError::INTERNAL_ERROR,
                        message: format!("the server did not answer `{}` within {after}s (mcp-resolve proxy --timeout)", request.method),
                        data: None,
                    };
                    write_line(&mut host_out, &error_response(&id, &error).to_string()).await.map_err(|e| io_error(e, "host"))?;
                }
            }
        }
    };

    match &ended {
        Ended::HostClosed => {
            drop(server_in);
            server.close(GRACE).await?;
        }
        Ended::ServerExited(status) => {
            let tail = server.stderr();
            let mut why = format!("the server `{}` exited ({status})", command_line(command));
            if let Some(last) = tail.last() {
                why.push_str(&format!("; its last line on stderr: {last}"));
            }
            for (key, request) in pending.drain() {
                let id: Value = serde_json::from_str(&key).unwrap_or(Value::Null);
                let error = RpcError {
                    code: RpcError::INTERNAL_ERROR,
                    message: format!("{why} before answering `{}`", request.method),
                    data: None,
                };
                let _ = write_line(&mut host_out, &error_response(&id, &error).to_string()).await;
            }
            server.close(GRACE).await?;
        }
    }
    Ok(ended)
}

/// What a server's real `tools/list` and the rules disagree on, as lines
/// for stderr: rules tools the server lacks, server tools the rules do not
/// describe (passed through, not resolvable), and schemas that differ.
pub fn compare(rules: &ProxyRules, listed: &[Value]) -> Vec<String> {
    let server = rules.server();
    let mut notes = Vec::new();
    let by_name: HashMap<&str, &Value> = listed
        .iter()
        .filter_map(|t| Some((t.get("name")?.as_str()?, t)))
        .collect();
    for tool in &server.tools {
        match by_name.get(tool.name.as_str()) {
            None => notes.push(format!(
                "the rules describe `{}`, which the server does not list",
                tool.name
            )),
            Some(listed) => {
                if listed.get("inputSchema") != Some(&tool.input_schema) {
                    notes.push(format!(
                        "`{}`: the server's inputSchema differs from the rules' (resolve validates against the rules')",
                        tool.name
                    ));
                }
            }
        }
    }
    for name in by_name.keys() {
        if server.tool(name).is_none() {
            notes.push(format!(
                "the server lists `{name}`, which the rules do not describe: passed through, not resolvable"
            ));
        }
    }
    notes.sort();
    notes
}

/// Reads a server's real `tools/list` through a short session of its own
/// (the server is started and stopped for it).
pub async fn probe(command: &[OsString], timeout: Duration) -> Result<Vec<Value>, UpstreamError> {
    let mut session = crate::upstream::Session::spawn(command, timeout).await?;
    let tools = session.list_tools().await;
    session.close(GRACE).await?;
    tools
}
