//! `mcp-resolve proxy --listen ADDR`: the proxy serves hosts over streamable
//! HTTP (`POST`, `GET` and `DELETE` on `/mcp`) instead of its stdio.
//!
//! Every host session is a proxy session of its own, with a server of its
//! own (a child started for it, or a session on the upstream endpoint):
//!
//! - an `initialize` request without `Mcp-Session-Id` opens a session; its
//!   answer carries the new id, and every later request names it;
//! - a request without a session (the 2026-07-28 style, where each request
//!   carries the client's capabilities) goes to one shared session.
//!
//! Request ids are the host's only within its own exchange, so each request
//! gets an id of the proxy's on its way to the server, and its own back on
//! the answer. The answer to a `POST` is an event stream when the host
//! accepts one — with the progress notifications of that request, and the
//! server's other messages while no `GET` stream is open — and one JSON
//! body otherwise.
//!
//! The same protections as rmcp's: requests whose `Host` is not a loopback
//! name (or one allowed with `--allow-host`) are refused with `403`, and so
//! are requests whose `Origin` is present and neither a loopback origin nor
//! one allowed with `--allow-origin` (DNS rebinding).

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use futures_util::StreamExt;
use mcp_resolve_runtime::framing::{Screen, Screened};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::envelope::{Envelope, id_key};
use crate::link::{Input, Link, Upstream};
use crate::relay::{HostSink, Options, ProxyRules, log, relay};
use crate::upstream::UpstreamError;

const SESSION_HEADER: &str = "mcp-session-id";

const INTERNAL_ERROR: i64 = mcp_resolve_runtime::RpcError::INTERNAL_ERROR;

/// How many server messages wait for a host stream before the oldest is
/// dropped.
const BACKLOG: usize = 1024;

/// Where and for whom the proxy listens.
#[derive(Clone, Debug)]
pub struct ListenOptions {
    /// The address to bind.
    pub addr: SocketAddr,
    /// `Host` values allowed besides the loopback names and the bound
    /// address (`name` or `name:port`).
    pub allowed_hosts: Vec<String>,
    /// `Origin` values allowed besides loopback origins
    /// (`scheme://host[:port]`, or `null`).
    pub allowed_origins: Vec<String>,
    /// The most host sessions open at once (each has a server of its own).
    pub max_sessions: usize,
    /// A session with no request, no open stream and no waiting answer for
    /// this long is ended, and its server stopped; `None`: never.
    pub session_idle: Option<Duration>,
}

/// Serves hosts on `listener` until `shutdown` resolves; then every session
/// is ended and its server stopped.
pub async fn serve(
    rules: Arc<ProxyRules>,
    options: Options,
    upstream: Upstream,
    listen: ListenOptions,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), UpstreamError> {
    let hub = Arc::new(Hub {
        rules,
        options,
        upstream,
        listen,
        sessions: Mutex::new(HashMap::new()),
        stateless: tokio::sync::Mutex::new(None),
        relays: Mutex::new(Vec::new()),
    });
    let app = axum::Router::new()
        .route("/mcp", axum::routing::any(handle))
        .with_state(Arc::clone(&hub));
    if let Some(idle) = hub.listen.session_idle {
        let hub = Arc::downgrade(&hub);
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval((idle / 4).max(Duration::from_millis(100)));
            loop {
                ticker.tick().await;
                let Some(hub) = hub.upgrade() else { return };
                hub.end_idle(idle);
            }
        });
    }
    // No Nagle: an answer is one small write, and a host waiting for it
    // would otherwise wait out the peer's delayed ACK (~40 ms a request).
    let listener = listener.tap_io(|stream| {
        if let Err(e) = stream.set_nodelay(true) {
            log(&format!("cannot set TCP_NODELAY on a host connection: {e}"));
        }
    });
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(|source| UpstreamError::Io {
            context: "the HTTP listener failed".into(),
            source,
        });
    hub.close_all().await;
    served
}

