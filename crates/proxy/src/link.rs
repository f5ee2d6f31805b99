//! The server side of a proxy session, as lines each way: a child process
//! over its stdio, or a streamable HTTP endpoint whose answers (JSON bodies
//! and event streams, many open at once) are read into one channel.

use std::ffi::OsString;
use std::time::Duration;

use mcp_resolve_runtime::RpcError;
use mcp_resolve_runtime::framing::{Line, LineBuf};
use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::io::{AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::ChildStdin;
use tokio::sync::mpsc;

use crate::log;
pub(crate) use crate::session::Input;
use crate::upstream::http::{Answer, Endpoint, Events, message_headers, next_data};
use crate::upstream::{StdioTransport, UpstreamError, command_line, excerpt, stderr_tail};
use mcp_resolve_protocol::{Envelope, Raw, error_response, id_key};

/// How long the server gets to exit after its stdin closes, and again after
/// `SIGTERM`; how long an HTTP server gets to answer the session's `DELETE`.
pub(crate) const GRACE: Duration = Duration::from_secs(2);

/// Where the server is.
#[derive(Clone, Debug)]
pub enum Upstream {
    /// A command started as a child, spoken to over its stdio.
    Command(Vec<OsString>),
    /// A streamable HTTP endpoint, and the headers the proxy sends it
    /// (its own credential, never the host's).
    Url(String, crate::upstream::UpstreamHeaders),
}

impl Upstream {
    /// The server as a user names it.
    pub fn describe(&self) -> String {
        match self {
            Upstream::Command(command) => format!("`{}`", command_line(command)),
            Upstream::Url(url, _) => format!("at {url}"),
        }
    }
}

/// A byte stream read straight from the event loop.
pub(crate) type Stream = Box<dyn tokio::io::AsyncRead + Send + Unpin>;

/// Where one side's messages come from: a byte stream read a line at a
/// time right where they are awaited (no task and channel in between: a
/// message costs no hand-off), or a channel that other tasks fill (HTTP).
/// [`Source::recv`] is cancel-safe either way.
pub(crate) enum Source {
    Stream {
        input: BufReader<Stream>,
        lines: LineBuf,
        ended: bool,
    },
    Channel(mpsc::Receiver<Input>),
}

impl Source {
    /// `reader` line by line, each line at most `max` bytes.
    pub(crate) fn lines(reader: Stream, max: usize) -> Source {
        Source::Stream {
            input: BufReader::with_capacity(64 << 10, reader),
            lines: LineBuf::new(max),
            ended: false,
        }
    }

    /// The next message; `None` at the end of the input, and after it.
    pub(crate) async fn recv(&mut self) -> Option<Input> {
        match self {
            Source::Channel(channel) => channel.recv().await,
            Source::Stream { ended: true, .. } => None,
            Source::Stream {
                input,
                lines,
                ended,
            } => {
                let read = lines.next(input).await;
                let input = input_of(lines, read);
                *ended = input.is_none();
                input
            }
        }
    }
}

/// The message a line reader read (`read`); `None` at the end of the input
/// or when it cannot be read.
pub(crate) fn input_of(lines: &mut LineBuf, read: std::io::Result<Line>) -> Option<Input> {
    match read {
        Ok(Line::Eof) | Err(_) => None,
        Ok(Line::TooLong) => Some(Input::TooLong),
        Ok(Line::Complete) => {
            // The line's own buffer becomes the message (no copy); the
            // newline it drops leaves room for the one it gets when it is
            // written on.
            let mut line = lines.take_line();
            while line.last().is_some_and(|b| matches!(b, b'\n' | b'\r')) {
                line.pop();
            }
            Some(match String::from_utf8(line) {
                Ok(text) => Input::Line(text),
                Err(_) => Input::NotUtf8,
            })
        }
    }
}

/// Writes `text` and a newline, and flushes: one write, in `text`'s own
/// buffer when it has room for the newline (a line the proxy read, passed
/// on as it was).
pub(crate) async fn write_line<W: AsyncWrite + Unpin>(
    out: &mut W,
    text: String,
) -> std::io::Result<()> {
    let mut line = text.into_bytes();
    line.push(b'\n');
    out.write_all(&line).await?;
    out.flush().await
}

/// The server, open.
pub(crate) struct Link {
    /// What the server sent, a message a line.
    pub(crate) from: Source,
    to: To,
    end: End,
}

enum To {
    Stdio(ChildStdin),
    Http(mpsc::Sender<String>),
}

enum End {
    Child(Box<StdioTransport>, String),
    Http(Endpoint),
}

impl Link {
    /// Starts the server's command, or opens its endpoint (no request is
    /// sent until the host sends one). `sessionless`: the host's requests
    /// name no session (2026-07-28), and none is taken up from the server.
    pub(crate) fn open(
        upstream: &Upstream,
        max: usize,
        sessionless: bool,
        carried: Option<Carried>,
    ) -> Result<Link, UpstreamError> {
        match upstream {
            Upstream::Command(command) => {
                // The host sees the server's stderr as it would directly.
                let mut child = StdioTransport::spawn_with(command, true)?;
                let Some((stdin, stdout)) = child.take_pipes() else {
                    return Err(UpstreamError::Protocol(
                        "the child process has no piped stdio".into(),
                    ));
                };
                Ok(Link {
                    from: Source::lines(Box::new(stdout), max),
                    to: To::Stdio(stdin),
                    end: End::Child(Box::new(child), command_line(command)),
                })
            }
            Upstream::Url(url, headers) => {
                let mut endpoint = Endpoint::with_headers_for(url, headers)?.with_max(max);
                if sessionless {
                    endpoint = endpoint.sessionless();
                }
                let (to, outbox) = mpsc::channel(64);
                let (inbox, from) = mpsc::channel(64);
                tokio::spawn(pump(endpoint.clone(), outbox, inbox, carried));
                Ok(Link {
                    from: Source::Channel(from),
                    to: To::Http(to),
                    end: End::Http(endpoint),
                })
            }
        }
    }

    /// Sends one message (a line of JSON) to the server.
    pub(crate) async fn send(&mut self, text: String) -> Result<(), String> {
        match &mut self.to {
            To::Stdio(stdin) => write_line(stdin, text).await.map_err(|e| e.to_string()),
            To::Http(to) => to
                .send(text)
                .await
                .map_err(|_| "the HTTP link is closed".to_string()),
        }
    }

    /// Why the server's side ended (its exit status, or that its output
    /// closed), with its last lines on stderr.
    pub(crate) async fn ended(&mut self) -> String {
        match &mut self.end {
            End::Child(child, command) => child_ended(child, command).await,
            End::Http(endpoint) => format!("the server at {} went away", endpoint.url()),
        }
    }

    /// Stops the server: a child's stdin is closed and its process group
    /// stopped; an HTTP session is deleted.
    pub(crate) async fn close(self) -> Result<(), UpstreamError> {
        // Nothing more is read: the server's own stream may end with the
        // session, and says nothing then.
        drop(self.from);
        drop(self.to);
        match self.end {
            End::Child(child, _) => child.close(GRACE).await,
            End::Http(endpoint) => {
                // A server that does not answer the DELETE is left to expire.
                let _ = tokio::time::timeout(GRACE, endpoint.delete()).await;
                Ok(())
            }
        }
    }
}

/// Why a child server's output ended (its exit status, or that its output
/// closed), with its last lines on stderr; `command`: its command line.
pub(crate) async fn child_ended(child: &mut StdioTransport, command: &str) -> String {
    let status = child
        .wait_exit(GRACE)
        .await
        .unwrap_or_else(|| "its stdout closed".into());
    // What it wrote just before it exited may not be read yet.
    child.stderr_read(GRACE).await;
    // The last lines, not the last line: a crashed Node server's last line
    // is its version, the error is above it.
    let lines = child.stderr();
    let last = &lines[lines.len().saturating_sub(8)..];
    format!(
        "the server `{command}` exited ({status}){}",
        stderr_tail(last)
    )
}

/// Sends the host's messages to an HTTP server, each as a `POST`, and
/// reads every answer into `inbox`. Notifications, responses and
/// `initialize` are sent in order, each after the previous one was taken;
/// other requests go at once, their answers read concurrently. After
/// `notifications/initialized`, the server's own stream (`GET`) is read too.
///
/// A `notifications/cancelled` for a 2026-07-28 request in flight closes
/// that request's answer instead of being posted (the protocol's way to
/// cancel over HTTP: the server sees its stream close); one for an older
/// request is posted, as a client does in a session. When the host side
/// goes, every answer still open is closed: the server stops the work.
async fn pump(
    endpoint: Endpoint,
    mut outbox: mpsc::Receiver<String>,
    inbox: mpsc::Sender<Input>,
    carried: Option<Carried>,
) {
    let mut listening = false;
    let mut in_flight = InFlight::default();
    // A host on stdio cannot send `Mcp-Param-*` headers: the proxy, the
    // HTTP client here, writes them from the tools' listed schemas, as a
    // client does. A host over HTTP sends its own, passed on as sent.
    let declared = carried.is_none().then(ParamDeclarations::default);
    while let Some(text) = outbox.recv().await {
        let (id, method, headers, modern, cancels) = match Envelope::of(&text) {
            Some(envelope) => {
                let modern = is_modern(envelope.params);
                let id = envelope.is_request().then(|| envelope.id.clone()).flatten();
                let mut headers = if modern {
                    message_headers(envelope.method.as_deref(), envelope.params)
                } else {
                    Default::default()
                };
                // The host's own `Mcp-Param-*` headers, as it sent them.
                if let Some(host) = id
                    .as_ref()
                    .zip(carried.as_ref())
                    .and_then(|(id, carried)| carried.take(&id_key(id)))
                    && modern
                {
                    headers.extend(host);
                }
                if let Some(declared) = &declared
                    && modern
                    && envelope.method.as_deref() == Some("tools/call")
                {
                    headers.extend(declared.headers_of(envelope.params));
                }
                let cancels = (envelope.method.as_deref() == Some("notifications/cancelled"))
                    .then(|| cancelled_request(envelope.params))
                    .flatten();
                let method = envelope.method.map(|m| m.into_owned());
                (id, method, headers, modern, cancels)
            }
            None => (None, None, Default::default(), false, None),
        };
        if let Some(request) = &cancels {
            match in_flight.cancel(request) {
                Cancel::Closed => continue,
                // No request of a session to name: nothing to tell the
                // server (the request was answered, or never sent).
                Cancel::NotInFlight if endpoint.is_sessionless() => continue,
                Cancel::NotInFlight | Cancel::Post => {}
            }
        }
        let initialize = method.as_deref() == Some("initialize");
        let exchange = exchange(
            endpoint.clone(),
            text,
            headers,
            id.clone(),
            initialize,
            inbox.clone(),
            declared
                .clone()
                .filter(|_| method.as_deref() == Some("tools/list")),
        );
        match id {
            Some(id) if !initialize => {
                let task = tokio::spawn(exchange);
                in_flight.add(id_key(&id), task, modern);
            }
            _ => exchange.await,
        }
        if method.as_deref() == Some("notifications/initialized")
            && !listening
            && endpoint.has_session()
        {
            listening = true;
            tokio::spawn(listen(endpoint.clone(), inbox.clone()));
        }
    }
    in_flight.close_all();
}

/// Headers a host sent with a request that the proxy passes on with it to
/// an HTTP server (SEP-2243's `Mcp-Param-*`, which mirror arguments the
/// tool's schema marks with `x-mcp-header`), by the proxy's id of the
/// request (its key): put by the HTTP listener, taken by the link.
#[derive(Clone, Default)]
pub(crate) struct Carried(
    std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, reqwest::header::HeaderMap>>>,
);

impl Carried {
    /// Keeps `headers` for the request the proxy knows by `key`.
    pub(crate) fn put(&self, key: String, headers: reqwest::header::HeaderMap) {
        if let Ok(mut carried) = self.0.lock() {
            carried.insert(key, headers);
        }
    }

    /// The headers kept for `key`, taken.
    pub(crate) fn take(&self, key: &str) -> Option<reqwest::header::HeaderMap> {
        self.0.lock().ok()?.remove(key)
    }
}

/// The `x-mcp-header` declarations of the tools a server listed, by tool:
/// each header's name and the path of the argument it mirrors (SEP-2243).
#[derive(Clone, Default)]
struct ParamDeclarations(std::sync::Arc<std::sync::Mutex<ByTool>>);

/// Each tool's declarations: a header's name and the argument's path.
type ByTool = std::collections::HashMap<String, Vec<(String, Vec<String>)>>;

impl ParamDeclarations {
    /// Learns the declarations of the tools in a `tools/list` answer.
    fn learn(&self, answer: &str) {
        // Most listings declare no header: nothing to read (a known tool's
        // declarations could only be taken back by a listing that has them
        // no longer, so with none known there is nothing to take back).
        if !answer.contains("x-mcp-header") && self.0.lock().is_ok_and(|known| known.is_empty()) {
            return;
        }
        let Ok(answer) = mcp_resolve_protocol::json::from_str::<Value>(answer) else {
            return;
        };
        let Some(tools) = answer.pointer("/result/tools").and_then(Value::as_array) else {
            return;
        };
        let Ok(mut known) = self.0.lock() else {
            return;
        };
        for tool in tools {
            let (Some(name), Some(schema)) = (
                tool.get("name").and_then(Value::as_str),
                tool.get("inputSchema"),
            ) else {
                continue;
            };
            let mut found = Vec::new();
            declarations(schema, &mut Vec::new(), &mut found);
            if found.is_empty() {
                known.remove(name);
            } else {
                known.insert(name.to_string(), found);
            }
        }
    }

    /// The `Mcp-Param-*` headers of a `tools/call` (its `params`): each
    /// declared argument present as a string, boolean or number, as the
    /// TypeScript SDK writes it.
    fn headers_of(&self, params: Option<Raw<'_>>) -> reqwest::header::HeaderMap {
        let mut headers = reqwest::header::HeaderMap::new();
        // No tool declares one: the call is not read.
        if self.0.lock().is_ok_and(|known| known.is_empty()) {
            return headers;
        }
        let Some(params) =
            params.and_then(|p| mcp_resolve_protocol::json::from_str::<Value>(p.get()).ok())
        else {
            return headers;
        };
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return headers;
        };
        let Ok(known) = self.0.lock() else {
            return headers;
        };
        for (header, path) in known.get(name).into_iter().flatten() {
            let mut value = params.get("arguments");
            for key in path {
                value = value.and_then(|v| v.get(key));
            }
            let text = match value {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Bool(b)) => b.to_string(),
                Some(Value::Number(n))
                    if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(f64::is_finite) =>
                {
                    n.to_string()
                }
                _ => continue,
            };
            if let (Ok(name), Ok(value)) = (
                reqwest::header::HeaderName::from_bytes(format!("mcp-param-{header}").as_bytes()),
                reqwest::header::HeaderValue::from_str(&crate::upstream::http::header_text(&text)),
            ) {
                headers.insert(name, value);
            }
        }
        headers
    }
}

