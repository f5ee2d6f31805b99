//! Messages from the host: screened, then answered by the proxy (what it
//! owns, what the guard refuses, the questions it asks), or forwarded to
//! the server with what its answer needs remembered.

use serde_json::{Map, Value, json};

use mcp_resolve_protocol::{ParamsRead, Screened, may_name_meta};
use mcp_resolve_runtime::RpcError;

use super::call::Step;
use super::read::{HostMessage, reads_params};
use super::relist::Relist;
use super::{CallAudit, Clock, Effect, Held, Pending, Session};
use crate::consent::{ASK_PREFIX, ask_request};
use crate::declare::MANIFEST_METHOD;
use crate::quick::{Params, QuickCall};
use crate::rules::{Answer, Rewrite};
use mcp_resolve_protocol::{error_response, id_key};

/// A result response for request `id` (written as JSON text) whose result
/// is the JSON text `result`.
pub(super) fn result_line(id: &Value, result: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
}

/// Whether `raw` (valid JSON) is an object with no members.
fn is_empty_object(raw: &str) -> bool {
    raw.strip_prefix('{')
        .and_then(|rest| rest.strip_suffix('}'))
        .is_some_and(|inner| {
            inner
                .bytes()
                .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        })
}

impl Session<'_> {
    /// One line from the host, read by the session's screen.
    pub(super) fn host_line(&mut self, text: String, clock: Clock, out: &mut Vec<Effect>) {
        // The screen reads the envelope once, and the params of the methods
        // the proxy reads; what passes goes on with them.
        let resolve_method = self.rules.method();
        let parses = |method: &str| reads_params(method, resolve_method);
        // A call nothing would judge may be read on its text.
        let on_text = self.reads_calls_on_text();
        let traces = self.tracing();
        let quick = |method: &str, raw| match method {
            // (Params that may name `_meta` are not read so: the reading
            // gives up on them.)
            "tools/call" if on_text && !may_name_meta(raw) => QuickCall::of(raw).map(Params::Call),
            // A listing's params are most often `{}`: what a parse would
            // give, without one.
            "tools/list" if is_empty_object(raw) => Some(Params::Tree(Value::Object(Map::new()))),
            // Traced, a `_meta` is found in the parse, for the proxy's
            // `traceparent` to be placed in it without another.
            _ if traces && may_name_meta(raw) => ParamsRead::of(raw).map(Params::Read),
            _ => None,
        };
        let (mut read, call) = match self.screen.read_parsing_with(&text, parses, quick) {
            Ok((message, Some(Params::Call(call)))) => {
                (HostMessage::of(&text, &message, None), Some(call))
            }
            Ok((message, Some(Params::Tree(params)))) => {
                (HostMessage::of(&text, &message, Some(params)), None)
            }
            Ok((message, Some(Params::Read(params)))) => {
                (HostMessage::read(&text, &message, Some(params)), None)
            }
            Ok((message, None)) => (HostMessage::of(&text, &message, None), None),
            Err(Screened::Reply(answer)) => {
                out.push(Effect::Host(answer.to_string()));
                return;
            }
            Err(_) => return,
        };
        // A call read on its text is decided on it when it can be; else its
        // params are parsed (they were read as a tree reader reads them, so
        // they parse) and it is decided the whole way.
        let decided = match call {
            Some(call) if read.is_request() => {
                let decided = self.decide_call_on_text(&call, clock);
                if decided.is_none() {
                    read.params = read
                        .raw_params()
                        .and_then(|raw| mcp_resolve_protocol::json::from_str(raw).ok());
                }
                decided
            }
            _ => None,
        };
        read.text = text;
        self.host_message(read, decided, clock, out);
    }

    /// A host's message its transport read ([`super::Input::Read`]): the
    /// session's screen is told a request went on, and nothing is read
    /// again.
    pub(super) fn host_read(&mut self, read: HostMessage, clock: Clock, out: &mut Vec<Effect>) {
        if read.is_request()
            && let Some(method) = &read.method
        {
            self.screen.passed(method);
        }
        self.host_message(read, None, clock, out);
    }

    /// A host's message, read: answered here, or forwarded. `decided`: a
    /// call's step, when it was decided on its text.
    fn host_message(
        &mut self,
        read: HostMessage,
        decided: Option<Step>,
        clock: Clock,
        out: &mut Vec<Effect>,
    ) {
        let HostMessage {
            text,
            id,
            method,
            params_at,
            params,
            meta_at,
            response,
        } = read;
        if response && self.answers_question(id.as_ref(), &text, clock, out) {
            return;
        }
        let raw_params = params_at.and_then(|at| text.get(at));
        match (method.as_deref(), id) {
            (Some("tools/call"), Some(id)) => {
                let from = out.len();
                let tool = params
                    .as_ref()
                    .and_then(|p| p.get("name"))
                    .and_then(Value::as_str);
                self.opening = self.open_trace(
                    &text,
                    (raw_params, &meta_at),
                    params.as_ref(),
                    "tools/call",
                    &id,
                    tool,
                    clock,
                );
                let step =
                    decided.unwrap_or_else(|| self.decide_call(&text, params.as_ref(), clock));
                self.host_call(text, id.clone(), step, params.as_ref(), clock, out);
                self.settle_span(&id, clock, from, out);
            }
            (Some(MANIFEST_METHOD), Some(id)) if self.guard.declare.is_some() => {
                let from = out.len();
                self.opening = self.open_trace(
                    &text,
                    (raw_params, &meta_at),
                    None,
                    MANIFEST_METHOD,
                    &id,
                    None,
                    clock,
                );
                self.answer_manifest(id.clone(), clock, out);
                self.settle_span(&id, clock, from, out);
            }
            (Some(method), Some(id)) => {
                let owned = self.rules.owns(method);
                // A cancellation written as a request goes on as any request.
                let params = params.filter(|_| method != "notifications/cancelled");
                let from = out.len();
                let tool = params
                    .as_ref()
                    .filter(|_| owned)
                    .and_then(|p| p.get("name"))
                    .and_then(Value::as_str);
                self.opening = self.open_trace(
                    &text,
                    (raw_params, &meta_at),
                    params.as_ref(),
                    method,
                    &id,
                    tool,
                    clock,
                );
                if owned
                    && let Some(error) = self.answer_owned(method, &id, params.as_ref(), clock, out)
                {
                    // Its answer is known: not read back from `out`.
                    if let Some(traced) = self.opening.take() {
                        self.end_spans(traced, clock, error, from, out);
                    }
                    return;
                }
                let text =
                    self.forward_request(method, &id, params.as_ref(), clock, None, None, text);
                out.push(Effect::Server(text));
            }
            (Some("notifications/cancelled"), None) => {
                let id = params.as_ref().and_then(|p| p.get("requestId"));
                // A call held for the user's answer: the server never saw
                // it, so it is withdrawn here and the cancellation goes no
                // further.
                if let Some(question) = id.and_then(|id| self.held_question(id)) {
                    self.withdraw_question(&question, clock, out);
                    return;
                }
                if let Some(id) = id
                    && let Some(mut request) = self.pending.remove(&id_key(id))
                {
                    let from = out.len();
                    if let Some(call) = request.call.take() {
                        self.audit_call(call, clock, "withdrawn", false, out);
                    }
                    if let Some(traced) = request.trace.take() {
                        self.end_spans(traced, clock, Some("cancelled".into()), from, out);
                    }
                }
                out.push(Effect::Server(text));
            }
            _ => out.push(Effect::Server(text)),
        }
    }

    /// A host's response `text` to request `id` that is the user's answer to
    /// one of the proxy's questions (or to one given up): handled here.
    fn answers_question(
        &mut self,
        id: Option<&Value>,
        text: &str,
        clock: Clock,
        out: &mut Vec<Effect>,
    ) -> bool {
        // The user's answer to a question about a held call.
        if let Some(held) = id.and_then(|id| self.asks.remove(&id_key(id))) {
            self.answered(held, text, clock, out);
            return true;
        }
        // An answer to a question already given up.
        if id
            .and_then(Value::as_str)
            .is_some_and(|id| id.starts_with(ASK_PREFIX))
        {
            out.push(Effect::Log(
                "the host answered a question that was given up (it timed out, or its call was \
                 cancelled); the answer was dropped"
                    .into(),
            ));
            return true;
        }
        false
    }

    /// The spans of the request `id` just handled, if it was neither
    /// forwarded nor held: the proxy answered it (or it waits for the
    /// proxy's own listing, and is not traced).
    fn settle_span(&mut self, id: &Value, clock: Clock, from: usize, out: &mut Vec<Effect>) {
        if let Some(traced) = self.opening.take() {
            self.end_answered(traced, id, clock, from, out);
        }
    }

    /// A `tools/call` (whose params, when they were parsed, are `params`),
    /// decided as `step`: refused, asked about, or forwarded.
    fn host_call(
        &mut self,
        text: String,
        id: Value,
        step: Step,
        params: Option<&Value>,
        clock: Clock,
        out: &mut Vec<Effect>,
    ) {
        match step {
            Step::Refuse { error, record } => {
                if let Some(record) = record {
                    self.audit(|| record, out);
                }
                out.push(Effect::Host(error_response(&id, &error)));
            }
            Step::Invalid { result, record } => {
                self.audit(|| record, out);
                out.push(Effect::Host(result_line(&id, &result)));
            }
            Step::Asked { result, record } => {
                self.audit(|| record, out);
                out.push(Effect::Host(result_line(&id, &result)));
            }
            Step::Hold { judged, arguments } => {
                self.questions += 1;
                let question = format!("{ASK_PREFIX}{}", self.questions);
                out.push(Effect::Host(ask_request(&question, &judged)));
                let deadline = clock.now + self.guard.ask_timeout;
                self.measure(mcp_resolve_telemetry::Measure::AskOpened, out);
                let trace = self.opening.take();
                self.asks.insert(
                    id_key(&json!(question)),
                    Held {
                        text,
                        id,
                        judged,
                        arguments,
                        asked: clock.now,
                        deadline,
                        trace,
                    },
                );
            }
            Step::Forward {
                call,
                consent,
                rewritten,
            } => {
                if rewritten.is_some()
                    && let Some(traced) = &mut self.opening
                {
                    traced.rewritten();
                }
                // Passed on exactly as the host wrote it (an accepted
                // 2026-07-28 call without the proxy's question and state),
                // with the proxy's span as its trace context (telemetry on).
                let text = self.forward_request(
                    "tools/call",
                    &id,
                    params,
                    clock,
                    call,
                    consent,
                    rewritten.unwrap_or(text),
                );
                out.push(Effect::Server(text));
            }
        }
    }

    /// Answers a request the proxy owns (the dialect's resolve method,
    /// `signature`): the answer's `error.type` (an error's code, else
    /// none); `None` when the request is the server's after all.
    fn answer_owned(
        &mut self,
        method: &str,
        id: &Value,
        params: Option<&Value>,
        clock: Clock,
        out: &mut Vec<Effect>,
    ) -> Option<Option<String>> {
        // A tool the pin keeps from the host is not resolved for it either:
        // refused the way its call is.
        if method == self.rules.method()
            && let Some(tool) = params.and_then(|p| p.get("name")).and_then(Value::as_str)
            && let Some(why) = self.guard.unpinned(&self.pins, tool)
        {
            let error = RpcError::new(
                crate::judge::POLICY_REFUSED,
                format!("{why} (mcp-resolve proxy --pin)"),
                Some(json!({"tool": tool, "pinned": false})),
            );
            self.audit(
                || crate::record::Record::resolve(clock.wall, tool, Err(&error), None),
                out,
            );
            out.push(Effect::Host(error_response(id, &error)));
            return Some(Some(error.code.to_string()));
        }
        // A tool the rules do not describe, of a server that resolves for
        // itself: its resolution is the server's (the marker it lists is
        // its own), so the request goes on to it.
        if self.server_resolves
            && method == self.rules.method()
            && params
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .is_some_and(|tool| !self.rules.describes(tool))
        {
            return None;
        }
        let answer = self
            .rules
            .answer(method, params, self.session_caps.as_ref())?;
        let resolution = match &answer {
            Answer::Resolved { outcome, .. } => Some(Ok(outcome.resolution())),
            // A resolution refused (an unknown tool, invalid arguments) is
            // audited too: one line per resolution the proxy answers.
            Answer::Refused(error) => Some(Err(error)),
            Answer::Signature(_) => None,
        };
        if let Some(resolution) = resolution {
            let tool = params
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            let arguments = self
                .guard
                .audit_arguments
                .then(|| params.and_then(|p| p.get("arguments")))
                .flatten();
            self.audit(
                || crate::record::Record::resolve(clock.wall, tool, resolution, arguments),
                out,
            );
        }
        // The result text is spliced in as computed at start.
        // A resolution or a signature is no tool result: only an error has
        // an `error.type`.
        let (line, error) = match answer.reply() {
            Ok(result) => (result_line(id, result), None),
            Err(error) => (error_response(id, error), Some(error.code.to_string())),
        };
        out.push(Effect::Host(line));
        Some(error)
    }

    /// `declarations/manifest`: the signed manifest of what the session
    /// declared; before anything was listed, once the proxy has read the
    /// server's list.
    fn answer_manifest(&mut self, id: Value, clock: Clock, out: &mut Vec<Effect>) {
        let Some(declarer) = &self.guard.declare else {
            return;
        };
        if let Some(listing) = &mut self.relist {
            listing.waiting.push(id);
            return;
        }
        if self.declared.is_empty() {
            self.relists += 1;
            let mut listing = Relist::start(
                self.relists,
                None,
                self.list_meta.as_ref(),
                self.timeout,
                clock.now,
            );
            listing.waiting.push(id);
            out.push(Effect::Server(listing.request(None)));
            self.relist = Some(listing);
            return;
        }
        let signed = declarer.manifest(&mut self.declared, super::unix_seconds(clock));
        out.push(Effect::Host(result_line(&id, &signed.to_string())));
    }

    /// Remembers a request on its way to the server: how its answer is
    /// rewritten, when it is given up, and what its audit line needs.
    #[allow(clippy::too_many_arguments)]
    fn forward_request(
        &mut self,
        method: &str,
        id: &Value,
        params: Option<&Value>,
        clock: Clock,
        call: Option<CallAudit>,
        consent: Option<(String, Value)>,
        text: String,
    ) -> String {
        let mut trace = self.opening.take();
        let text = match &mut trace {
            Some(traced) => Self::traced_text(traced, text, clock),
            None => text,
        };
        let rewrite = match method {
            "initialize" => {
                self.session_caps = params.and_then(|p| p.get("capabilities")).cloned();
                let text = |pointer: &str| {
                    params
                        .and_then(|p| p.pointer(pointer))
                        .and_then(Value::as_str)
                        .map(str::to_string)
                };
                self.facts = mcp_resolve_policy::SessionFacts {
                    protocol_version: text("/protocolVersion"),
                    client_name: text("/clientInfo/name"),
                };
                if self.tracing() {
                    self.span_shared = super::trace::shared_attributes(
                        &self.span_attributes,
                        self.facts.protocol_version.as_deref(),
                    );
                }
                Rewrite::Capabilities
            }
            "server/discover" => Rewrite::Capabilities,
            "tools/list" => {
                self.list_meta = params.and_then(|p| p.get("_meta")).cloned();
                Rewrite::Tools {
                    marked: self.rules.may_mark(params, self.session_caps.as_ref()),
                }
            }
            _ => Rewrite::None,
        };
        self.pending.insert(
            id_key(id),
            Pending {
                method: method.to_string(),
                rewrite,
                deadline: self.timeout.map(|t| clock.now + t),
                call,
                consent,
                progress: super::progress_token(params),
                first_page: method == "tools/list"
                    && params.and_then(|p| p.get("cursor")).is_none(),
                listed_for: self
                    .principal
                    .as_ref()
                    .filter(|_| self.lists_by_scope && method == "tools/list")
                    .map(|p| p.scopes.clone()),
                trace,
            },
        );
        text
    }

    /// The host answered the proxy's question about a held call.
    fn answered(&mut self, mut held: Held, text: &str, clock: Clock, out: &mut Vec<Effect>) {
        let action = mcp_resolve_protocol::json::from_str::<Value>(text)
            .ok()
            .and_then(|answer| {
                answer
                    .pointer("/result/action")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            });
        let from = out.len();
        let wait = clock.now.saturating_duration_since(held.asked);
        let (outcome, why) = match action.as_deref() {
            Some("accept") => ("accepted", ""),
            Some("decline") => ("declined", "was declined by the user"),
            Some("cancel") => ("cancelled", "was cancelled by the user"),
            _ => (
                "unconfirmed",
                "was not confirmed (the host answered the question with an error)",
            ),
        };
        self.measure(
            mcp_resolve_telemetry::Measure::AskClosed { outcome, wait },
            out,
        );
        let mut trace = held.trace.take();
        if let Some(traced) = &mut trace {
            super::trace::asked(traced, outcome, wait);
        }
        if outcome == "accepted" {
            if held.judged.regate.is_some() {
                self.verification.accept(&held.judged.tool);
            }
            let text = match &mut trace {
                Some(traced) => Self::traced_text(traced, held.text.clone(), clock),
                None => held.text.clone(),
            };
            self.pending.insert(
                id_key(&held.id),
                Pending {
                    method: "tools/call".into(),
                    rewrite: Rewrite::None,
                    deadline: self.timeout.map(|t| clock.now + t),
                    call: Some(CallAudit {
                        judged: held.judged,
                        started: clock.now,
                        arguments: held.arguments,
                        outcome: "accepted",
                    }),
                    consent: None,
                    progress: mcp_resolve_protocol::json::from_str::<Value>(&held.text)
                        .ok()
                        .and_then(|call| super::progress_token(call.get("params"))),
                    first_page: false,
                    listed_for: None,
                    trace,
                },
            );
            out.push(Effect::Server(text));
            return;
        }
        self.audit(
            || {
                held.judged
                    .record(clock.wall, outcome, held.arguments.as_ref())
            },
            out,
        );
        out.push(Effect::Host(error_response(
            &held.id,
            &held.judged.refusal(why),
        )));
        if let Some(traced) = trace {
            self.end_answered(traced, &held.id, clock, from, out);
        }
    }
}
