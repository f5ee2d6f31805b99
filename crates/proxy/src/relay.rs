//! The relay of one host on stdio to one server: the session loop that the
//! stdio transport and each HTTP session run (see the crate documentation).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use mcp_resolve_runtime::framing::{Screen, Screened};
use mcp_resolve_runtime::{Dialect, RpcError};
use serde_json::{Value, json};
use tokio::io::AsyncWrite;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::consent::{Retry, Tickets};
use crate::envelope::{Envelope, error_line, id_key};
use crate::guard::{Guard, Judged};
pub use crate::link::Upstream;
use crate::link::{GRACE, Input, Link, read_lines, write_line};
use crate::policy::Decision;
pub use crate::rules::{ProxyRules, Rewrite};
use crate::upstream::{UpstreamError, excerpt};

/// The proxy's settings.
#[derive(Clone, Debug)]
pub struct Options {
    /// How long a forwarded request may wait for the server's answer;
    /// `None`: forever.
    pub timeout: Option<Duration>,
    /// The largest message read from either side.
    pub max_message_bytes: usize,
    /// Argument checks, policy and audit of `tools/call`.
    pub guard: Arc<Guard>,
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
    /// A `tools/call`, for its audit line.
    call: Option<CallAudit>,
    /// A 2026-07-28 `tools/call` the user accepted: its tool and
    /// arguments, should the server ask a question of its own.
    consent: Option<(String, Value)>,
}

/// What the audit line of a forwarded `tools/call` needs.
struct CallAudit {
    judged: Judged,
    started: Instant,
    arguments: Option<Value>,
    /// `forwarded`, or `accepted` after the user was asked.
    outcome: &'static str,
}

/// A `tools/call` held while the user is asked about it.
struct Held {
    text: String,
    id: Value,
    judged: Judged,
    arguments: Option<Value>,
    /// When the question is given up (`--ask-timeout`).
    deadline: Instant,
}

/// The forwarded requests of a session, and the calls held while the user
/// is asked (by the id of the question). Calls still unanswered when the
/// session ends — however it ends, the proxy's task dropped on `SIGTERM`
/// included — get their audit line then.
struct Pendings<'g> {
    map: HashMap<String, Pending>,
    asks: HashMap<String, Held>,
    guard: &'g Guard,
}

impl Pendings<'_> {
    fn audit(&self, call: &CallAudit, outcome: &str, answered: bool) {
        if let Some(audit) = &self.guard.audit {
            let latency = answered.then(|| call.started.elapsed());
            audit.write(
                &call
                    .judged
                    .record(outcome, latency, call.arguments.as_ref()),
            );
        }
    }
}

impl Drop for Pendings<'_> {
    fn drop(&mut self) {
        let Some(audit) = &self.guard.audit else {
            return;
        };
        for (_, pending) in self.map.drain() {
            if let Some(call) = &pending.call {
                audit.write(
                    &call
                        .judged
                        .record("unanswered", None, call.arguments.as_ref()),
                );
            }
        }
        for (_, held) in self.asks.drain() {
            audit.write(&held.judged.record("unasked", None, held.arguments.as_ref()));
        }
    }
}

impl std::ops::Deref for Pendings<'_> {
    type Target = HashMap<String, Pending>;
    fn deref(&self) -> &Self::Target {
        &self.map
    }
}

impl std::ops::DerefMut for Pendings<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.map
    }
}

/// The request `text` with its `params` replaced.
fn with_params(text: &str, params: Value) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(mut message)) => {
            message.insert("params".into(), params);
            Value::Object(message).to_string()
        }
        _ => text.to_string(),
    }
}

/// The proxy's own reading of the server's tools after
/// `notifications/tools/list_changed`: its `tools/list` requests (a page
/// at a time), and the notification held back from the host until the
/// listing is read.
struct Relist {
    /// Which reading this is (request ids are `mcp-resolve-list-N-P`).
    n: u64,
    /// The page asked for last.
    page: u32,
    /// Another change was announced while this one was read.
    again: bool,
    held: String,
    meta: Option<Value>,
    wait: Duration,
    deadline: Instant,
}

impl Relist {
    /// The most pages read in one listing (a server whose cursors never
    /// end is not followed for ever).
    const MOST_PAGES: u32 = 1000;