/// The `x-mcp-header` declarations of a schema, on properties reached by
/// `properties` alone (where SEP-2243 allows them).
fn declarations(schema: &Value, path: &mut Vec<String>, found: &mut Vec<(String, Vec<String>)>) {
    if !path.is_empty()
        && let Some(header) = schema.get("x-mcp-header").and_then(Value::as_str)
    {
        found.push((header.to_string(), path.clone()));
    }
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (key, child) in properties {
            path.push(key.clone());
            declarations(child, path, found);
            path.pop();
        }
    }
}

/// The requests whose answers are being read, by id key: the task reading
/// each, and whether it is a 2026-07-28 request (cancelled by closing it).
#[derive(Default)]
struct InFlight(std::collections::HashMap<String, (tokio::task::JoinHandle<()>, bool)>);

impl InFlight {
    fn add(&mut self, key: String, task: tokio::task::JoinHandle<()>, modern: bool) {
        // Requests answered meanwhile leave; a reused id takes its place.
        self.0.retain(|_, (task, _)| !task.is_finished());
        if let Some((earlier, _)) = self.0.insert(key, (task, modern)) {
            // An id the host used again while its first request was still
            // open: both are read on, as a direct connection would.
            drop(earlier);
        }
    }

    /// Closes the answer of the 2026-07-28 request `key`, if it is in
    /// flight.
    fn cancel(&mut self, key: &str) -> Cancel {
        match self.0.get(key) {
            Some((task, true)) => {
                task.abort();
                self.0.remove(key);
                Cancel::Closed
            }
            Some((task, false)) if !task.is_finished() => Cancel::Post,
            _ => Cancel::NotInFlight,
        }
    }

