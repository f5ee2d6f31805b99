//! One proxy session as a state machine, with no I/O: it takes events — a
//! message from the host, a message from the server, the clock — and
//! returns effects — a message for the host, a message for the server, an
//! audit record, a line for the log. Everything a session knows lives
//! here: the requests in flight and how their answers are rewritten, the
//! calls held while the user is asked, the tickets of 2026-07-28 questions,
//! what the pin found in the server's listings, the static annotations the
//! server listed, the capabilities the host declared.
//!
//! The proxy crate's transports (stdio, `--listen`, a child or an HTTP
//! endpoint upstream) only move lines and carry out effects. Time comes in
//! with each event ([`Clock`]), and the adapter asks
//! [`Session::next_deadline`] when to tick next, so a test drives a
//! session with scripted exchanges and a clock of its own.
//!
//! Invariants the tests hold (`session/tests/`): every host request is answered
//! exactly once, with its own id; nothing the server says is duplicated or
//! lost except what is documented (a late answer to a request that timed
//! out, a line that is not JSON-RPC); no input panics.

mod call;
mod effect;
mod host;
mod read;
mod relist;
mod server;
#[cfg(test)]
mod tests;
mod trace;
mod verify;

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant, SystemTime};

use mcp_resolve_protocol::Screen;
use mcp_resolve_runtime::{Annotations, RpcError};
use serde_json::Value;

use crate::consent::Tickets;
use crate::guard::Guard;
use crate::judge::Judged;
use crate::pinned::{Baselines, PinState};
use crate::record::Record;
use crate::rules::{ProxyRules, Rewrite};
use crate::state::Claim;
use mcp_resolve_protocol::{error_response, id_key};

pub use self::effect::{Answer, Effect};
pub use self::read::{HostMessage, Input, range_in, read_host, reads_params};
use self::relist::Relist;
pub use self::trace::Ids;
pub use self::trace::{adopt_http_traceparent, with_http_traceparent};

/// The time of an event: the monotonic clock for deadlines, the wall clock
/// for audit records.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    /// For deadlines.
    pub now: Instant,
    /// For the `time` of audit records.
    pub wall: SystemTime,
}

/// A session's settings.
pub struct Config {
    /// How long a forwarded request may wait for the server's answer;
    /// `None`: forever.
    pub timeout: Option<Duration>,
    /// The largest message read from either side (for the error a longer
    /// one gets).
    pub max_message_bytes: usize,
    /// The host's messages each arrive on their own (HTTP requests that
    /// name no session), not on one stream.
    pub per_message: bool,
    /// Compare the rules with the server's first `tools/list` answer, and
    /// log where they disagree.
    pub compare_listing: bool,
    /// Where span and trace ids come from (telemetry on).
    pub ids: Ids,
    /// What every span of the session says of its transport
    /// (`network.transport`, `mcp.session.id`, …; telemetry on).
    pub span_attributes: Vec<(&'static str, Value)>,
    /// Several instances share a store (`--redis`): a request state is
    /// used only when the store says this instance claimed it
    /// ([`Session::claimed`]).
    pub shared: bool,
    /// Audit records are wanted (an audit log, or telemetry): the session
    /// builds them, and judges every call it could otherwise pass unread.
    pub records: bool,
    /// Spans and measures are wanted (telemetry on).
    pub traces: bool,
    /// The transport routes answers by the proxy's id (`--listen`): the
    /// server's answer to a request goes out as [`Effect::Answer`], with
    /// what routing it needs, so that it is not read again.
    pub routes_answers: bool,
    /// A host's `tools/list` answer lists only the tools its bearer token
    /// can call (`--list-by-scope`; [`judge::listed_to`]).
    ///
    /// [`judge::listed_to`]: crate::judge::listed_to
    pub lists_by_scope: bool,
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
    /// The request's `_meta.progressToken` (its `id_key`), if it asked
    /// for progress: silenced once the host was told the request timed out.
    progress: Option<String>,
    /// A `tools/list` for the first page (no cursor): its answer starts a
    /// reading of the whole list.
    first_page: bool,
    /// A `tools/list` whose answer lists only the tools a token granting
    /// these scopes can call ([`Config::lists_by_scope`]).
    listed_for: Option<std::collections::BTreeSet<String>>,
    /// Its spans, with telemetry on.
    trace: Option<trace::Traced>,
}

/// The `id_key` of the progress token a request's `params` ask for.
fn progress_token(params: Option<&Value>) -> Option<String> {
    params
        .and_then(|p| p.get("_meta"))
        .and_then(|meta| meta.get("progressToken"))
        .map(mcp_resolve_protocol::id_key)
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
    /// When the question was asked.
    asked: Instant,
    /// When the question is given up (`--ask-timeout`).
    deadline: Instant,
    /// The call's spans, with telemetry on.
    trace: Option<trace::Traced>,
}

/// How a session ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The host closed its side; the server was stopped.
    HostClosed,
    /// The server exited or closed its output; pending requests were
    /// answered with an error.
    ServerExited(String),
}