struct Hub {
    rules: Arc<ProxyRules>,
    options: Options,
    upstream: Upstream,
    listen: ListenOptions,
    sessions: Mutex<HashMap<String, Arc<HostSession>>>,
    /// The session of requests that name none.
    stateless: tokio::sync::Mutex<Option<Arc<HostSession>>>,
    relays: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

/// One host session: its proxy session's input, and where its answers go.
struct HostSession {
    to_relay: Mutex<Option<mpsc::Sender<Input>>>,
    routes: Mutex<Routes>,
    next_id: AtomicU64,
    last_seen: Mutex<Instant>,
}

#[derive(Default)]
struct Routes {
    /// Requests waiting for their answer, by the proxy's id.
    waiting: HashMap<String, Waiter>,
    /// The proxy's id of each waiting request, by the host's (for
    /// `notifications/cancelled`).
    by_host_id: HashMap<String, Value>,
    /// The waiting request of each progress token.
    progress: HashMap<String, String>,
    /// The host's `GET` stream.
    standalone: Option<mpsc::UnboundedSender<String>>,
    /// Server messages with no stream to go to yet.
    backlog: VecDeque<String>,
    /// The ended session's reason, once it ended.
    ended: Option<String>,
}

struct Waiter {
    host_id: Value,
    stream: mpsc::UnboundedSender<String>,
    /// An event stream (takes the server's other messages too).
    events: bool,
    token: Option<String>,
    opened: u64,
}

impl HostSession {
    fn new(to_relay: mpsc::Sender<Input>) -> Arc<Self> {
        Arc::new(HostSession {
            to_relay: Mutex::new(Some(to_relay)),
            routes: Mutex::new(Routes::default()),
            next_id: AtomicU64::new(1),
            last_seen: Mutex::new(Instant::now()),
        })
    }

    /// Notes that the host used the session.
    fn seen(&self) {
        if let Ok(mut last) = self.last_seen.lock() {
            *last = Instant::now();
        }
    }

    /// Whether the session has had nothing to do for `idle`: no request,
    /// no waiting answer, no open stream.
    fn idle_for(&self, idle: Duration) -> bool {
        let quiet = self
            .last_seen
            .lock()
            .is_ok_and(|last| last.elapsed() >= idle);
        quiet
            && self.routes.lock().is_ok_and(|routes| {
                routes.waiting.is_empty()
                    && routes.standalone.as_ref().is_none_or(|s| s.is_closed())
            })
    }

    fn sender(&self) -> Option<mpsc::Sender<Input>> {
        self.to_relay.lock().ok()?.clone()
    }

    /// Ends the session: its proxy session sees the host leave.
    fn close(&self) {
        if let Ok(mut to_relay) = self.to_relay.lock() {
            to_relay.take();
        }
    }

    /// Routes one message of the proxy session to the host.
    fn route(&self, line: String) {
        let Ok(mut routes) = self.routes.lock() else {
            return;
        };
        let Some(envelope) = Envelope::of(&line) else {
            return;
        };
        if envelope.is_response()
            && let Some(id) = &envelope.id
        {
            let Some(waiter) = routes.waiting.remove(&id_key(id)) else {
                log(&format!(
                    "an answer to no waiting request ({id}) was dropped"
                ));
                return;
            };
            routes.by_host_id.remove(&id_key(&waiter.host_id));
            if let Some(token) = &waiter.token {
                routes.progress.remove(token);
            }
            let line = match serde_json::from_str::<Value>(&line) {
                Ok(mut message) => {
                    message["id"] = waiter.host_id.clone();
                    message.to_string()
                }
                Err(_) => line,
            };
            let _ = waiter.stream.send(line);
            return;
        }
        // Progress of a waiting request goes to its stream.
        if envelope.method.as_deref() == Some("notifications/progress")
            && let Some(token) = envelope
                .params()
                .and_then(|p| p.get("progressToken").map(id_key))
            && let Some(waiter) = routes
                .progress
                .get(&token)
                .and_then(|key| routes.waiting.get(key))
            && waiter.events
            && waiter.stream.send(line.clone()).is_ok()
        {
            return;
        }
        if let Some(standalone) = &routes.standalone {
            if standalone.send(line.clone()).is_ok() {
                return;
            }
            routes.standalone = None;
        }
        // The newest request's event stream, while no GET stream is open.
        if let Some(waiter) = routes
            .waiting
            .values()
            .filter(|w| w.events && !w.stream.is_closed())
            .max_by_key(|w| w.opened)
            && waiter.stream.send(line.clone()).is_ok()
        {
            return;
        }
        if routes.backlog.len() == BACKLOG {
            routes.backlog.pop_front();
            log("a server message waited for a host stream too long and was dropped");
        }
        routes.backlog.push_back(line);
    }
}

/// The proxy session's side of a host session.
struct Router(Arc<HostSession>);

impl HostSink for Router {
    async fn deliver(&mut self, line: String) -> std::io::Result<()> {
        self.0.route(line);
        Ok(())
    }
}

impl Hub {
    /// Opens a session: a server of its own and a proxy session between.
    fn open(self: &Arc<Self>, stateless: bool) -> Result<Arc<HostSession>, UpstreamError> {
        let link = Link::open(&self.upstream, self.options.max_message_bytes, stateless)?;
        let (to_relay, from_host) = mpsc::channel(64);
        let session = HostSession::new(to_relay);
        let hub = Arc::clone(self);
        let router = Router(Arc::clone(&session));
        let relay_task = tokio::spawn(async move {
            let mut router = router;
            let outcome = relay(
                &hub.rules,
                &hub.options,
                link,
                from_host,
                &mut router,
                stateless,
            )
            .await;
            let why = match outcome {
                Ok(crate::relay::Ended::HostClosed) => "the session was ended".to_string(),
                Ok(crate::relay::Ended::ServerExited(why)) => why,
                Err(e) => e.to_string(),
            };
            if let Ok(mut routes) = router.0.routes.lock() {
                // Requests the relay never read (still in the channel when
                // the server went) are answered too: an event stream must
                // not end without the answer it was opened for.
                for (_, waiter) in routes.waiting.drain() {
                    let error = json!({"jsonrpc": "2.0", "id": waiter.host_id,
                        "error": {"code": INTERNAL_ERROR,
                                  "message": format!("mcp-resolve proxy: {why} before answering")}});
                    let _ = waiter.stream.send(error.to_string());
                }
                routes.by_host_id.clear();
                routes.progress.clear();
                routes.ended = Some(why);
                // Streams still open end here.
                routes.standalone = None;
            }
            router.0.close();
        });
        if let Ok(mut relays) = self.relays.lock() {
            relays.retain(|task| !task.is_finished());
            relays.push(relay_task);
        }
        Ok(session)
    }