    /// Closes every answer still open.
    fn close_all(&mut self) {
        for (_, (task, _)) in self.0.drain() {
            task.abort();
        }
    }
}

/// What a `notifications/cancelled` does to the request it names.
enum Cancel {
    /// A 2026-07-28 request: its answer was closed; nothing is posted.
    Closed,
    /// A request of a session, in flight: the cancellation is posted.
    Post,
    /// No request in flight has that id.
    NotInFlight,
}

/// Whether a message's `params` name protocol 2026-07-28 or later in
/// their `_meta`: it travels with the SEP-2243 headers, and is cancelled
/// by closing its answer.
fn is_modern(params: Option<Raw<'_>>) -> bool {
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(rename = "_meta", borrow)]
        meta: Option<&'a RawValue>,
    }
    #[derive(serde::Deserialize)]
    struct Meta<'a> {
        #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow)]
        version: Option<std::borrow::Cow<'a, str>>,
    }
    params
        .and_then(|raw| mcp_resolve_protocol::json::from_str::<Params<'_>>(raw.get()).ok())
        .and_then(|p| p.meta)
        .and_then(|raw| mcp_resolve_protocol::json::from_str::<Meta<'_>>(raw.get()).ok())
        .and_then(|m| m.version)
        .is_some_and(|v| mcp_resolve_protocol::is_stateless_version(&v))
}

/// The id key of the request a `notifications/cancelled` names.
fn cancelled_request(params: Option<Raw<'_>>) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Params {
        #[serde(rename = "requestId")]
        request: Value,
    }
    let params: Params = mcp_resolve_protocol::json::from_str(params?.get()).ok()?;
    Some(id_key(&params.request))
}