/// One proxy session (see the module documentation).
pub struct Session<'s> {
    rules: &'s ProxyRules,
    guard: &'s Guard,
    timeout: Option<Duration>,
    max_message_bytes: usize,
    screen: Screen,
    /// Forwarded requests, by the key of their id.
    pending: HashMap<String, Pending>,
    /// Calls held while the user is asked, by the key of the question's id.
    asks: HashMap<String, Held>,
    questions: u64,
    /// The proxy's own `tools/list` after the server announced a change.
    relist: Option<Relist>,
    relists: u64,
    /// The `_meta` of the host's last `tools/list`, for the proxy's own.
    list_meta: Option<Value>,
    /// What the pin found in the server's listings.
    pins: PinState,
    /// The static annotations the server listed, by tool: those of every
    /// tool where a listing is read as a tree, and of the tools the rules
    /// do not describe where it is read as text (a call to a tool the
    /// rules describe is judged by the rules alone).
    listed: HashMap<String, Annotations>,
    /// Requests the host already got a timeout error for, with their
    /// progress tokens: a late answer is dropped (a second response to one
    /// id would break JSON-RPC), and so is their progress.
    expired: HashMap<String, Option<String>>,
    /// The progress tokens of requests that timed out.
    silenced: HashSet<String>,
    /// The capabilities the host declared at `initialize` (legacy sessions).
    session_caps: Option<Value>,
    /// What the host said of itself at `initialize`, for the policy.
    facts: mcp_resolve_policy::SessionFacts,
    /// The rules are still to be compared with the server's listing
    /// ([`Config::compare_listing`]; done at the first `tools/list` answer).
    compare_pending: bool,
    /// Whether the server declared that it resolves calls itself: the
    /// resolutions of tools the rules do not describe are then its own.
    server_resolves: bool,
    /// What the session declared (SEP-3140, [`Guard::declare`]).
    declared: crate::declare::Declared,
    /// What the session verified of the server's declarations (`--trust`).
    verification: verify::Verification,
    /// Who the host's message being handled speaks for (its bearer token,
    /// `--auth-issuer`).
    principal: Option<mcp_resolve_policy::Principal>,
    /// Where span and trace ids come from.
    ids: Ids,
    /// What every span says of the transport.
    span_attributes: Vec<(&'static str, Value)>,
    /// What every span of the session carries: the transport's, and the
    /// protocol's version once `initialize` named it.
    span_shared: std::sync::Arc<[(mcp_resolve_telemetry::Key, Value)]>,
    /// Several instances share a store: the claims of the message being
    /// handled.
    shared: bool,
    claims: HashMap<String, Claim>,
    /// Audit records are wanted ([`Config::records`]).
    records: bool,
    /// [`Config::lists_by_scope`].
    lists_by_scope: bool,
    /// Answers go out as [`Effect::Answer`] ([`Config::routes_answers`]).
    routes_answers: bool,
    /// Spans and measures are wanted ([`Config::traces`]).
    traces: bool,
    /// Each tool as the servers behind all instances first listed it, for
    /// the pin, until the listing it was read for is shown.
    baselines: Option<Baselines>,
    /// The spans of the host request being handled, until it is forwarded,
    /// held for a question, or answered by the proxy.
    opening: Option<trace::Traced>,
    ended: Option<Ended>,
}