    /// The shared session of requests that name none, opened on first use.
    async fn stateless(self: &Arc<Self>) -> Result<Arc<HostSession>, UpstreamError> {
        let mut shared = self.stateless.lock().await;
        if let Some(session) = shared.as_ref()
            && session.sender().is_some()
        {
            return Ok(Arc::clone(session));
        }
        let session = self.open(true)?;
        *shared = Some(Arc::clone(&session));
        Ok(session)
    }

    fn session(&self, id: &str) -> Option<Arc<HostSession>> {
        let mut sessions = self.sessions.lock().ok()?;
        let session = sessions.get(id).cloned()?;
        if session.sender().is_none() {
            sessions.remove(id);
            return None;
        }
        session.seen();
        Some(session)
    }

    /// Ends the sessions idle for `idle` (and those whose server ended).
    fn end_idle(&self, idle: Duration) {
        let Ok(mut sessions) = self.sessions.lock() else {
            return;
        };
        sessions.retain(|id, session| {
            if session.sender().is_none() {
                return false;
            }
            if session.idle_for(idle) {
                log(&format!(
                    "session {id} was idle for {}s and is ended (--session-idle)",
                    idle.as_secs()
                ));
                session.close();
                return false;
            }
            true
        });
    }

    /// Ends every session and waits (a while) for their servers to stop.
    async fn close_all(&self) {
        let sessions: Vec<Arc<HostSession>> = self
            .sessions
            .lock()
            .map(|mut s| s.drain().map(|(_, v)| v).collect())
            .unwrap_or_default();
        for session in sessions {
            session.close();
        }
        if let Some(session) = self.stateless.lock().await.take() {
            session.close();
        }
        let relays: Vec<_> = self
            .relays
            .lock()
            .map(|mut r| r.drain(..).collect())
            .unwrap_or_default();
        for task in relays {
            // The relay closes its server within its grace periods.
            let _ = tokio::time::timeout(crate::link::GRACE * 3, task).await;
        }
    }