/// One `POST` and everything its answer carries. A request that gets no
/// answer (the server refused it, was unreachable, or closed its stream
/// first) is answered with an error here; a session the server no longer
/// knows (`404`) ends the link.
async fn exchange(
    endpoint: Endpoint,
    text: String,
    headers: reqwest::header::HeaderMap,
    id: Option<Value>,
    initialize: bool,
    inbox: mpsc::Sender<Input>,
    learns: Option<ParamDeclarations>,
) {
    let posted = endpoint.post(text, id.is_some(), headers).await;
    let mut exchange = Exchange {
        endpoint,
        id,
        initialize,
        inbox,
        answered: false,
        learns,
    };
    let answer = match posted {
        Ok(answer) => answer,
        Err(e) => return exchange.fail(e.to_string()).await,
    };
    let go_on = match answer {
        Answer::Accepted => true,
        Answer::Refused { status, body } => exchange.refused(status, &body).await,
        Answer::Json(body) => exchange.json(&body).await,
        Answer::Events(events) => exchange.events(events).await,
    };
    if go_on && exchange.id.is_some() && !exchange.answered {
        exchange
            .fail("the server's HTTP answer ended without a response to the request".into())
            .await;
    }
}

/// One POST to the server and what comes back for it.
struct Exchange {
    endpoint: Endpoint,
    /// The request's id (`None` for a notification or a response).
    id: Option<Value>,
    initialize: bool,
    inbox: mpsc::Sender<Input>,
    /// The response to the request has come.
    answered: bool,
    /// A `tools/list` whose tools' `x-mcp-header` declarations are learnt.
    learns: Option<ParamDeclarations>,
}

