//! JSON-RPC 2.0 framing for a stdio server, in front of rmcp (feature
//! `rmcp`): what rmcp's stdio transport leaves unanswered is answered here,
//! as JSON-RPC 2.0 requires, and only well-formed messages reach the server.
//!
//! - a line that is not JSON: `-32700` with `"id": null`;
//! - a batch (MCP has none), or a value that is not a request, notification
//!   or response: `-32600` with `"id": null`;
//! - a request with an `id` that is not a string or an integer: `-32600`
//!   with `"id": null`;
//! - a request with `"jsonrpc"` other than `"2.0"` or a method that is not a
//!   string: `-32600` with its `id`;
//! - a request whose `params` (or `params._meta`) is not an object: `-32602`
//!   with its `id` (MCP's params are always objects);
//! - a malformed notification gets no answer (JSON-RPC never answers one)
//!   and is dropped, and so is any notification before the first request
//!   (nothing has started that it could concern; rmcp would end the session);
//! - a line over [`MAX_LINE_BYTES`]: `-32600` with `"id": null`, and the
//!   rest of the line is skipped;
//! - with [`stdio_for`] a server in the extension dialect: a `tools/resolve`
//!   request of the 2026-07-28 lifecycle whose `_meta` client capabilities
//!   are missing or do not declare the extension with a settings object
//!   (`true`, `null`): `-32021`, as the extension's table says. rmcp would
//!   answer `-32602` for capabilities that do not decode, before any handler.
//!
//! ```ignore
//! let running = server.serve(mcp_resolve_runtime::framing::stdio()).await?;
//! ```
//!
//! [`http`] (feature `http`) screens the bodies of streamable HTTP requests
//! the same way, in front of rmcp's `StreamableHttpService`.

#[cfg(feature = "http")]
pub mod http;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// The longest line read; longer ones are refused.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// What to do with one input line.
#[derive(Clone, Debug, PartialEq)]
pub enum Screened {
    /// Pass it to the server.
    Forward,
    /// Answer it with this error response; the server never sees it.
    Reply(Value),
    /// Neither: a notification that is malformed or comes too early, or a
    /// blank line.
    Drop(&'static str),
}

/// The screening of one stream: remembers whether a request has been
/// forwarded yet, and whether the session opened with `initialize`.
#[derive(Debug, Default)]
pub struct Screen {
    started: bool,
    legacy: bool,
    /// The resolve method whose client capability is checked here (the
    /// extension dialect), if any.
    resolve_method: Option<&'static str>,
}

/// The request `_meta` key of the client capabilities (protocol 2026-07-28).
const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The request `_meta` key of the protocol version (protocol 2026-07-28).
const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

fn error(id: Value, code: i64, message: &str) -> Screened {
    Screened::Reply(json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": code, "message": message },
    }))
}

impl Screen {
    /// A screen that also answers `-32021` for `method` requests whose
    /// capability metadata does not declare the extension (see the module
    /// documentation).
    pub fn checking(method: &'static str) -> Screen {
        Screen {
            resolve_method: Some(method),
            ..Screen::default()
        }
    }

    /// The screen of a server answering `resolution`'s requests (feature
    /// `rmcp`): in the
    /// extension dialect, it checks the capability metadata of resolve
    /// requests ([`Screen::checking`]).
    #[cfg(feature = "rmcp")]
    pub fn for_resolution(resolution: &crate::rmcp::ToolResolution) -> Screen {
        if resolution.dialect() == crate::Dialect::Extension {
            Screen::checking(resolution.method())
        } else {
            Screen::default()
        }
    }

    /// This screen for messages that each arrive on their own (one HTTP
    /// request each): there is no stream whose first request could be
    /// awaited, and a request is of the 2026-07-28 lifecycle when its own
    /// `_meta` says so.
    pub fn per_message(self) -> Screen {
        Screen {
            started: true,
            legacy: true,
            ..self
        }
    }