    fn start(
        n: u64,
        notification: String,
        meta: Option<&Value>,
        timeout: Option<Duration>,
    ) -> Relist {
        let wait = timeout.unwrap_or(Duration::from_secs(30));
        Relist {
            n,
            page: 0,
            again: false,
            held: notification,
            meta: meta.cloned(),
            wait,
            deadline: Instant::now() + wait,
        }
    }

    fn id(&self) -> String {
        format!("mcp-resolve-list-{}-{}", self.n, self.page)
    }

    fn key(&self) -> String {
        id_key(&Value::String(self.id()))
    }

    /// The request for the current page, at `cursor`.
    fn request(&self, cursor: Option<&str>) -> String {
        let mut params = serde_json::Map::new();
        if let Some(cursor) = cursor {
            params.insert("cursor".into(), Value::String(cursor.into()));
        }
        if let Some(meta) = &self.meta {
            params.insert("_meta".into(), meta.clone());
        }
        json!({"jsonrpc": "2.0", "id": self.id(), "method": "tools/list", "params": params})
            .to_string()
    }

    /// The request that goes on after a page (the next page, or the list
    /// from the start when another change was announced meanwhile), or
    /// `None` when the listing is read.
    fn next(&mut self, cursor: Option<String>) -> Option<String> {
        let cursor = cursor.filter(|_| self.page + 1 < Self::MOST_PAGES);
        if cursor.is_none() && !self.again {
            return None;
        }
        if cursor.is_none() {
            self.again = false;
        }
        self.page += 1;
        self.deadline = Instant::now() + self.wait;
        Some(self.request(cursor.as_deref()))
    }
}

/// Remembers the static annotations a `tools/list` result lists (defaults
/// applied), for calls to tools the rules do not describe.
fn remember_listing(
    listed: &mut HashMap<String, mcp_resolve_runtime::Annotations>,
    result: &Value,
) {
    let Some(Value::Array(tools)) = result.get("tools") else {
        return;
    };
    for tool in tools {
        if let Some(name) = tool.get("name").and_then(Value::as_str) {
            let annotations = tool
                .get("annotations")
                .and_then(|a| serde_json::from_value(a.clone()).ok())
                .unwrap_or_else(mcp_resolve_runtime::Annotations::defaults);
            listed.insert(name.to_string(), annotations);
        }
    }
}

/// Where the proxy's messages for the host go: a line each.
pub(crate) trait HostSink {
    /// Delivers one message; an error ends the session.
    async fn deliver(&mut self, line: String) -> std::io::Result<()>;
}

/// A host on a byte stream (stdio): a message a line.
struct Lines<W>(W);

impl<W: AsyncWrite + Unpin> HostSink for Lines<W> {
    async fn deliver(&mut self, line: String) -> std::io::Result<()> {
        write_line(&mut self.0, &line).await
    }
}

/// The boxed halves of a host's byte stream.
pub type HostIo = (
    Box<dyn tokio::io::AsyncRead + Send + Unpin>,
    Box<dyn AsyncWrite + Send + Unpin>,
);

/// The proxy's stdin and stdout. A pipe or a socket (what hosts give the
/// servers they start) is read and written without blocking, straight from
/// the event loop; anything else (a file, a terminal) goes through tokio's
/// blocking pool, which costs a thread hand-off per message.
pub fn host_stdio() -> HostIo {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let input = std::io::stdin().as_fd().try_clone_to_owned().ok().and_then(
            |fd| -> Option<Box<dyn tokio::io::AsyncRead + Send + Unpin>> {
                match tokio::net::unix::pipe::Receiver::from_owned_fd(fd.try_clone().ok()?) {
                    Ok(pipe) => Some(Box::new(pipe)),
                    Err(_) => Some(Box::new(socket(fd)?)),
                }
            },
        );
        let output = std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .and_then(|fd| -> Option<Box<dyn AsyncWrite + Send + Unpin>> {
                match tokio::net::unix::pipe::Sender::from_owned_fd(fd.try_clone().ok()?) {
                    Ok(pipe) => Some(Box::new(pipe)),
                    Err(_) => Some(Box::new(socket(fd)?)),
                }
            });
        (
            input.unwrap_or_else(|| Box::new(tokio::io::stdin())),
            output.unwrap_or_else(|| Box::new(tokio::io::stdout())),
        )
    }
    #[cfg(not(unix))]
    {
        (Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout()))
    }
}