impl Exchange {
    /// Gives up on the request: an error answer for it, or a log line for
    /// a notification.
    async fn fail(&self, why: String) {
        match &self.id {
            Some(id) => {
                let error = RpcError::new(
                    RpcError::INTERNAL_ERROR,
                    format!("mcp-resolve proxy: {why}"),
                    None,
                );
                let _ = self
                    .inbox
                    .send(Input::Line(error_response(id, &error)))
                    .await;
            }
            None => log(&why),
        }
    }

    /// Passes one message of the answer on; notes the response to the
    /// request (and, for `initialize`, the protocol version it settles).
    /// `false` when the session is gone.
    async fn forward(&mut self, message: String) -> bool {
        if let Some(envelope) = Envelope::of(&message)
            && envelope.is_response()
            && envelope.id.as_ref().map(id_key) == self.id.as_ref().map(id_key)
        {
            self.answered = true;
            if let Some(declared) = &self.learns {
                declared.learn(&message);
            }
            if self.initialize
                && let Some(version) = protocol_version(&message)
            {
                self.endpoint.set_protocol_version(&version);
            }
        }
        // What comes on a request's answer belongs to that request's host.
        let input = match &self.id {
            Some(id) => Input::Related(message, id.clone()),
            None => Input::Line(message),
        };
        self.inbox.send(input).await.is_ok()
    }