    /// `None` when `headers` pass the `Host` and `Origin` checks; the
    /// refusal otherwise.
    fn refusal(&self, headers: &HeaderMap) -> Option<Response> {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        if !host_allowed(host, &self.listen) {
            return Some(refuse(
                StatusCode::FORBIDDEN,
                &format!(
                    "Forbidden: Host `{host}` is not allowed (mcp-resolve proxy --allow-host)"
                ),
            ));
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("");
            if !origin_allowed(origin, &self.listen.allowed_origins) {
                return Some(refuse(
                    StatusCode::FORBIDDEN,
                    &format!(
                        "Forbidden: Origin `{origin}` is not allowed (mcp-resolve proxy --allow-origin)"
                    ),
                ));
            }
        }
        None
    }
}

const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// `host` (a `Host` header: `name[:port]`, IPv6 in brackets) and its port.
fn split_authority(authority: &str) -> Option<(String, Option<u16>)> {
    let authority = authority.trim();
    if authority.is_empty() {
        return None;
    }
    let parsed = axum::http::uri::Authority::try_from(authority).ok()?;
    let host = parsed
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    Some((host, parsed.port_u16()))
}

fn host_allowed(host: &str, listen: &ListenOptions) -> bool {
    let Some((name, port)) = split_authority(host) else {
        return false;
    };
    let bound = listen.addr.ip();
    if LOOPBACK_NAMES.contains(&name.as_str())
        || (!bound.is_unspecified() && name.parse::<IpAddr>().ok() == Some(bound))
    {
        return true;
    }
    listen.allowed_hosts.iter().any(|allowed| {
        split_authority(allowed).is_some_and(|(allowed_name, allowed_port)| {
            allowed_name == name && allowed_port.is_none_or(|p| Some(p) == port)
        })
    })
}

fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
    let normal = |o: &str| o.trim().trim_end_matches('/').to_ascii_lowercase();
    let origin = normal(origin);
    if allowed.iter().any(|a| normal(a) == origin) {
        return true;
    }
    let Ok(uri) = origin.parse::<axum::http::Uri>() else {
        return false;
    };
    matches!(uri.scheme_str(), Some("http" | "https"))
        && uri.authority().is_some_and(|a| {
            let host = a.host().trim_start_matches('[').trim_end_matches(']');
            LOOPBACK_NAMES.contains(&host)
        })
}

fn refuse(status: StatusCode, message: &str) -> Response {
    (status, message.to_string()).into_response()
}

