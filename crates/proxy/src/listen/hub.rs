//! The sessions of `--listen`: one proxy session per host session (and one
//! shared by the requests that name none), and the routing of each
//! session's messages to the host's open exchanges — the answer to a
//! request on its own exchange, progress on the stream of the request it
//! concerns, everything else on the host's `GET` stream or, while none is
//! open, the newest event stream.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_resolve_protocol::{Envelope, ParamsRead, Raw, Screened, error_response, id_key, splice};
use mcp_resolve_proxy_core::session::read_host;
use mcp_resolve_runtime::RpcError;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::ListenOptions;
use crate::link::{Carried, Input, Link, Upstream};
use crate::log;
use crate::relay::{HostSink, Options, ProxyRules, relay};
use crate::upstream::UpstreamError;

/// How many server messages wait for a host stream before the oldest is
/// dropped.
const BACKLOG: usize = 1024;

/// The listener's state: the rules and settings every session shares, and
/// the sessions.
pub(super) struct Hub {
    pub(super) rules: Arc<ProxyRules>,
    pub(super) options: Options,
    pub(super) upstream: Upstream,
    pub(super) listen: ListenOptions,
    pub(super) sessions: Mutex<HashMap<String, Arc<HostSession>>>,
    /// The session of requests that name none.
    pub(super) stateless: tokio::sync::Mutex<Option<Arc<HostSession>>>,
    pub(super) relays: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

/// One host session: its proxy session's input, and where its answers go.
pub(super) struct HostSession {
    to_relay: Mutex<Option<mpsc::Sender<Input>>>,
    pub(super) routes: Mutex<Routes>,
    pub(super) next_id: AtomicU64,
    last_seen: Mutex<Instant>,
    /// The session of requests that name none: shared by every host that
    /// sends one, so a server message reaches a host only as part of the
    /// answer to that host's own request.
    pub(super) shared: bool,
    /// Where dropped messages are counted (its telemetry).
    sinks: Option<Arc<crate::guard::Sinks>>,
    /// Headers of the host's requests its link passes on to an HTTP server.
    pub(super) carried: Carried,
}

#[derive(Default)]
pub(super) struct Routes {
    /// Requests waiting for their answer, by the proxy's id.
    pub(super) waiting: HashMap<String, Waiter>,
    /// The proxy's id of each waiting request, by the host's (for
    /// `notifications/cancelled`; not kept in the shared session, whose
    /// hosts' ids are not one host's).
    pub(super) by_host_id: HashMap<String, Value>,
    /// The host's `GET` stream.
    pub(super) standalone: Option<mpsc::UnboundedSender<String>>,
    /// Server messages with no stream to go to yet.
    pub(super) backlog: VecDeque<String>,
    /// The ended session's reason, once it ended.
    pub(super) ended: Option<String>,
}

pub(super) struct Waiter {
    pub(super) host_id: Value,
    pub(super) stream: mpsc::UnboundedSender<String>,
    /// An event stream (takes the server's other messages too).
    pub(super) events: bool,
    /// The progress token the host asked with (the server was given the
    /// proxy's id in its place).
    pub(super) token: Option<Box<RawValue>>,
    pub(super) opened: u64,
}

impl HostSession {
    pub(super) fn new(
        to_relay: mpsc::Sender<Input>,
        shared: bool,
        sinks: Option<Arc<crate::guard::Sinks>>,
        carried: Carried,
    ) -> Arc<Self> {
        Arc::new(HostSession {
            to_relay: Mutex::new(Some(to_relay)),
            routes: Mutex::new(Routes::default()),
            next_id: AtomicU64::new(1),
            last_seen: Mutex::new(Instant::now()),
            shared,
            sinks,
            carried,
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

    pub(super) fn sender(&self) -> Option<mpsc::Sender<Input>> {
        self.to_relay.lock().ok()?.clone()
    }

    /// Ends the session: its proxy session sees the host leave.
    pub(super) fn close(&self) {
        if let Ok(mut to_relay) = self.to_relay.lock() {
            to_relay.take();
        }
    }

    /// Opens a request of the host's (`host_id`, asking for progress with
    /// `token`, answered on an event stream when `events`): the proxy's id
    /// for it, which is also the progress token the server is given, and
    /// where its answer and the messages that belong to it arrive.
    pub(super) fn wait(
        &self,
        host_id: Value,
        token: Option<Box<RawValue>>,
        events: bool,
    ) -> (u64, mpsc::UnboundedReceiver<String>) {
        let opened = self.next_id.fetch_add(1, Ordering::Relaxed);
        let key = id_key(&Value::from(opened));
        let (stream, answers) = mpsc::unbounded_channel();
        if let Ok(mut routes) = self.routes.lock() {
            if !self.shared {
                routes
                    .by_host_id
                    .insert(id_key(&host_id), Value::from(opened));
                // Messages that waited for a stream go out on this one.
                if events && routes.standalone.is_none() {
                    for line in routes.backlog.drain(..) {
                        let _ = stream.send(line);
                    }
                }
            }
            routes.waiting.insert(
                key,
                Waiter {
                    host_id,
                    stream,
                    events,
                    token,
                    opened,
                },
            );
        }
        (opened, answers)
    }

    /// The host let go of the request the proxy knows as `proxy_id` before
    /// its answer came (it closed the request's stream, or went away): the
    /// request is forgotten here, and its proxy session told, as a
    /// `notifications/cancelled` of the proxy's id, so the server stops
    /// the work. `false` when it had its answer already.
    pub(super) fn abandon(&self, proxy_id: u64) -> bool {
        let key = id_key(&Value::from(proxy_id));
        let Some(waiter) = self
            .routes
            .lock()
            .ok()
            .and_then(|mut routes| routes.forget(&key))
        else {
            return false;
        };
        drop(waiter);
        let cancel = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{proxy_id},"reason":"the host closed the request's stream"}}}}"#
        );
        if let Some(to_relay) = self.sender()
            && let Err(mpsc::error::TrySendError::Full(input)) =
                to_relay.try_send(Input::Line(cancel))
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            // A full channel: the cancellation waits its turn.
            runtime.spawn(async move {
                let _ = to_relay.send(input).await;
            });
        }
        true
    }

    fn unrouted(&self, kind: &'static str) {
        if let Some(telemetry) = self.sinks.as_ref().and_then(|s| s.telemetry.as_ref()) {
            telemetry.measure(mcp_resolve_telemetry::Measure::Unrouted { kind });
        }
    }

    /// Routes the server's answer to a request (the proxy's id `answer.to`,
    /// written at `answer.id_at`) to the exchange waiting for it, with the
    /// host's own id in the proxy's place: what [`HostSession::route`] does
    /// with an answer, without reading it again.
    fn route_answer(&self, answer: crate::session::Answer) {
        let Ok(mut routes) = self.routes.lock() else {
            return;
        };
        self.carried.take(&answer.to);
        let Some(waiter) = routes.forget(&answer.to) else {
            log(&format!(
                "an answer to no waiting request ({}) was dropped",
                answer.text.get(answer.id_at.clone()).unwrap_or_default()
            ));
            return;
        };
        let mut text = answer.text;
        if text.get(answer.id_at.clone()).is_some() {
            text.replace_range(answer.id_at, &waiter.host_id.to_string());
        }
        let _ = waiter.stream.send(text);
    }

    /// Routes a server's progress notification (as the session read it) to
    /// the request whose token it carries, with the host's token put back
    /// in place of the proxy's id; progress of a request no longer waiting,
    /// or that asked for no event stream, is dropped and counted.
    fn route_progress(&self, progress: crate::session::Answer) {
        let sent = self.routes.lock().ok().and_then(|routes| {
            let waiter = routes.waiting.get(&progress.to)?;
            let token = waiter.token.as_ref().filter(|_| waiter.events)?;
            let mut text = progress.text;
            text.get(progress.id_at.clone())?;
            text.replace_range(progress.id_at, token.get());
            waiter.stream.send(text).ok()
        });
        if sent.is_none() {
            self.unrouted("progress");
        }
    }

    /// Routes one message of the proxy session to the host. `related`: the
    /// proxy's id (key) of the request on whose answer the server sent it.
    ///
    /// A message reaches a host only when it belongs to that host: an
    /// answer goes to the request it answers, progress to the request whose
    /// token it carries (its own token put back), and a message sent on a
    /// request's answer to that request. In a host's own session the rest
    /// goes to its `GET` stream or newest event stream; in the shared
    /// session, which is no one host's, the rest is dropped and counted,
    /// as is progress of a request no longer waiting.
    fn route(&self, line: String, related: Option<&str>) {
        let Ok(mut routes) = self.routes.lock() else {
            return;
        };
        let Some(envelope) = Envelope::of(&line) else {
            return;
        };
        if envelope.is_response()
            && let Some(id) = &envelope.id
        {
            self.carried.take(&id_key(id));
            let Some(waiter) = routes.forget(&id_key(id)) else {
                log(&format!(
                    "an answer to no waiting request ({id}) was dropped"
                ));
                return;
            };
            // The host's own id goes back in where the proxy's was written.
            let line = envelope
                .id_raw
                .and_then(|raw| splice(&line, raw.get(), &waiter.host_id.to_string()))
                .unwrap_or_else(|| line.clone());
            let _ = waiter.stream.send(line);
            return;
        }
        if envelope.method.as_deref() == Some("notifications/progress") {
            // Progress with a token comes read (`route_progress`): this
            // one names no request.
            self.unrouted("progress");
            return;
        }
        // A `subscriptions/listen` stream's notifications name the listen
        // request by the proxy's id: they go to it, with the host's id put
        // back (and, as progress, nowhere else).
        if let Some(raw) = envelope
            .params
            .filter(|p| mcp_resolve_protocol::may_name_meta(p.get()))
            .and_then(subscription_id_raw)
        {
            let sent = mcp_resolve_protocol::json::from_str::<Value>(raw.get())
                .ok()
                .and_then(|id| routes.waiting.get(&id_key(&id)))
                .filter(|waiter| waiter.events)
                .and_then(|waiter| {
                    let line = splice(&line, raw.get(), &waiter.host_id.to_string())?;
                    waiter.stream.send(line).ok()
                });
            if sent.is_none() {
                self.unrouted("notification");
            }
            return;
        }
        if let Some(key) = related {
            if let Some(waiter) = routes.waiting.get(key).filter(|w| w.events)
                && waiter.stream.send(line.clone()).is_ok()
            {
                return;
            }
            if self.shared {
                self.unrouted("notification");
                return;
            }
        }
        if self.shared {
            // Nothing says whose it is: no host gets it.
            self.unrouted("notification");
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

impl Routes {
    /// Takes the waiting request the proxy knows by `key` out of the
    /// routes.
    fn forget(&mut self, key: &str) -> Option<Waiter> {
        let waiter = self.waiting.remove(key)?;
        if self
            .by_host_id
            .get(&id_key(&waiter.host_id))
            .is_some_and(|proxy| id_key(proxy) == key)
        {
            self.by_host_id.remove(&id_key(&waiter.host_id));
        }
        Some(waiter)
    }
}

/// The proxy session's side of a host session.
struct Router {
    session: Arc<HostSession>,
    /// The request the messages being delivered came with.
    related: Option<String>,
}

impl HostSink for Router {
    async fn deliver(&mut self, line: String) -> std::io::Result<()> {
        self.session.route(line, self.related.as_deref());
        Ok(())
    }

    async fn deliver_answer(&mut self, answer: crate::session::Answer) -> std::io::Result<()> {
        self.session.route_answer(answer);
        Ok(())
    }

    async fn deliver_progress(&mut self, progress: crate::session::Answer) -> std::io::Result<()> {
        self.session.route_progress(progress);
        Ok(())
    }

    fn relate(&mut self, request: Option<String>) {
        self.related = request;
    }
}

impl Hub {
    /// Reads one `POST`'s message (each message on its own) as its session
    /// would ([`read_host`]): the one read of it, handed to the session.
    pub(super) fn read<'a>(
        &self,
        text: &'a str,
    ) -> Result<(Envelope<'a>, Option<ParamsRead<'a>>), Screened> {
        read_host(&mut self.rules.screen().per_message(), &self.rules, text)
    }

    /// Opens a session: a server of its own and a proxy session between.
    /// `session_id`: the `Mcp-Session-Id` it will have (none for the
    /// shared session of requests that name none).
    pub(super) fn open(
        self: &Arc<Self>,
        stateless: bool,
        session_id: Option<&str>,
    ) -> Result<Arc<HostSession>, UpstreamError> {
        let carried = Carried::default();
        let link = Link::open(
            &self.upstream,
            self.options.max_message_bytes,
            stateless,
            Some(carried.clone()),
        )?;
        let (to_relay, from_host) = mpsc::channel(64);
        let session = HostSession::new(
            to_relay,
            stateless,
            Some(Arc::clone(&self.options.sinks)),
            carried,
        );
        let hub = Arc::clone(self);
        let router = Router {
            session: Arc::clone(&session),
            related: None,
        };
        let mut span_attributes: Vec<(&'static str, Value)> = vec![
            ("network.transport", "tcp".into()),
            ("network.protocol.name", "http".into()),
        ];
        if let Some(id) = session_id {
            span_attributes.push(("mcp.session.id", id.into()));
        }
        let side = crate::relay::HostSide {
            per_message: stateless,
            span_attributes,
            routes_answers: true,
            lists_by_scope: (self.listen.auth.as_ref()).is_some_and(|a| a.lists_by_scope()),
        };
        let relay_task = tokio::spawn(async move {
            let mut router = router;
            let outcome = relay(
                &hub.rules,
                &hub.options,
                link,
                crate::link::Source::Channel(from_host),
                &mut router,
                side,
            )
            .await;
            let why = match outcome {
                Ok(crate::relay::Ended::HostClosed) => "the session was ended".to_string(),
                Ok(crate::relay::Ended::ServerExited(why)) => why,
                Err(e) => e.to_string(),
            };
            if let Ok(mut routes) = router.session.routes.lock() {
                // Requests the relay never read (still in the channel when
                // the server went) are answered too: an event stream must
                // not end without the answer it was opened for.
                for (_, waiter) in routes.waiting.drain() {
                    let error = RpcError::new(
                        RpcError::INTERNAL_ERROR,
                        format!("mcp-resolve proxy: {why} before answering"),
                        None,
                    );
                    let _ = waiter.stream.send(error_response(&waiter.host_id, &error));
                }
                routes.by_host_id.clear();
                routes.ended = Some(why);
                // Streams still open end here.
                routes.standalone = None;
            }
            router.session.close();
        });
        if let Ok(mut relays) = self.relays.lock() {
            relays.retain(|task| !task.is_finished());
            relays.push(relay_task);
        }
        Ok(session)
    }

    /// The shared session of requests that name none, opened on first use.
    pub(super) async fn stateless(self: &Arc<Self>) -> Result<Arc<HostSession>, UpstreamError> {
        let mut shared = self.stateless.lock().await;
        if let Some(session) = shared.as_ref()
            && session.sender().is_some()
        {
            return Ok(Arc::clone(session));
        }
        if shared.is_some()
            && let Some(telemetry) = &self.options.sinks.telemetry
        {
            // The shared session's server ended: a new one takes its place.
            telemetry.measure(mcp_resolve_telemetry::Measure::UpstreamRestart);
        }
        let session = self.open(true, None)?;
        *shared = Some(Arc::clone(&session));
        Ok(session)
    }

    pub(super) fn session(&self, id: &str) -> Option<Arc<HostSession>> {
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
    pub(super) fn end_idle(&self, idle: Duration) {
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
    pub(super) async fn close_all(&self) {
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
        // Each relay closes its server within its grace periods; they are
        // waited for together, so shutdown takes one such wait, not one per
        // session. A server still there after it is killed with its process
        // group when the proxy exits.
        let _ = tokio::time::timeout(
            crate::link::GRACE * 3,
            futures_util::future::join_all(relays),
        )
        .await;
    }
}

/// The raw `progressToken` of a request's params' `_meta`, a slice of
/// `params`' text (to splice another in its place).
pub(super) fn request_progress_token(params: Raw<'_>) -> Option<&RawValue> {
    #[derive(Deserialize)]
    struct Request<'a> {
        #[serde(rename = "_meta", borrow)]
        meta: Option<&'a RawValue>,
    }
    let request: Request<'_> = mcp_resolve_protocol::json::from_str(params.get()).ok()?;
    progress_token_raw(request.meta?)
}

/// The raw `_meta["io.modelcontextprotocol/subscriptionId"]` of a
/// notification's params (the `subscriptions/listen` request it belongs
/// to), a slice of their text.
fn subscription_id_raw(params: Raw<'_>) -> Option<&RawValue> {
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(rename = "_meta", borrow)]
        meta: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct Meta<'a> {
        #[serde(rename = "io.modelcontextprotocol/subscriptionId", borrow)]
        id: Option<&'a RawValue>,
    }
    let params: Params<'_> = mcp_resolve_protocol::json::from_str(params.get()).ok()?;
    mcp_resolve_protocol::json::from_str::<Meta<'_>>(params.meta?.get())
        .ok()?
        .id
}

/// The raw `progressToken` member of `object` (a progress notification's
/// params, or a request's `_meta`), a slice of its text.
fn progress_token_raw(object: &RawValue) -> Option<&RawValue> {
    #[derive(Deserialize)]
    struct Token<'a> {
        #[serde(rename = "progressToken", borrow)]
        token: Option<&'a RawValue>,
    }
    mcp_resolve_protocol::json::from_str::<Token<'_>>(object.get())
        .ok()?
        .token
}

#[cfg(test)]
mod tests;