    /// An error status: a JSON-RPC answer in it is still the answer; a 404
    /// for a session ends the session. `false` when nothing more is to be
    /// said.
    async fn refused(&mut self, status: reqwest::StatusCode, body: &[u8]) -> bool {
        let text = String::from_utf8_lossy(body);
        let text = text.trim();
        let responds = Envelope::of(text).is_some_and(|envelope| {
            envelope.is_response()
                && envelope.id.as_ref().map(id_key) == self.id.as_ref().map(id_key)
        });
        if responds {
            self.forward(text.to_string()).await;
            return true;
        }
        if status == reqwest::StatusCode::NOT_FOUND && self.endpoint.has_session() {
            let why = format!(
                "the server at {} ended the session (404)",
                self.endpoint.url()
            );
            let _ = self.inbox.send(Input::Ended(why)).await;
            return false;
        }
        let body = if text.is_empty() {
            String::new()
        } else {
            format!(": {}", excerpt(text))
        };
        self.fail(format!("the server answered HTTP {status}{body}"))
            .await;
        false
    }

    /// A JSON body: one message, or a batch of them, each passed on as the
    /// server wrote it.
    async fn json(&mut self, body: &[u8]) -> bool {
        // JSON text is UTF-8: anything else is skipped, never passed on
        // with replacement characters.
        let Ok(text) = std::str::from_utf8(body) else {
            log(&format!(
                "the server's HTTP answer is not UTF-8; skipped: {}",
                excerpt(&String::from_utf8_lossy(body))
            ));
            return true;
        };
        let text = text.trim();
        if text.starts_with('[') {
            match mcp_resolve_protocol::json::from_str::<Vec<&RawValue>>(text) {
                Ok(batch) => {
                    for message in batch {
                        self.forward(message.get().to_string()).await;
                    }
                }
                Err(_) => log(&format!(
                    "the server's HTTP answer is not JSON; skipped: {}",
                    excerpt(text)
                )),
            }
        } else if mcp_resolve_protocol::json::from_str::<IgnoredAny>(text).is_ok() {
            self.forward(text.to_string()).await;
        } else {
            log(&format!(
                "the server's HTTP answer is not JSON; skipped: {}",
                excerpt(text)
            ));
        }
        true
    }

    /// An event stream: each event's data passed on, until the stream ends.
    async fn events(&mut self, mut events: Events) -> bool {
        loop {
            match next_data(&mut events, self.endpoint.max()).await {
                Ok(Some(data)) => {
                    if !self.forward(data).await {
                        return false;
                    }
                }
                Ok(None) => return true,
                // A stream broken after its answer (the server ending the
                // connection, a session deleted) lost nothing.
                Err(_) if self.answered || self.inbox.is_closed() => return true,
                Err(e) => {
                    log(&e.to_string());
                    return true;
                }
            }
        }
    }
}

/// Reads the server's own event stream (`GET`) until it ends; a server that
/// offers none is fine.
async fn listen(endpoint: Endpoint, inbox: mpsc::Sender<Input>) {
    let mut events = match endpoint.listen().await {
        Ok(Some(events)) => events,
        Ok(None) => return,
        // The session ended before the stream opened.
        Err(_) if !endpoint.has_session() => return,
        Err(e) => {
            log(&format!("the server's own event stream is not open: {e}"));
            return;
        }
    };
    loop {
        match next_data(&mut events, endpoint.max()).await {
            Ok(Some(data)) => {
                if inbox.send(Input::Line(data)).await.is_err() {
                    return;
                }
            }
            Ok(None) => return,
            // A stream the server ends as the session is deleted is no news.
            Err(_) if inbox.is_closed() || !endpoint.has_session() => return,
            Err(e) => {
                log(&e.to_string());
                return;
            }
        }
    }
}

/// `result.protocolVersion` of an `initialize` response.
fn protocol_version(response: &str) -> Option<String> {
    let value: Value = mcp_resolve_protocol::json::from_str(response).ok()?;
    Some(
        value
            .get("result")?
            .get("protocolVersion")?
            .as_str()?
            .to_string(),
    )
}