/// A JSON-RPC error body with HTTP `status`.
fn rpc_refusal(status: StatusCode, id: Value, code: i64, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

async fn handle(State(hub): State<Arc<Hub>>, request: Request) -> Response {
    if let Some(refusal) = hub.refusal(request.headers()) {
        return refusal;
    }
    let session_id = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    match *request.method() {
        Method::POST => post(hub, session_id, request).await,
        Method::GET => get(hub, session_id, request.headers()),
        Method::DELETE => delete(hub, session_id),
        _ => (
            StatusCode::METHOD_NOT_ALLOWED,
            [(header::ALLOW, "GET, POST, DELETE")],
        )
            .into_response(),
    }
}

async fn post(hub: Arc<Hub>, session_id: Option<String>, request: Request) -> Response {
    let accept = request
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let events = accept.contains("text/event-stream");
    let limit = hub.options.max_message_bytes;
    let body = match axum::body::to_bytes(request.into_body(), limit).await {
        Ok(body) => body,
        Err(_) => {
            return rpc_refusal(
                StatusCode::PAYLOAD_TOO_LARGE,
                Value::Null,
                -32600,
                &format!("Invalid Request: the message is larger than {limit} bytes"),
            );
        }
    };
    // The runtime's JSON-RPC screen, one message at a time: what it
    // answers is answered here, with 400.
    let Ok(text) = std::str::from_utf8(&body) else {
        return rpc_refusal(
            StatusCode::BAD_REQUEST,
            Value::Null,
            -32700,
            "Parse error: the message is not UTF-8",
        );
    };
    let mut screen = if hub.rules.dialect() == mcp_resolve_runtime::Dialect::Extension {
        Screen::checking(hub.rules.method())
    } else {
        Screen::default()
    }
    .per_message();
    match screen.line(text) {
        Screened::Reply(answer) => {
            return (
                StatusCode::BAD_REQUEST,
                [(header::CONTENT_TYPE, "application/json")],
                answer.to_string(),
            )
                .into_response();
        }
        Screened::Drop(_) => return StatusCode::ACCEPTED.into_response(),
        Screened::Forward => {}
    }
    let Ok(mut message) = serde_json::from_str::<Value>(text) else {
        return StatusCode::ACCEPTED.into_response(); // the screen forwards only JSON
    };
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string);
    let host_id = message.get("id").cloned();
    let is_request = method.is_some() && host_id.is_some();

    // The session.
    let (session, new_id) = match &session_id {
        Some(id) => match hub.session(id) {
            Some(session) => (session, None),
            None => {
                return rpc_refusal(
                    StatusCode::NOT_FOUND,
                    host_id.unwrap_or(Value::Null),
                    -32600,
                    "Session not found: start a new one with initialize",
                );
            }
        },
        None if method.as_deref() == Some("initialize") && is_request => {
            let open = hub.sessions.lock().map(|s| s.len()).unwrap_or(usize::MAX);
            if open >= hub.listen.max_sessions {
                return rpc_refusal(
                    StatusCode::SERVICE_UNAVAILABLE,
                    host_id.unwrap_or(Value::Null),
                    INTERNAL_ERROR,
                    &format!(
                        "the proxy has {open} sessions open, its limit (mcp-resolve proxy --max-sessions)"
                    ),
                );
            }
            match hub.open(false) {
                Ok(session) => {
                    let id = uuid::Uuid::new_v4().simple().to_string();
                    if let Ok(mut sessions) = hub.sessions.lock() {
                        sessions.insert(id.clone(), Arc::clone(&session));
                    }
                    (session, Some(id))
                }
                Err(e) => return start_failure(&hub, host_id, &e),
            }
        }
        None => match hub.stateless().await {
            Ok(session) => (session, None),
            Err(e) => return start_failure(&hub, host_id, &e),
        },
    };
    let Some(to_relay) = session.sender() else {
        return rpc_refusal(
            StatusCode::NOT_FOUND,
            host_id.unwrap_or(Value::Null),
            -32600,
            "Session not found: it ended",
        );
    };

    if !is_request {
        // A notification or a response: the server's answer is not awaited.
        if method.as_deref() == Some("notifications/cancelled") {
            // The server knows requests by the proxy's ids: a cancellation
            // names the one in flight under the host's id, and one for no
            // request in flight is dropped — passed on as it is, its id
            // could name another host's request (or a later one).
            let host_request = message.pointer("/params/requestId").cloned();
            let proxy_id = host_request.and_then(|host_request| {
                let routes = session.routes.lock().ok()?;
                routes.by_host_id.get(&id_key(&host_request)).cloned()
            });
            match proxy_id {
                Some(proxy_id) => message["params"]["requestId"] = proxy_id,
                None => return StatusCode::ACCEPTED.into_response(),
            }
        }
        if to_relay
            .send(Input::Line(message.to_string()))
            .await
            .is_err()
        {
            return refuse(StatusCode::NOT_FOUND, "Session not found: it ended");
        }
        return StatusCode::ACCEPTED.into_response();
    }

    // A request: under an id of the proxy's, answered on this exchange.
    let host_id = host_id.unwrap_or(Value::Null);
    let opened = session.next_id.fetch_add(1, Ordering::Relaxed);
    let proxy_id = Value::from(opened);
    message["id"] = proxy_id.clone();
    let token = message.pointer("/params/_meta/progressToken").map(id_key);
    let (stream, mut answers) = mpsc::unbounded_channel();
    if let Ok(mut routes) = session.routes.lock() {
        let key = id_key(&proxy_id);
        routes.by_host_id.insert(id_key(&host_id), proxy_id.clone());
        if let Some(token) = &token {
            routes.progress.insert(token.clone(), key.clone());
        }
        // Messages that waited for a stream go out on this one.
        if events && routes.standalone.is_none() {
            for line in routes.backlog.drain(..) {
                let _ = stream.send(line);
            }
        }
        routes.waiting.insert(
            key,
            Waiter {
                host_id: host_id.clone(),
                stream,
                events,
                token,
                opened,
            },
        );
    }
    if to_relay
        .send(Input::Line(message.to_string()))
        .await
        .is_err()
    {
        return rpc_refusal(
            StatusCode::NOT_FOUND,
            host_id,
            -32600,
            "Session not found: it ended",
        );
    }

    let mut response = if events {
        event_stream(answers)
    } else {
        match answers.recv().await {
            Some(line) => {
                let mut response = Response::new(Body::from(line));
                response.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                response
            }
            None => {
                let why = session
                    .routes
                    .lock()
                    .ok()
                    .and_then(|r| r.ended.clone())
                    .unwrap_or_else(|| "the session ended".into());
                return rpc_refusal(
                    StatusCode::OK,
                    host_id,
                    INTERNAL_ERROR,
                    &format!("mcp-resolve proxy: {why}"),
                );
            }
        }
    };
    if let Some(id) = new_id
        && let Ok(value) = HeaderValue::from_str(&id)
    {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}

fn start_failure(hub: &Hub, id: Option<Value>, error: &UpstreamError) -> Response {
    log(&format!(
        "cannot open a session with the server {}: {error}",
        hub.upstream.describe()
    ));
    rpc_refusal(
        StatusCode::BAD_GATEWAY,
        id.unwrap_or(Value::Null),
        INTERNAL_ERROR,
        &format!("mcp-resolve proxy: cannot start the server: {error}"),
    )
}

/// The host's stream of server messages outside its requests.
fn get(hub: Arc<Hub>, session_id: Option<String>, headers: &HeaderMap) -> Response {
    let accepts = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.to_ascii_lowercase().contains("text/event-stream"));
    if !accepts {
        return refuse(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: a GET stream is text/event-stream",
        );
    }
    let Some(session) = session_id.as_deref().and_then(|id| hub.session(id)) else {
        return if session_id.is_some() {
            refuse(StatusCode::NOT_FOUND, "Session not found")
        } else {
            (
                StatusCode::METHOD_NOT_ALLOWED,
                [(header::ALLOW, "POST")],
                "a GET stream belongs to a session (Mcp-Session-Id)",
            )
                .into_response()
        };
    };
    let (stream, lines) = mpsc::unbounded_channel();
    {
        let Ok(mut routes) = session.routes.lock() else {
            return refuse(StatusCode::INTERNAL_SERVER_ERROR, "the session is broken");
        };
        if routes.standalone.as_ref().is_some_and(|s| !s.is_closed()) {
            return refuse(
                StatusCode::CONFLICT,
                "Conflict: the session already has a GET stream",
            );
        }
        for line in routes.backlog.drain(..) {
            let _ = stream.send(line);
        }
        routes.standalone = Some(stream);
    }
    event_stream(lines)
}