    /// Screens one line (without its newline).
    pub fn line(&mut self, line: &str) -> Screened {
        if line.trim().is_empty() {
            return Screened::Drop("a blank line");
        }
        let value: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(_) => return error(Value::Null, -32700, "Parse error: the message is not JSON"),
        };
        let Value::Object(message) = &value else {
            let why = if value.is_array() {
                "Invalid Request: batches are not supported"
            } else {
                "Invalid Request: a message is a JSON object"
            };
            return error(Value::Null, -32600, why);
        };
        let id = message.get("id");
        let valid_id = match id {
            Some(Value::String(_)) => true,
            Some(Value::Number(n)) => n.is_i64() || n.is_u64(),
            _ => false,
        };
        let has_method = message.contains_key("method");
        // A response to a request of the server's: rmcp matches it.
        if !has_method && (message.contains_key("result") || message.contains_key("error")) {
            return Screened::Forward;
        }
        if id.is_none() {
            // A notification: never answered.
            let well_formed = message.get("jsonrpc") == Some(&json!("2.0"))
                && message.get("method").is_some_and(Value::is_string)
                && message.get("params").is_none_or(Value::is_object);
            return if !well_formed {
                Screened::Drop("a malformed notification")
            } else if !self.started {
                Screened::Drop("a notification before the first request")
            } else {
                Screened::Forward
            };
        }
        if !valid_id {
            return error(
                Value::Null,
                -32600,
                "Invalid Request: `id` must be a string or an integer",
            );
        }
        let id = id.cloned().unwrap_or(Value::Null);
        if message.get("jsonrpc") != Some(&json!("2.0")) {
            return error(id, -32600, "Invalid Request: `jsonrpc` must be \"2.0\"");
        }
        if !message.get("method").is_some_and(Value::is_string) {
            return error(id, -32600, "Invalid Request: `method` must be a string");
        }
        match message.get("params") {
            None => {}
            Some(Value::Object(params)) if params.get("_meta").is_some_and(|m| !m.is_object()) => {
                return error(
                    id,
                    -32602,
                    "Invalid params: `params._meta` must be an object",
                );
            }
            Some(Value::Object(_)) => {}
            Some(_) => return error(id, -32602, "Invalid params: `params` must be an object"),
        }
        if !self.started {
            self.started = true;
            self.legacy = message.get("method") == Some(&json!("initialize"));
        }
        if let Some(method) = self.resolve_method
            && message.get("method") == Some(&json!(method))
            && !self.declares_extension(message.get("params"))
        {
            return Screened::Reply(json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {
                    "code": -32021,
                    "message": "Missing required client capability",
                    "data": { "requiredCapabilities": { "extensions": { crate::EXTENSION_ID: {} } } },
                },
            }));
        }
        Screened::Forward
    }
}

impl Screen {
    /// Whether a resolve request may go on to the server: a request of a
    /// session opened with `initialize` that does not say it is 2026-07-28
    /// (the server checks the session's capabilities), or one whose `_meta`
    /// client capabilities declare the extension with an object.
    fn declares_extension(&self, params: Option<&Value>) -> bool {
        let meta = params.and_then(|p| p.get("_meta"));
        let modern = !self.legacy
            || meta
                .and_then(|m| m.get(PROTOCOL_VERSION))
                .and_then(Value::as_str)
                .is_some_and(|v| v >= "2026-07-28");
        if !modern {
            return true;
        }
        meta.and_then(|m| m.get(CLIENT_CAPABILITIES))
            .and_then(|c| c.get("extensions"))
            .and_then(|e| e.get(crate::EXTENSION_ID))
            .is_some_and(Value::is_object)
    }
}

/// Screens `input` into the returned server side, and merges the server's
/// output with the answers of the screen into `output`, one line at a time.
/// Spawns two tasks on the current tokio runtime; both end when `input`
/// ends and the server has closed its output.
pub fn guard<R, W>(input: R, output: W, screen: Screen) -> (DuplexStream, DuplexStream)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (server_in, mut to_server) = tokio::io::duplex(1 << 16);
    let (from_server, server_out) = tokio::io::duplex(1 << 16);
    let (replies, mut replies_rx) = mpsc::unbounded_channel::<String>();

    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        let mut screen = screen;
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match read_line(&mut input, &mut buf).await {
                Ok(Line::Eof) | Err(_) => break,
                Ok(Line::TooLong) => {
                    let _ = replies.send(line_of(&json!({
                        "jsonrpc": "2.0",
                        "id": null,
                        "error": { "code": -32600, "message": "Invalid Request: the line is too long" },
                    })));
                }
                Ok(Line::Complete) => {
                    // JSON text is UTF-8: anything else is a parse error,
                    // never forwarded with replacement characters.
                    let Ok(text) = std::str::from_utf8(&buf) else {
                        let _ = replies.send(line_of(&json!({
                            "jsonrpc": "2.0",
                            "id": null,
                            "error": { "code": -32700, "message": "Parse error: the line is not UTF-8" },
                        })));
                        continue;
                    };
                    let text = text.trim_end_matches(['\n', '\r']);
                    match screen.line(text) {
                        Screened::Forward => {
                            let mut bytes = text.as_bytes().to_vec();
                            bytes.push(b'\n');
                            if to_server.write_all(&bytes).await.is_err() {
                                break;
                            }
                        }
                        Screened::Reply(answer) => {
                            let _ = replies.send(line_of(&answer));
                        }
                        Screened::Drop(_) => {}
                    }
                }
            }
        }
        // End of input: the server sees it and finishes.
        let _ = to_server.shutdown().await;
    });

    tokio::spawn(async move {
        let mut output = output;
        let mut from_server = BufReader::new(from_server).lines();
        let mut replies_open = true;
        loop {
            tokio::select! {
                line = from_server.next_line() => match line {
                    Ok(Some(line)) => {
                        if write(&mut output, &line).await.is_err() {
                            break;
                        }
                    }
                    _ => break,
                },
                reply = replies_rx.recv(), if replies_open => match reply {
                    Some(reply) => {
                        if write(&mut output, &reply).await.is_err() {
                            break;
                        }
                    }
                    None => replies_open = false,
                },
            }
        }
        while let Ok(reply) = replies_rx.try_recv() {
            let _ = write(&mut output, &reply).await;
        }
        let _ = output.flush().await;
    });

    (server_in, server_out)
}

