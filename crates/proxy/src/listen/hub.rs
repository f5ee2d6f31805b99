//! The sessions of `--listen`: one proxy session per host session (and one
//! shared by the requests that name none), and the routing of each
//! session's messages to the host's open exchanges — the answer to a
//! request on its own exchange, progress on the stream of the request it
//! concerns, everything else on the host's `GET` stream or, while none is
//! open, the newest event stream.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_resolve_runtime::protocol::{Envelope, Screen, error_response, id_key, splice};
use mcp_resolve_runtime::{Dialect, RpcError};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::ListenOptions;
use crate::link::{Input, Link, Upstream};
use crate::relay::{HostSink, Options, ProxyRules, log, relay};
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
}

#[derive(Default)]
pub(super) struct Routes {
    /// Requests waiting for their answer, by the proxy's id.
    pub(super) waiting: HashMap<String, Waiter>,
    /// The proxy's id of each waiting request, by the host's (for
    /// `notifications/cancelled`).
    pub(super) by_host_id: HashMap<String, Value>,
    /// The waiting request of each progress token.
    pub(super) progress: HashMap<String, String>,
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
    pub(super) token: Option<String>,
    pub(super) opened: u64,
}

impl HostSession {
    pub(super) fn new(to_relay: mpsc::Sender<Input>) -> Arc<Self> {
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

    pub(super) fn sender(&self) -> Option<mpsc::Sender<Input>> {
        self.to_relay.lock().ok()?.clone()
    }

    /// Ends the session: its proxy session sees the host leave.
    pub(super) fn close(&self) {
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
            // The host's own id goes back in where the proxy's was written.
            let line = envelope
                .id_raw
                .and_then(|raw| splice(&line, raw.get(), &waiter.host_id.to_string()))
                .unwrap_or_else(|| line.clone());
            let _ = waiter.stream.send(line);
            return;
        }
        // Progress of a waiting request goes to its stream.
        if envelope.method.as_deref() == Some("notifications/progress")
            && let Some(token) = envelope.params.and_then(|p| progress_token(p, false))
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
    /// The JSON-RPC screen of one `POST` (each message on its own).
    pub(super) fn screen(&self) -> Screen {
        match self.rules.dialect() {
            Dialect::Extension => Screen::checking(self.rules.method()),
            _ => Screen::default(),
        }
        .per_message()
    }

    /// Opens a session: a server of its own and a proxy session between.
    /// `session_id`: the `Mcp-Session-Id` it will have (none for the
    /// shared session of requests that name none).
    pub(super) fn open(
        self: &Arc<Self>,
        stateless: bool,
        session_id: Option<&str>,
    ) -> Result<Arc<HostSession>, UpstreamError> {
        let link = Link::open(&self.upstream, self.options.max_message_bytes, stateless)?;
        let (to_relay, from_host) = mpsc::channel(64);
        let session = HostSession::new(to_relay);
        let hub = Arc::clone(self);
        let router = Router(Arc::clone(&session));
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
            if let Ok(mut routes) = router.0.routes.lock() {
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
    pub(super) async fn stateless(self: &Arc<Self>) -> Result<Arc<HostSession>, UpstreamError> {
        let mut shared = self.stateless.lock().await;
        if let Some(session) = shared.as_ref()
            && session.sender().is_some()
        {
            return Ok(Arc::clone(session));
        }
        if shared.is_some()
            && let Some(telemetry) = &self.options.guard.telemetry
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

/// The `progressToken` of a request's params (`_meta.progressToken`, when
/// `in_meta`) or of a progress notification's (`progressToken`), as an id
/// key, read without building the params.
pub(super) fn progress_token(params: &RawValue, in_meta: bool) -> Option<String> {
    #[derive(Deserialize)]
    struct Token {
        #[serde(rename = "progressToken")]
        token: Option<Value>,
    }
    #[derive(Deserialize)]
    struct Request<'a> {
        #[serde(rename = "_meta", borrow)]
        meta: Option<&'a RawValue>,
    }
    let token = if in_meta {
        let request: Request<'_> = serde_json::from_str(params.get()).ok()?;
        serde_json::from_str::<Token>(request.meta?.get())
            .ok()?
            .token?
    } else {
        serde_json::from_str::<Token>(params.get()).ok()?.token?
    };
    Some(id_key(&token))
}