/// `fd` as a non-blocking tokio socket, when it is a Unix socket.
#[cfg(unix)]
fn socket(fd: std::os::fd::OwnedFd) -> Option<tokio::net::UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(fd);
    // Only a socket has a socket type; a file or a terminal fails here.
    stream.local_addr().ok()?;
    stream.set_nonblocking(true).ok()?;
    tokio::net::UnixStream::from_std(stream).ok()
}

/// Logs one line on stderr.
pub(crate) fn log(message: &str) {
    eprintln!("mcp-resolve proxy: {message}");
}

/// One proxy session between a host on a byte stream (`host_in`,
/// `host_out`: stdio) and the server, until either side ends.
pub async fn run<R, W>(
    rules: &ProxyRules,
    options: &Options,
    upstream: &Upstream,
    host_in: R,
    host_out: W,
) -> Result<Ended, UpstreamError>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin,
{
    let link = Link::open(upstream, options.max_message_bytes, false)?;
    let from_host = read_lines(host_in, options.max_message_bytes);
    relay(rules, options, link, from_host, &mut Lines(host_out), false).await
}

/// The session itself: messages from the host (`from_host`) to the server
/// (`link`) and back, with what the proxy owns answered or rewritten.
/// `per_message`: the host's messages each arrive on their own (HTTP
/// requests that name no session), not on one stream.
pub(crate) async fn relay<S: HostSink>(
    rules: &ProxyRules,
    options: &Options,
    mut link: Link,
    mut from_host: mpsc::Receiver<Input>,
    host: &mut S,
    per_message: bool,
) -> Result<Ended, UpstreamError> {
    let mut screen = if rules.dialect() == Dialect::Extension {
        Screen::checking(rules.method())
    } else {
        Screen::default()
    };
    if per_message {
        screen = screen.per_message();
    }
    let guard: &Guard = &options.guard;
    let mut pending = Pendings {
        map: HashMap::new(),
        asks: HashMap::new(),
        guard,
    };
    let mut questions = 0u64;
    // Questions asked in 2026-07-28 requests, by their `requestState`.
    let mut tickets = Tickets::new(guard.ask_timeout);
    // The proxy's own `tools/list` after the server announced a change.
    let mut relist: Option<Relist> = None;
    let mut relists = 0u64;
    // The `_meta` of the host's last `tools/list`, for the proxy's own.
    let mut list_meta: Option<Value> = None;
    // What the pin found in the server's listings.
    let mut pins = crate::guard::PinState::default();
    // The static annotations the server listed, by tool.
    let mut listed: HashMap<String, mcp_resolve_runtime::Annotations> = HashMap::new();
    // Requests the host already got a timeout error for: a late answer is
    // dropped (a second response to one id would break JSON-RPC).
    let mut expired: HashSet<String> = HashSet::new();
    // The capabilities the host declared at `initialize` (legacy sessions).
    let mut session_caps: Option<Value> = None;
    let mut ticker = tokio::time::interval(Duration::from_millis(250));
    let io_error = |e: std::io::Error| UpstreamError::Io {
        context: "cannot write to the host".into(),
        source: e,
    };

    let ended = loop {
        tokio::select! {
            input = from_host.recv() => {
                let text = match input {
                    None | Some(Input::Ended(_)) => break Ended::HostClosed,
                    Some(Input::TooLong) => {
                        let error = RpcError::new(-32600, format!("Invalid Request: the message is larger than {} bytes", options.max_message_bytes), None);
                        host.deliver(error_line(&Value::Null, &error)).await.map_err(io_error)?;
                        continue;
                    }
                    Some(Input::NotUtf8) => {
                        let error = RpcError::new(-32700, "Parse error: the line is not UTF-8", None);
                        host.deliver(error_line(&Value::Null, &error)).await.map_err(io_error)?;
                        continue;
                    }
                    Some(Input::Line(text)) => text,
                };
                match screen.line(&text) {
                    Screened::Drop(_) => continue,
                    Screened::Reply(answer) => {
                        host.deliver(answer.to_string()).await.map_err(io_error)?;
                        continue;
                    }
                    Screened::Forward => {}
                }
                let Some(message) = Envelope::of(&text) else {
                    continue; // the screen forwards only JSON objects
                };
                // The user's answer to a question about a held call.
                if message.is_response()
                    && let Some(held) = message.id.as_ref().and_then(|id| pending.asks.remove(&id_key(id)))
                {
                    let action = serde_json::from_str::<Value>(&text).ok().and_then(|answer| {
                        answer.pointer("/result/action").and_then(Value::as_str).map(str::to_string)
                    });
                    if action.as_deref() == Some("accept") {
                        pending.insert(id_key(&held.id), Pending {
                            method: "tools/call".into(),
                            rewrite: Rewrite::None,
                            deadline: options.timeout.map(|t| Instant::now() + t),
                            call: Some(CallAudit {
                                judged: held.judged,
                                started: Instant::now(),
                                arguments: held.arguments,
                                outcome: "accepted",
                            }),
                            consent: None,
                        });
                        if let Err(e) = link.send(&held.text).await {
                            log(&format!("cannot write to the server: {e}"));
                        }
                    } else {
                        let (outcome, why) = match action.as_deref() {
                            Some("decline") => ("declined", "was declined by the user"),
                            Some("cancel") => ("cancelled", "was cancelled by the user"),
                            _ => ("unconfirmed", "was not confirmed (the host answered the question with an error)"),
                        };
                        if let Some(audit) = &guard.audit {
                            audit.write(&held.judged.record(outcome, None, held.arguments.as_ref()));
                        }
                        host.deliver(error_line(&held.id, &held.judged.refusal(why))).await.map_err(io_error)?;
                    }
                    continue;
                }
                // An answer to a question already given up.
                if message.is_response()
                    && message.id.as_ref().and_then(Value::as_str).is_some_and(|id| id.starts_with(crate::consent::ASK_PREFIX))
                {
                    log("the host answered a question that had timed out; the answer was dropped");
                    continue;
                }
                let mut call = None;
                let mut consent = None;
                // The call as forwarded, when it differs from the host's.
                let mut rewritten = None;
                if let (Some("tools/call"), Some(id)) = (message.method.as_deref(), message.id.as_ref()) {
                    let params = message.params();
                    let tool = params.as_ref().and_then(|p| p.get("name")).and_then(Value::as_str);
                    if let Some(why) = tool.and_then(|tool| guard.unpinned(&pins, tool)) {
                        let error = RpcError::new(crate::guard::POLICY_REFUSED, format!("{why} (mcp-resolve proxy --pin)"), Some(json!({"tool": tool, "pinned": false})));
                        if let Some(audit) = &guard.audit {
                            audit.write(&json!({"time": crate::guard::now(), "event": "call", "tool": tool, "outcome": "not pinned", "reason": why}));
                        }
                        host.deliver(error_line(id, &error)).await.map_err(io_error)?;
                        continue;
                    }
                    let judged = match guard.judge(rules, &listed, params.as_ref()) {
                        Ok(judged) => judged,
                        Err(error) => {
                            host.deliver(error_line(id, &error)).await.map_err(io_error)?;
                            continue;
                        }
                    };
                    let arguments = guard
                        .audit_arguments
                        .then(|| params.as_ref().and_then(|p| p.get("arguments")).cloned())
                        .flatten();
                    let mut outcome = "forwarded";
                    let may_elicit = crate::consent::may_elicit(params.as_ref(), session_caps.as_ref());
                    let refusal = match judged.decision {
                        Decision::Allow => None,
                        Decision::Deny => Some(("denied", "is denied")),
                        // A 2026-07-28 request: the question is the answer,
                        // and the retry carries the user's.
                        Decision::Ask if crate::consent::is_stateless(params.as_ref()) => {
                            let params = params.clone().unwrap_or_default();
                            let called = params.get("arguments").cloned().unwrap_or_else(|| json!({}));
                            match tickets.retry(&params, &judged.tool, &called) {
                                Retry::Forward(forward) => {
                                    rewritten = Some(with_params(&text, forward));
                                    consent = Some((judged.tool.clone(), called));
                                    outcome = "accepted";
                                    None
                                }
                                Retry::Refuse(outcome, why) => Some((outcome, why)),
                                Retry::Fresh if may_elicit => {
                                    let result = tickets.ask(&judged, &called);
                                    if let Some(audit) = &guard.audit {
                                        audit.write(&judged.record("asked", None, arguments.as_ref()));
                                    }
                                    host.deliver(format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)).await.map_err(io_error)?;
                                    continue;
                                }
                                Retry::Fresh => Some(("refused", crate::consent::NO_ELICITATION)),
                            }
                        }
                        Decision::Ask if may_elicit => {
                            questions += 1;
                            let question = format!("{}{questions}", crate::consent::ASK_PREFIX);
                            host.deliver(crate::consent::ask_request(&question, &judged)).await.map_err(io_error)?;
                            let deadline = Instant::now() + guard.ask_timeout;
                            pending.asks.insert(id_key(&json!(question)), Held { text, id: id.clone(), judged, arguments, deadline });
                            continue;
                        }
                        Decision::Ask => Some(("refused", crate::consent::NO_ELICITATION)),
                    };
                    if let Some((outcome, why)) = refusal {
                        if let Some(audit) = &guard.audit {
                            audit.write(&judged.record(outcome, None, arguments.as_ref()));
                        }
                        host.deliver(error_line(id, &judged.refusal(why))).await.map_err(io_error)?;
                        continue;
                    }
                    call = Some(CallAudit { judged, started: Instant::now(), arguments, outcome });
                }
                match (message.method.as_deref(), message.id.as_ref()) {
                    (Some(method), Some(id)) => {
                        let owned = method == rules.method() || method == crate::rules::SIGNATURE_METHOD;
                        let params = match method {
                            "initialize" | "server/discover" | "tools/list" => message.params(),
                            _ if owned => message.params(),
                            _ => None,
                        };
                        if owned && let Some(answer) = rules.answer(method, params.as_ref(), session_caps.as_ref()) {
                            if let Some(audit) = &guard.audit
                                && method == rules.method()
                                && answer.is_ok()
                            {
                                let (tool, resolution) = rules.resolution(params.as_ref());
                                let arguments = guard
                                    .audit_arguments
                                    .then(|| params.as_ref().and_then(|p| p.get("arguments")))
                                    .flatten();
                                audit.write(&crate::guard::resolve_record(&tool, resolution.as_ref().copied(), arguments));
                            }
                            // The result text is spliced in as computed at start.
                            let response = match answer {
                                Ok(result) => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
                                Err(error) => error_line(id, &error),
                            };
                            host.deliver(response).await.map_err(io_error)?;
                            continue;
                        }
                        let rewrite = match method {
                            "initialize" => {
                                session_caps = params.as_ref().and_then(|p| p.get("capabilities")).cloned();
                                Rewrite::Capabilities
                            }
                            "server/discover" => Rewrite::Capabilities,
                            "tools/list" => {
                                list_meta = params.as_ref().and_then(|p| p.get("_meta")).cloned();
                                Rewrite::Tools { marked: rules.may_mark(params.as_ref(), session_caps.as_ref()) }
                            }
                            _ => Rewrite::None,
                        };
                        pending.insert(id_key(id), Pending {
                            method: method.to_string(),
                            rewrite,
                            deadline: options.timeout.map(|t| Instant::now() + t),
                            call: call.take(),
                            consent: consent.take(),
                        });
                    }
                    (Some("notifications/cancelled"), None) => {
                        if let Some(id) = message.params().as_ref().and_then(|p| p.get("requestId"))
                            && let Some(request) = pending.remove(&id_key(id))
                            && let Some(call) = &request.call
                        {
                            pending.audit(call, "withdrawn", false);
                        }
                    }
                    _ => {}
                }
                // Passed on exactly as the host wrote it (an accepted
                // 2026-07-28 call without the proxy's question and state).
                if let Err(e) = link.send(rewritten.as_deref().unwrap_or(&text)).await {
                    log(&format!("cannot write to the server: {e}"));
                }
            }
            input = link.from.recv() => {
                let text = match input {
                    None => break Ended::ServerExited(link.ended().await),
                    Some(Input::Ended(why)) => break Ended::ServerExited(why),
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
                let Some(message) = Envelope::of(&text) else {
                    log(&format!("the server wrote something that is not JSON-RPC; skipped: {}", excerpt(&text)));
                    continue;
                };
                // The server announced a new list: the proxy reads it before
                // the host hears of it, so the pin and the policy judge the
                // calls that follow by what the server lists now.
                if guard.watches() && message.id.is_none() && message.method.as_deref() == Some("notifications/tools/list_changed") {
                    match &mut relist {
                        // One notice is held; more only mean the list is
                        // read again (a server that repeats them cannot
                        // grow what the proxy holds).
                        Some(listing) => listing.again = true,
                        None => {
                            relists += 1;
                            let listing = Relist::start(relists, text, list_meta.as_ref(), options.timeout);
                            if let Err(e) = link.send(&listing.request(None)).await {
                                log(&format!("cannot write to the server: {e}"));
                            }
                            relist = Some(listing);
                        }
                    }
                    continue;
                }
                if let (Some(listing), Some(id)) = (&mut relist, &message.id)
                    && message.is_response()
                    && id_key(id) == listing.key()
                {
                    let mut next = None;
                    match serde_json::from_str::<Value>(&text) {
                        Ok(mut answer) if message.result => {
                            if let Some(result) = answer.get_mut("result") {
                                remember_listing(&mut listed, result);
                                let raw = result.clone();
                                rules.rewrite(&Rewrite::Tools { marked: true }, result);
                                guard.check_listing(&mut pins, &raw, result);
                                next = raw.get("nextCursor").and_then(Value::as_str).map(str::to_string);
                            }
                        }
                        _ => log(&format!("the server did not list its tools for the proxy: {}", excerpt(&text))),
                    }
                    match listing.next(next) {
                        Some(request) => {
                            if let Err(e) = link.send(&request).await {
                                log(&format!("cannot write to the server: {e}"));
                            }
                        }
                        None => {
                            if let Some(listing) = relist.take() {
                                host.deliver(listing.held).await.map_err(io_error)?;
                            }
                        }
                    }
                    continue;
                }
                let waiting = match (&message.id, message.is_response()) {
                    (Some(id), true) => {
                        let key = id_key(id);
                        if expired.remove(&key) {
                            log(&format!("a late answer to request {id}, which already timed out, was dropped"));
                            continue;
                        }
                        pending.remove(&key)
                    }
                    _ => None,
                };
                if let Some(call) = waiting.as_ref().and_then(|w| w.call.as_ref()) {
                    let outcome = if message.error { "error" } else { call.outcome };
                    pending.audit(call, outcome, true);
                }
                let out = match waiting {
                    // The server asks a question of its own about a call the
                    // user accepted: its state rides in a ticket.
                    Some(Pending { consent: Some((tool, arguments)), .. }) if message.result => {
                        match serde_json::from_str::<Value>(&text) {
                            Ok(mut answer) => match answer.get_mut("result") {
                                Some(Value::Object(result)) => {
                                    if tickets.carry(&tool, &arguments, result) {
                                        serde_json::to_string(&answer).unwrap_or(text)
                                    } else {
                                        text
                                    }
                                }
                                _ => text,
                            },
                            Err(_) => text,
                        }
                    }
                    Some(Pending { rewrite, .. }) if rewrite != Rewrite::None && message.result => {
                        match serde_json::from_str::<Value>(&text) {
                            Ok(mut message) => {
                                if let Some(result) = message.get_mut("result") {
                                    if matches!(rewrite, Rewrite::Tools { .. }) {
                                        remember_listing(&mut listed, result);
                                        let raw = guard.pin.is_some().then(|| result.clone());
                                        rules.rewrite(&rewrite, result);
                                        if let Some(raw) = raw {
                                            guard.check_listing(&mut pins, &raw, result);
                                        }
                                    } else {
                                        rules.rewrite(&rewrite, result);
                                    }
                                }
                                serde_json::to_string(&message).unwrap_or(text)
                            }
                            Err(_) => text,
                        }
                    }
                    // Everything else exactly as the server wrote it.
                    _ => text,
                };
                host.deliver(out).await.map_err(io_error)?;
            }
            _ = ticker.tick(), if (options.timeout.is_some() && !pending.is_empty()) || !pending.asks.is_empty() || relist.is_some() => {
                let now = Instant::now();
                // Questions the user did not answer in time.
                let given_up: Vec<String> = pending
                    .asks
                    .iter()
                    .filter(|(_, held)| held.deadline <= now)
                    .map(|(question, _)| question.clone())
                    .collect();
                for question in given_up {
                    let Some(held) = pending.asks.remove(&question) else { continue };
                    if let Some(audit) = &guard.audit {
                        audit.write(&held.judged.record("timed out", None, held.arguments.as_ref()));
                    }
                    let why = format!(
                        "was not confirmed: the user did not answer within {}s (mcp-resolve proxy --ask-timeout)",
                        guard.ask_timeout.as_secs()
                    );
                    let withdrawn = json!({
                        "jsonrpc": "2.0",
                        "method": "notifications/cancelled",
                        "params": {"requestId": serde_json::from_str::<Value>(&question).unwrap_or(Value::Null), "reason": "the question timed out"},
                    });
                    host.deliver(withdrawn.to_string()).await.map_err(io_error)?;
                    host.deliver(error_line(&held.id, &held.judged.refusal(&why))).await.map_err(io_error)?;
                }
                // A listing the server did not give in time.
                if relist.as_ref().is_some_and(|l| l.deadline <= now)
                    && let Some(listing) = relist.take()
                {
                    log("the server did not answer the proxy's tools/list in time; the host is told of the change anyway");
                    expired.insert(listing.key());
                    host.deliver(listing.held).await.map_err(io_error)?;
                }
                let overdue: Vec<String> = pending
                    .iter()
                    .filter(|(_, p)| p.deadline.is_some_and(|d| d <= now))
                    .map(|(id, _)| id.clone())
                    .collect();
                for key in overdue {
                    let Some(request) = pending.remove(&key) else { continue };
                    if let Some(call) = &request.call {
                        pending.audit(call, "timed out", false);
                    }
                    expired.insert(key.clone());
                    let id: Value = serde_json::from_str(&key).unwrap_or(Value::Null);
                    let after = options.timeout.unwrap_or_default().as_secs();
                    log(&format!("no answer to `{}` within {after}s", request.method));
                    let error = RpcError::new(RpcError::INTERNAL_ERROR, format!("the server did not answer `{}` within {after}s (mcp-resolve proxy --timeout)", request.method), None);
                    host.deliver(error_line(&id, &error)).await.map_err(io_error)?;
                }
            }
        }
    };

    if let Ended::ServerExited(why) = &ended {
        let unanswered: Vec<(String, Pending)> = pending.drain().collect();
        for (key, request) in unanswered {
            if let Some(call) = &request.call {
                pending.audit(call, "server exited", false);
            }
            let id: Value = serde_json::from_str(&key).unwrap_or(Value::Null);
            let error = RpcError::new(
                RpcError::INTERNAL_ERROR,
                format!("{why} before answering `{}`", request.method),
                None,
            );
            let _ = host.deliver(error_line(&id, &error)).await;
        }
    }
    link.close().await?;
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

/// Checks a server's real `tools/list` (read at start) against the pinned
/// signature, if any: the tools the host would not see are named on stderr.
pub fn check_pin(rules: &ProxyRules, guard: &Guard, listed: &[Value]) {
    let raw = json!({"tools": listed});
    let mut result = raw.clone();
    rules.rewrite(&Rewrite::Tools { marked: true }, &mut result);
    guard.check_listing(&mut crate::guard::PinState::default(), &raw, &mut result);
}

/// Reads a server's real `tools/list` through a short session of its own
/// (a command is started and stopped for it).
pub async fn probe(upstream: &Upstream, timeout: Duration) -> Result<Vec<Value>, UpstreamError> {
    let mut session = match upstream {
        Upstream::Command(command) => crate::upstream::Session::spawn(command, timeout).await?,
        Upstream::Url(url) => crate::upstream::Session::connect(url, timeout).await?,
    };
    let tools = session.list_tools().await;
    session.close(GRACE).await?;
    tools
}