/// An event-stream response carrying each of `lines` as a `message` event,
/// until the sender side is dropped.
fn event_stream(mut lines: mpsc::UnboundedReceiver<String>) -> Response {
    let body = futures_util::stream::poll_fn(move |cx| lines.poll_recv(cx)).map(|line| {
        Ok::<_, std::convert::Infallible>(Bytes::from(format!("event: message\ndata: {line}\n\n")))
    });
    let mut response = Response::new(Body::from_stream(body));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

fn delete(hub: Arc<Hub>, session_id: Option<String>) -> Response {
    let Some(id) = session_id else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "Bad Request: DELETE names a session (Mcp-Session-Id)",
        );
    };
    let removed = hub.sessions.lock().ok().and_then(|mut s| s.remove(&id));
    match removed {
        Some(session) => {
            session.close();
            StatusCode::NO_CONTENT.into_response()
        }
        None => refuse(StatusCode::NOT_FOUND, "Session not found"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(addr: &str, hosts: &[&str]) -> ListenOptions {
        ListenOptions {
            addr: addr.parse().unwrap(),
            allowed_hosts: hosts.iter().map(|h| h.to_string()).collect(),
            allowed_origins: Vec::new(),
            max_sessions: 4,
            session_idle: None,
        }
    }

    #[test]
    fn hosts_are_loopback_names_the_bound_address_or_allowed() {
        let local = options("127.0.0.1:8080", &[]);
        for host in [
            "localhost:8080",
            "127.0.0.1:8080",
            "[::1]:8080",
            "LOCALHOST",
        ] {
            assert!(host_allowed(host, &local), "{host}");
        }
        for host in [
            "evil.example:8080",
            "",
            "127.0.0.2:8080",
            "localhost.evil.example",
        ] {
            assert!(!host_allowed(host, &local), "{host}");
        }
        let bound = options("10.0.0.5:8080", &["proxy.internal:8080"]);
        assert!(host_allowed("10.0.0.5:8080", &bound));
        assert!(host_allowed("proxy.internal:8080", &bound));
        assert!(!host_allowed("proxy.internal:9090", &bound));
        let any = options("0.0.0.0:8080", &[]);
        assert!(!host_allowed("0.0.0.0:8080", &any));
    }

    #[test]
    fn origins_are_loopback_or_allowed() {
        let allowed = vec!["https://app.example".to_string()];
        for origin in [
            "http://localhost:3000",
            "http://127.0.0.1",
            "https://[::1]:8443",
        ] {
            assert!(origin_allowed(origin, &[]), "{origin}");
        }
        for origin in [
            "https://evil.example",
            "null",
            "file://localhost",
            "",
            "http://localhost.evil.example",
        ] {
            assert!(!origin_allowed(origin, &[]), "{origin}");
        }
        assert!(origin_allowed("https://app.example/", &allowed));
        assert!(!origin_allowed("https://app.example:444", &allowed));
    }
}