impl<'s> Session<'s> {
    /// A new session serving `rules` under `guard`.
    pub fn new(rules: &'s ProxyRules, guard: &'s Guard, config: Config) -> Session<'s> {
        let mut screen = rules.screen();
        if config.per_message {
            screen = screen.per_message();
        }
        Session {
            rules,
            guard,
            timeout: config.timeout,
            max_message_bytes: config.max_message_bytes,
            screen,
            pending: HashMap::new(),
            asks: HashMap::new(),
            questions: 0,
            relist: None,
            relists: 0,
            list_meta: None,
            pins: PinState::default(),
            listed: HashMap::new(),
            expired: HashMap::new(),
            silenced: HashSet::new(),
            session_caps: None,
            facts: Default::default(),
            server_resolves: false,
            declared: Default::default(),
            verification: Default::default(),
            principal: None,
            compare_pending: config.compare_listing,
            ids: config.ids,
            span_shared: trace::shared_attributes(&config.span_attributes, None),
            span_attributes: config.span_attributes,
            shared: config.shared,
            records: config.records,
            lists_by_scope: config.lists_by_scope,
            traces: config.traces,
            routes_answers: config.routes_answers,
            claims: HashMap::new(),
            baselines: None,
            opening: None,
            ended: None,
        }
    }

    /// How the session ended, once it has.
    pub fn ended(&self) -> Option<&Ended> {
        self.ended.as_ref()
    }

    /// What the shared store said of request state `id` (its
    /// [`crate::state`] id), claimed by the transport before it hands the
    /// host's message carrying it to [`Session::from_host`].
    pub fn claimed(&mut self, id: String, claim: Claim) {
        self.claims.insert(id, claim);
    }

    /// Whether the server's message `text` is a `tools/list` answer whose
    /// tools the pin compares with the first listings the instances share
    /// (`--pin` and `--redis`): the transport then reads them from the store
    /// and hands them over ([`Session::shared_baselines`]) first.
    pub fn wants_baselines(&self, text: &str) -> bool {
        if !self.shared || self.guard.pin.is_none() {
            return false;
        }
        let Some(message) = mcp_resolve_protocol::Envelope::of(text) else {
            return false;
        };
        let Some(key) = message.id.as_ref().filter(|_| message.result).map(id_key) else {
            return false;
        };
        self.relist.as_ref().is_some_and(|l| l.key() == key)
            || self
                .pending
                .get(&key)
                .is_some_and(|p| matches!(p.rewrite, Rewrite::Tools { .. }))
    }

    /// The first listings the instances share, for the `tools/list` answer
    /// handed to [`Session::from_server`] next (merged with those of earlier
    /// pages of the same listing).
    pub fn shared_baselines(&mut self, baselines: Baselines) {
        self.baselines = Some(match (self.baselines.take(), baselines) {
            (Some(Ok(mut earlier)), Ok(more)) => {
                earlier.extend(more);
                Ok(earlier)
            }
            (Some(Err(why)), _) | (_, Err(why)) => Err(why),
            (None, now) => now,
        });
    }

    /// Something from the host.
    pub fn from_host(&mut self, input: Input, clock: Clock, out: &mut Vec<Effect>) {
        if self.ended.is_some() {
            return;
        }
        self.host_input(input, clock, out);
        // A claim is good for the message it was made for.
        self.claims.clear();
    }

    fn host_input(&mut self, input: Input, clock: Clock, out: &mut Vec<Effect>) {
        match input {
            Input::Line(text) => {
                self.principal = None;
                self.host_line(text, clock, out);
            }
            Input::Related(text, _) => {
                self.principal = None;
                self.host_line(text, clock, out);
            }
            Input::Read(message, principal) => {
                self.principal = principal;
                self.host_read(*message, clock, out);
            }
            Input::TooLong => {
                let error = RpcError::new(
                    RpcError::INVALID_REQUEST,
                    format!(
                        "Invalid Request: the message is larger than {} bytes",
                        self.max_message_bytes
                    ),
                    None,
                );
                out.push(Effect::Host(error_response(&Value::Null, &error)));
            }
            Input::NotUtf8 => {
                let error = RpcError::new(
                    RpcError::PARSE_ERROR,
                    "Parse error: the line is not UTF-8",
                    None,
                );
                out.push(Effect::Host(error_response(&Value::Null, &error)));
            }
            Input::Ended(_) => self.host_closed(clock, out),
        }
    }

    /// Something from the server.
    pub fn from_server(&mut self, input: Input, clock: Clock, out: &mut Vec<Effect>) {
        if self.ended.is_some() {
            return;
        }
        match input {
            Input::Line(text) | Input::Related(text, _) => self.server_line(text, clock, out),
            Input::Read(message, _) => self.server_line(message.text, clock, out),
            Input::TooLong => out.push(Effect::Log(format!(
                "the server wrote a message over {} bytes; skipped",
                self.max_message_bytes
            ))),
            Input::NotUtf8 => out.push(Effect::Log(
                "the server wrote a line that is not UTF-8; skipped".into(),
            )),
            Input::Ended(why) => self.server_exited(why, clock, out),
        }
    }

    /// The host went away: the session ends, and the calls it leaves
    /// unanswered or unasked get their audit lines.
    pub fn host_closed(&mut self, clock: Clock, out: &mut Vec<Effect>) {
        if self.ended.is_some() {
            return;
        }
        self.ended = Some(Ended::HostClosed);
        self.abandon(clock, out);
    }

    /// The server exited or closed its output (`why`): every request in
    /// flight is answered with an error, and the session ends.
    pub fn server_exited(&mut self, why: String, clock: Clock, out: &mut Vec<Effect>) {
        if self.ended.is_some() {
            return;
        }
        for (key, mut request) in drain_sorted(&mut self.pending) {
            let from = out.len();
            if let Some(call) = request.call.take() {
                self.audit_call(call, clock, "server exited", false, out);
            }
            if let Some(traced) = request.trace.take() {
                self.end_spans(traced, clock, Some("server_exited".into()), from, out);
            }
            let id: Value = mcp_resolve_protocol::json::from_str(&key).unwrap_or(Value::Null);
            let error = RpcError::new(
                RpcError::INTERNAL_ERROR,
                format!("{why} before answering `{}`", request.method),
                None,
            );
            out.push(Effect::Host(error_response(&id, &error)));
        }
        // Listings waiting for the server's manifest.
        for key in self.verification.take_held_requests() {
            let id: Value = mcp_resolve_protocol::json::from_str(&key).unwrap_or(Value::Null);
            let error = RpcError::new(
                RpcError::INTERNAL_ERROR,
                format!("{why} before answering `tools/list`"),
                None,
            );
            out.push(Effect::Host(error_response(&id, &error)));
        }
        // Requests for the signed manifest waiting for the proxy's listing.
        let waiting = self.relist.take().map(|l| l.waiting).unwrap_or_default();
        for id in waiting {
            let error = RpcError::new(
                RpcError::INTERNAL_ERROR,
                format!("{why} before listing its tools for the signed manifest"),
                None,
            );
            out.push(Effect::Host(error_response(&id, &error)));
        }
        // Calls held for a question are the host's requests too.
        let mut held: Vec<&Held> = self.asks.values().collect();
        held.sort_by_key(|h| h.id.to_string());
        for held in held {
            let error = RpcError::new(
                RpcError::INTERNAL_ERROR,
                format!("{why} before answering `tools/call`"),
                None,
            );
            out.push(Effect::Host(error_response(&held.id, &error)));
        }
        self.ended = Some(Ended::ServerExited(why));
        self.measure(
            mcp_resolve_telemetry::Measure::UpstreamError { kind: "exited" },
            out,
        );
        self.abandon_as(clock, "server_exited", out);
    }

    /// Audit lines for what is left when the session stops, however it
    /// stops (a transport dropped on `SIGTERM` included): calls forwarded
    /// and never answered, calls held for a question never answered.
    pub fn abandon(&mut self, clock: Clock, out: &mut Vec<Effect>) {
        self.abandon_as(clock, "unanswered", out);
    }

    /// [`Session::abandon`], the spans of what is left ended with `error`
    /// as their `error.type`.
    fn abandon_as(&mut self, clock: Clock, error: &str, out: &mut Vec<Effect>) {
        if !self.records {
            self.pending.clear();
            self.asks.clear();
            return;
        }
        for (_, mut request) in drain_sorted(&mut self.pending) {
            let from = out.len();
            if let Some(call) = request.call.take() {
                self.audit_call(call, clock, "unanswered", false, out);
            }
            if let Some(traced) = request.trace.take() {
                self.end_spans(traced, clock, Some(error.into()), from, out);
            }
        }
        for (_, mut held) in drain_sorted(&mut self.asks) {
            let from = out.len();
            let wait = clock.now.saturating_duration_since(held.asked);
            self.measure(
                mcp_resolve_telemetry::Measure::AskClosed {
                    outcome: "unasked",
                    wait,
                },
                out,
            );
            out.push(Effect::Audit(held.judged.record(
                clock.wall,
                "unasked",
                held.arguments.as_ref(),
            )));
            if let Some(mut traced) = held.trace.take() {
                trace::asked(&mut traced, "unasked", wait);
                self.end_spans(traced, clock, Some(error.into()), from, out);
            }
        }
    }

    /// When the session next needs [`Session::tick`]: the earliest
    /// deadline of a forwarded request (`--timeout`), a question
    /// (`--ask-timeout`) or the proxy's own listing.
    pub fn next_deadline(&self) -> Option<Instant> {
        let requests = self.pending.values().filter_map(|p| p.deadline);
        let questions = self.asks.values().map(|h| h.deadline);
        let listing = self.relist.as_ref().map(Relist::deadline);
        let manifest = self.verification.deadline();
        requests
            .chain(questions)
            .chain(listing)
            .chain(manifest)
            .min()
    }

    /// The clock reached `clock.now`: questions, listings and requests
    /// whose time is up are given up.
    pub fn tick(&mut self, clock: Clock, out: &mut Vec<Effect>) {
        if self.ended.is_some() {
            return;
        }
        self.give_up_questions(clock, out);
        self.give_up_listing(clock, out);
        self.give_up_manifest(clock, out);
        self.give_up_requests(clock, out);
    }

    /// The audit line of a forwarded call, if the guard keeps a log.
    fn audit_call(
        &self,
        call: CallAudit,
        clock: Clock,
        outcome: &'static str,
        answered: bool,
        out: &mut Vec<Effect>,
    ) {
        if self.records {
            let latency = answered.then(|| clock.now.saturating_duration_since(call.started));
            out.push(Effect::Audit(Record::call(
                call.judged,
                clock.wall,
                outcome,
                latency,
                call.arguments,
            )));
        }
    }

    /// The states of 2026-07-28 questions, under the guard's keys.
    fn tickets(&self) -> Tickets<'_> {
        Tickets {
            keys: &self.guard.state,
            spent: &self.guard.spent,
            claims: self.shared.then_some(&self.claims),
            ttl: self.guard.ask_timeout,
        }
    }

    /// A measure for the metrics, with telemetry on.
    fn measure(&self, measure: mcp_resolve_telemetry::Measure, out: &mut Vec<Effect>) {
        if self.tracing() {
            out.push(Effect::Measure(measure));
        }
    }

    /// An audit record, if the guard keeps a log.
    fn audit<R: Into<Record>>(&self, record: impl FnOnce() -> R, out: &mut Vec<Effect>) {
        if self.records {
            out.push(Effect::Audit(record().into()));
        }
    }

    fn give_up_questions(&mut self, clock: Clock, out: &mut Vec<Effect>) {
        let mut given_up: Vec<String> = self
            .asks
            .iter()
            .filter(|(_, held)| held.deadline <= clock.now)
            .map(|(question, _)| question.clone())
            .collect();
        given_up.sort();
        for question in given_up {
            let closed =
                self.close_question(&question, "timed out", "the question timed out", clock, out);
            let Some((mut held, from, wait)) = closed else {
                continue;
            };
            let why = format!(
                "was not confirmed: the user did not answer within {}s (mcp-resolve proxy --ask-timeout)",
                self.guard.ask_timeout.as_secs()
            );
            out.push(Effect::Host(error_response(
                &held.id,
                &held.judged.refusal(&why),
            )));
            if let Some(mut traced) = held.trace.take() {
                trace::asked(&mut traced, "timed out", wait);
                self.end_answered(traced, &held.id, clock, from, out);
            }
        }
    }

    /// The key of the question asked about the held call the host calls
    /// `id`, if one is held. A host that reused `id` while its first call
    /// was held has two: the one asked first is taken, whatever the order
    /// of the map (the keys share a prefix and count up, so the shorter
    /// key, then the lesser, is the older).
    fn held_question(&self, id: &Value) -> Option<String> {
        let key = id_key(id);
        self.asks
            .iter()
            .filter(|(_, held)| id_key(&held.id) == key)
            .map(|(question, _)| question)
            .min_by_key(|question| (question.len(), question.as_str()))
            .cloned()
    }

    /// The host cancelled a held call: it is withdrawn unforwarded (audited
    /// `withdrawn`), and the question about it is cancelled in the host. No
    /// answer goes to the host, as for any request it cancelled.
    fn withdraw_question(&mut self, question: &str, clock: Clock, out: &mut Vec<Effect>) {
        let reason = "the host cancelled the call";
        let Some((mut held, from, wait)) =
            self.close_question(question, "withdrawn", reason, clock, out)
        else {
            return;
        };
        if let Some(mut traced) = held.trace.take() {
            trace::asked(&mut traced, "withdrawn", wait);
            self.end_spans(traced, clock, Some("cancelled".into()), from, out);
        }
    }

    /// Closes `question` without the user's answer: measured and audited as
    /// `outcome`, and cancelled in the host for `reason`. The held call,
    /// where this question's effects start in `out`, and how long the
    /// question was open; `None` if it was not open.
    fn close_question(
        &mut self,
        question: &str,
        outcome: &'static str,
        reason: &str,
        clock: Clock,
        out: &mut Vec<Effect>,
    ) -> Option<(Held, usize, Duration)> {
        let held = self.asks.remove(question)?;
        let from = out.len();
        let wait = clock.now.saturating_duration_since(held.asked);
        self.measure(
            mcp_resolve_telemetry::Measure::AskClosed { outcome, wait },
            out,
        );
        self.audit(
            || {
                held.judged
                    .record(clock.wall, outcome, held.arguments.as_ref())
            },
            out,
        );
        let cancelled = serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {
                "requestId": mcp_resolve_protocol::json::from_str::<Value>(question).unwrap_or(Value::Null),
                "reason": reason,
            },
        });
        out.push(Effect::Host(cancelled.to_string()));
        Some((held, from, wait))
    }

    fn give_up_listing(&mut self, clock: Clock, out: &mut Vec<Effect>) {
        if self
            .relist
            .as_ref()
            .is_some_and(|l| l.deadline() <= clock.now)
            && let Some(listing) = self.relist.take()
        {
            self.expired.insert(listing.key(), None);
            if let Some(held) = listing.held {
                out.push(Effect::Log(
                    "the server did not answer the proxy's tools/list in time; the host is told of the change anyway".into(),
                ));
                out.push(Effect::Host(held));
            }
            for id in listing.waiting {
                let error = RpcError::new(
                    RpcError::INTERNAL_ERROR,
                    "the server did not list its tools in time for the signed manifest",
                    None,
                );
                out.push(Effect::Host(error_response(&id, &error)));
            }
        }
    }

    fn give_up_requests(&mut self, clock: Clock, out: &mut Vec<Effect>) {
        let mut overdue: Vec<String> = self
            .pending
            .iter()
            .filter(|(_, p)| p.deadline.is_some_and(|d| d <= clock.now))
            .map(|(id, _)| id.clone())
            .collect();
        overdue.sort();
        for key in overdue {
            let Some(mut request) = self.pending.remove(&key) else {
                continue;
            };
            let from = out.len();
            if let Some(call) = request.call.take() {
                self.audit_call(call, clock, "timed out", false, out);
            }
            self.measure(
                mcp_resolve_telemetry::Measure::UpstreamError { kind: "timeout" },
                out,
            );
            if let Some(traced) = request.trace.take() {
                self.end_spans(traced, clock, Some("timeout".into()), from, out);
            }
            let id: Value = mcp_resolve_protocol::json::from_str(&key).unwrap_or(Value::Null);
            let after = self.timeout.unwrap_or_default().as_secs();
            // The proxy stops waiting, so the server is told (a sender
            // SHOULD cancel a request it gives up on), and progress for it
            // no longer reaches the host, which has its answer.
            out.push(Effect::Server(
                serde_json::json!({
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {
                        "requestId": id,
                        "reason": format!("no answer within {after}s (mcp-resolve proxy --timeout)"),
                    },
                })
                .to_string(),
            ));
            if let Some(token) = &request.progress {
                self.silenced.insert(token.clone());
            }
            self.expired.insert(key.clone(), request.progress.clone());
            out.push(Effect::Log(format!(
                "no answer to `{}` within {after}s",
                request.method
            )));
            let error = RpcError::new(
                RpcError::INTERNAL_ERROR,
                format!(
                    "the server did not answer `{}` within {after}s (mcp-resolve proxy --timeout)",
                    request.method
                ),
                None,
            );
            out.push(Effect::Host(error_response(&id, &error)));
        }
    }
}

/// The wall clock of `clock`, in seconds since the epoch.
fn unix_seconds(clock: Clock) -> u64 {
    clock
        .wall
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A map's entries, taken out in the order of their keys (so what a
/// session leaves is answered and audited in the same order every run).
fn drain_sorted<T>(map: &mut HashMap<String, T>) -> Vec<(String, T)> {
    let mut entries: Vec<(String, T)> = map.drain().collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries
}