/// [`guard`] over the process's stdin and stdout: pass the result to rmcp's
/// `serve`.
pub fn stdio() -> (DuplexStream, DuplexStream) {
    guard(tokio::io::stdin(), tokio::io::stdout(), Screen::default())
}

/// [`stdio`] for a server answering `resolution`'s requests (feature `rmcp`): in the
/// extension dialect, resolve requests whose capability metadata does not
/// declare the extension get `-32021` here (see the module documentation).
#[cfg(feature = "rmcp")]
pub fn stdio_for(resolution: &crate::rmcp::ToolResolution) -> (DuplexStream, DuplexStream) {
    guard(
        tokio::io::stdin(),
        tokio::io::stdout(),
        Screen::for_resolution(resolution),
    )
}

fn line_of(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

async fn write<W: AsyncWrite + Unpin>(output: &mut W, line: &str) -> std::io::Result<()> {
    output.write_all(line.as_bytes()).await?;
    output.write_all(b"\n").await?;
    output.flush().await
}

/// What [`read_line`] read.
#[derive(Debug)]
pub enum Line {
    /// A line, in the buffer (with its newline, if it had one).
    Complete,
    /// A line longer than the limit, read to its end and discarded.
    TooLong,
    /// The end of the input.
    Eof,
}

/// Reads one line into `buf`, at most [`MAX_LINE_BYTES`]; a longer line is
/// read to its end and discarded.
pub async fn read_line<R: AsyncBufReadExt + Unpin>(
    input: &mut R,
    buf: &mut Vec<u8>,
) -> std::io::Result<Line> {
    read_line_within(input, buf, MAX_LINE_BYTES).await
}

/// [`read_line`] with a limit of `max` bytes; memory stays bounded by
/// `max` plus the reader's buffer, however long the line.
pub async fn read_line_within<R: AsyncBufReadExt + Unpin>(
    input: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    let mut too_long = false;
    loop {
        let chunk = input.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(if too_long {
                Line::TooLong
            } else if buf.is_empty() {
                Line::Eof
            } else {
                Line::Complete
            });
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if !too_long {
            if buf.len() + take > max {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
        }
        input.consume(take);
        if done {
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Complete
            });
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn code(s: &Screened) -> (i64, Value) {
        match s {
            Screened::Reply(v) => (v["error"]["code"].as_i64().unwrap(), v["id"].clone()),
            other => panic!("not a reply: {other:?}"),
        }
    }

    #[test]
    fn every_malformed_request_is_answered_with_its_id() {
        let mut s = Screen::default();
        assert_eq!(code(&s.line("not json")), (-32700, Value::Null));
        assert_eq!(code(&s.line("[1, 2]")), (-32600, Value::Null));
        assert_eq!(code(&s.line("42")), (-32600, Value::Null));
        assert_eq!(
            code(&s.line(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"x"}"#)),
            (-32600, Value::Null)
        );
        assert_eq!(
            code(&s.line(r#"{"jsonrpc":"1.0","id":2,"method":"tools/list"}"#)),
            (-32600, json!(2))
        );
        assert_eq!(
            code(&s.line(r#"{"jsonrpc":"2.0","id":"a","method":7}"#)),
            (-32600, json!("a"))
        );
        for params in [r#"[]"#, r#""x""#, r#"{"_meta":[]}"#] {
            let line =
                format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{params}}}"#);
            assert_eq!(code(&s.line(&line)), (-32602, json!(3)), "{line}");
        }
    }

    #[test]
    fn notifications_are_never_answered_and_wait_for_the_first_request() {
        let mut s = Screen::default();
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert!(matches!(s.line(note), Screened::Drop(_)));
        assert!(matches!(
            s.line(r#"{"jsonrpc":"2.0","method":"n","params":[]}"#),
            Screened::Drop(_)
        ));
        assert_eq!(
            s.line(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#),
            Screened::Forward
        );
        assert_eq!(s.line(note), Screened::Forward);
        assert_eq!(
            s.line(r#"{"jsonrpc":"2.0","id":9,"result":{}}"#),
            Screened::Forward
        );
        assert!(matches!(s.line("   "), Screened::Drop(_)));
    }

    #[test]
    fn resolve_requests_without_the_declared_extension_get_32021() {
        let resolve = |meta: Value| {
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/resolve",
                   "params": {"name": "t", "arguments": {}, "_meta": meta}})
            .to_string()
        };
        let caps = |ext: Value| {
            json!({PROTOCOL_VERSION: "2026-07-28",
                   CLIENT_CAPABILITIES: {"extensions": {crate::EXTENSION_ID: ext}}})
        };
        let mut s = Screen::checking("tools/resolve");
        assert_eq!(
            code(&s.line(&resolve(json!({PROTOCOL_VERSION: "2026-07-28"})))).0,
            -32021
        );
        assert_eq!(code(&s.line(&resolve(caps(json!(true))))).0, -32021);
        assert_eq!(code(&s.line(&resolve(caps(Value::Null)))).0, -32021);
        assert_eq!(s.line(&resolve(caps(json!({})))), Screened::Forward);
        // Non-empty settings decode; the server answers -32021 itself.
        assert_eq!(s.line(&resolve(caps(json!({"x": 1})))), Screened::Forward);
        // Other methods, and screens without the check, pass.
        let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{}}}"#;
        assert_eq!(s.line(list), Screened::Forward);
        let mut plain = Screen::default();
        assert_eq!(plain.line(&resolve(json!({}))), Screened::Forward);
        // A legacy session: the server checks the capabilities of `initialize`.
        let mut legacy = Screen::checking("tools/resolve");
        legacy.line(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#);
        assert_eq!(legacy.line(&resolve(json!({}))), Screened::Forward);
        assert_eq!(
            code(&legacy.line(&resolve(json!({PROTOCOL_VERSION: "2026-07-28"})))).0,
            -32021
        );
    }

    #[tokio::test]
    async fn answers_and_server_output_share_the_output_line_by_line() {
        let input: &[u8] =
            b"garbage\n\"\xff\xfe\"\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\n";
        let (out_w, out_r) = tokio::io::duplex(1 << 16);
        let (server_in, mut server_out) = guard(input, out_w, Screen::default());
        // The server echoes what it gets as a result.
        let mut lines = BufReader::new(server_in).lines();
        let got = lines.next_line().await.unwrap().unwrap();
        assert_eq!(got, r#"{"jsonrpc":"2.0","id":1,"method":"m"}"#);
        assert!(lines.next_line().await.unwrap().is_none(), "input ended");
        server_out
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n")
            .await
            .unwrap();
        drop(server_out);
        let mut out = BufReader::new(out_r).lines();
        let mut seen = Vec::new();
        while let Some(line) = out.next_line().await.unwrap() {
            seen.push(serde_json::from_str::<Value>(&line).unwrap());
        }
        assert_eq!(seen.len(), 3, "{seen:?}");
        let parse_errors = seen
            .iter()
            .filter(|v| v["error"]["code"] == json!(-32700) && v["id"].is_null())
            .count();
        assert_eq!(parse_errors, 2, "not JSON, and not UTF-8: {seen:?}");
        assert!(seen.iter().any(|v| v["result"] == json!({})));
    }

    #[tokio::test]
    async fn an_overlong_line_is_refused_and_skipped() {
        let mut input = vec![b'x'; MAX_LINE_BYTES + 10];
        input.push(b'\n');
        input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\n");
        let mut reader = BufReader::new(&input[..]);
        let mut buf = Vec::new();
        assert!(matches!(
            read_line(&mut reader, &mut buf).await.unwrap(),
            Line::TooLong
        ));
        buf.clear();
        assert!(matches!(
            read_line(&mut reader, &mut buf).await.unwrap(),
            Line::Complete
        ));
        assert!(buf.starts_with(b"{\"jsonrpc\""));
    }
}
