//! The HTTP exchanges of `--listen`: a `POST` carries one message (a
//! request is answered on its own exchange, as one JSON body or an event
//! stream), a `GET` opens the host's stream of the server's other messages,
//! a `DELETE` ends a session.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use mcp_resolve_protocol::{
    Envelope, ParamsRead, Screened, error_response, id_key, is_stateless_version, splice,
};
use mcp_resolve_runtime::RpcError;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::mpsc;

use super::SESSION_HEADER;
use super::hub::{HostSession, Hub, request_progress_token};
use crate::consent;
use crate::link::Input;
use crate::log;
use crate::session::HostMessage;
use crate::upstream::UpstreamError;

/// A host's `POST`: one message, screened, routed to its session (opened
/// for an `initialize`, the shared one for a request that names none), and
/// for a request the answer on this exchange.
#[expect(
    clippy::too_many_lines,
    reason = "a `POST`'s path from screening to its answer, each refusal where its rule applies"
)]
pub(super) async fn post(
    hub: Arc<Hub>,
    session_id: Option<String>,
    principal: Option<crate::auth::Principal>,
    request: Request,
) -> Response {
    let events = accepts_events(request.headers());
    let header_version = request
        .headers()
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    // W3C trace context in an HTTP header, honoured when telemetry is on.
    let traceparent = hub
        .options
        .sinks
        .telemetry
        .as_ref()
        .and_then(|_| request.headers().get("traceparent"))
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let (parts, body) = request.into_parts();
    let body = match read_body(&hub, body).await {
        Ok(body) => body,
        Err(refusal) => return refusal,
    };
    let Ok(text) = std::str::from_utf8(&body) else {
        return rpc_refusal(
            StatusCode::BAD_REQUEST,
            Value::Null,
            RpcError::PARSE_ERROR,
            "Parse error: the message is not UTF-8",
        );
    };
    // The one read of the message: the session's screen, one message at a
    // time (what it answers is answered here, with 400), and the params of
    // the methods the session reads, which it is handed with the rest.
    let (message, read) = match hub.read(text) {
        Ok(read) => read,
        Err(Screened::Reply(answer)) => {
            return (
                StatusCode::BAD_REQUEST,
                [(header::CONTENT_TYPE, "application/json")],
                answer.to_string(),
            )
                .into_response();
        }
        Err(_) => return StatusCode::ACCEPTED.into_response(),
    };
    // SEP-2243: the headers say what the body says, before anything reads
    // either to decide.
    let params = read.as_ref().map(|read| &read.tree);
    if let Err(error) = super::check_headers(&parts.headers, &message, params) {
        let body = error_response(message.id.as_ref().unwrap_or(&Value::Null), &error);
        return (
            StatusCode::BAD_REQUEST,
            [(header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response();
    }
    if let Some(principal) = &principal
        && let Some(refusal) = super::auth::step_up(&hub, principal, &message, params)
    {
        return refusal;
    }
    let host_id = message.id.clone();
    let is_request = message.is_request();
    let initialize = is_request && message.method.as_deref() == Some("initialize");
    // A request that names no session and is not a 2026-07-28 one (whose
    // `_meta` or header names that version) belongs to a session the host
    // lost or never opened: a server would refuse it, not serve it
    // uninitialized (the TypeScript SDK sends exactly this after
    // `terminateSession()`).
    if session_id.is_none()
        && is_request
        && !initialize
        && !stateless(&message, params)
        && header_version
            .as_deref()
            .is_none_or(|v| !is_stateless_version(v))
    {
        return rpc_refusal(
            StatusCode::BAD_REQUEST,
            host_id.unwrap_or(Value::Null),
            RpcError::INVALID_REQUEST,
            "Bad Request: no session: send initialize first (or a 2026-07-28 request, which names its protocol version in _meta)",
        );
    }
    let (session, new_id) = match pick_session(&hub, session_id, initialize, &host_id).await {
        Ok(picked) => picked,
        Err(refusal) => return refusal,
    };
    let Some(to_relay) = session.sender() else {
        return rpc_refusal(
            StatusCode::NOT_FOUND,
            host_id.unwrap_or(Value::Null),
            RpcError::INVALID_REQUEST,
            "Session not found: it ended",
        );
    };
    if !is_request {
        let params = read.map(|read| read.tree);
        return notify(&session, &to_relay, text, &message, params, principal).await;
    }
    let carried = param_headers(&parts.headers);
    // A `traceparent` header goes into the request the session is handed
    // (the message's own `_meta` wins), after the one read of it.
    let traceparent = traceparent.map(|header| {
        let method = message.method.as_deref().unwrap_or_default();
        let parses = crate::session::reads_params(method, hub.rules.method());
        (header, parses)
    });
    let exchange = Exchange {
        traceparent,
        carried,
        host_id: host_id.unwrap_or(Value::Null),
        events,
        new_id,
        principal,
    };
    exchange
        .run(&session, &to_relay, text, &message, read)
        .await
}

/// Whether a request is a 2026-07-28 one: from its params as read, or,
/// for a method whose params the read leaves as written, from those.
fn stateless(message: &Envelope<'_>, params: Option<&Value>) -> bool {
    match params {
        Some(params) => consent::is_stateless(Some(params)),
        None => consent::is_stateless(message.params().as_ref()),
    }
}

/// Whether the host accepts an event stream as the answer.
fn accepts_events(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.to_ascii_lowercase().contains("text/event-stream"))
}

/// The body, at most `--max-message-bytes`; `413` past it.
async fn read_body(hub: &Hub, body: Body) -> Result<Bytes, Response> {
    let limit = hub.options.max_message_bytes;
    axum::body::to_bytes(body, limit).await.map_err(|_| {
        rpc_refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            Value::Null,
            RpcError::INVALID_REQUEST,
            &format!("Invalid Request: the message is larger than {limit} bytes"),
        )
    })
}

/// The session a message goes to, and the id of a session opened for it.
async fn pick_session(
    hub: &Arc<Hub>,
    session_id: Option<String>,
    initialize: bool,
    host_id: &Option<Value>,
) -> Result<(Arc<HostSession>, Option<String>), Response> {
    let id = || host_id.clone().unwrap_or(Value::Null);
    match session_id {
        Some(session_id) => match hub.session(&session_id) {
            Some(session) => Ok((session, None)),
            None => Err(rpc_refusal(
                StatusCode::NOT_FOUND,
                id(),
                RpcError::INVALID_REQUEST,
                "Session not found: start a new one with initialize",
            )),
        },
        None if initialize => {
            let open = hub.sessions.lock().map(|s| s.len()).unwrap_or(usize::MAX);
            if open >= hub.listen.max_sessions {
                return Err(rpc_refusal(
                    StatusCode::SERVICE_UNAVAILABLE,
                    id(),
                    RpcError::INTERNAL_ERROR,
                    &format!(
                        "the proxy has {open} sessions open, its limit (mcp-resolve proxy --max-sessions)"
                    ),
                ));
            }
            let new_id = uuid::Uuid::new_v4().simple().to_string();
            let session = hub
                .open(false, Some(&new_id))
                .map_err(|e| start_failure(hub, host_id.clone(), &e))?;
            if let Ok(mut sessions) = hub.sessions.lock() {
                sessions.insert(new_id.clone(), Arc::clone(&session));
            }
            Ok((session, Some(new_id)))
        }
        None => match hub.stateless().await {
            Ok(session) => Ok((session, None)),
            Err(e) => Err(start_failure(hub, host_id.clone(), &e)),
        },
    }
}

/// A notification or a response: passed on; the server's answer is not
/// awaited.
async fn notify(
    session: &HostSession,
    to_relay: &mpsc::Sender<Input>,
    text: &str,
    message: &Envelope<'_>,
    params: Option<Value>,
    principal: Option<crate::auth::Principal>,
) -> Response {
    let read = if message.method.as_deref() == Some("notifications/cancelled") {
        // The server knows requests by the proxy's ids: a cancellation
        // names the one in flight under the host's id, and one for no
        // request in flight is dropped — passed on as it is, its id could
        // name another host's request (or a later one).
        match cancellation(session, text, message, params) {
            Some(read) => read,
            None => return StatusCode::ACCEPTED.into_response(),
        }
    } else {
        HostMessage::of(text, message, params)
    };
    if to_relay.send(input(read, principal)).await.is_err() {
        return refuse(StatusCode::NOT_FOUND, "Session not found: it ended");
    }
    StatusCode::ACCEPTED.into_response()
}

/// A host's message, read, for its session, with who its token speaks for.
fn input(read: HostMessage, principal: Option<crate::auth::Principal>) -> Input {
    Input::Read(Box::new(read), principal)
}

/// A `notifications/cancelled` (`text`, whose params read as `params`) that
/// names the host's request by the proxy's id, written in place of the
/// host's params; `None` when no such request is in flight.
fn cancellation(
    session: &HostSession,
    text: &str,
    message: &Envelope<'_>,
    params: Option<Value>,
) -> Option<HostMessage> {
    let raw = message.params?;
    let Some(Value::Object(mut params)) = params else {
        return None;
    };
    let host_request = params.get("requestId")?;
    let proxy_id = {
        let routes = session.routes.lock().ok()?;
        routes.by_host_id.get(&id_key(host_request)).cloned()?
    };
    params.insert("requestId".into(), proxy_id);
    let written = Value::Object(params);
    let line = splice(text, raw.get(), &written.to_string())?;
    let mut read = HostMessage::of(text, message, Some(written));
    let start = read.params_at.as_ref()?.start;
    read.params_at = Some(start..line.len() - (text.len() - read.params_at.as_ref()?.end));
    read.text = line;
    Some(read)
}

/// The host's SEP-2243 `Mcp-Param-*` headers (`None` when it sent none):
/// passed on with the request to an HTTP server, which checks them against
/// the arguments.
fn param_headers(headers: &HeaderMap) -> Option<HeaderMap> {
    let mut params = HeaderMap::new();
    for (name, value) in headers {
        if name.as_str().starts_with("mcp-param-") {
            params.append(name.clone(), value.clone());
        }
    }
    (!params.is_empty()).then_some(params)
}

/// One request and its answer on this exchange.
struct Exchange {
    /// Headers the host sent that go on with the request (`Mcp-Param-*`).
    carried: Option<HeaderMap>,
    host_id: Value,
    /// The host accepts an event stream.
    events: bool,
    /// The id of the session the request opened, for the answer's header.
    new_id: Option<String>,
    /// Who the request's token speaks for.
    principal: Option<crate::auth::Principal>,
    /// The host's `traceparent` header (telemetry on), and whether the
    /// session parses the request's params.
    traceparent: Option<(String, bool)>,
}

impl Exchange {
    /// Sends the request under an id of the proxy's (spliced in where the
    /// host's was written, and in place of its progress token, so that no
    /// two hosts' requests share either at the server) and answers with
    /// what comes back.
    async fn run(
        mut self,
        session: &Arc<HostSession>,
        to_relay: &mpsc::Sender<Input>,
        text: &str,
        message: &Envelope<'_>,
        read: Option<ParamsRead<'_>>,
    ) -> Response {
        let token = written_token(message, read.as_ref());
        let (opened, answers) = session.wait(
            self.host_id.clone(),
            token.map(|raw| raw.to_owned()),
            self.events,
        );
        if let Some(headers) = self.carried.take() {
            session.carried.put(opened.to_string(), headers);
        }
        let mut read = under_proxy_id(text, message, read, token, opened);
        if let Some((header, parses)) = &self.traceparent {
            crate::session::adopt_http_traceparent(&mut read, header, *parses);
        }
        // From here, a host that lets go of the exchange cancels the request.
        let abandon = Abandon {
            session: Arc::clone(session),
            proxy_id: opened,
        };
        if to_relay
            .send(input(read, self.principal.clone()))
            .await
            .is_err()
        {
            return rpc_refusal(
                StatusCode::NOT_FOUND,
                self.host_id,
                RpcError::INVALID_REQUEST,
                "Session not found: it ended",
            );
        }
        self.answer(session, answers, abandon).await
    }

    /// The answer: an event stream, or the one JSON body.
    async fn answer(
        self,
        session: &HostSession,
        mut answers: mpsc::UnboundedReceiver<String>,
        abandon: Abandon,
    ) -> Response {
        let mut response = if self.events {
            // The status and headers go out with the first event, in one
            // write that wakes the host once, not in a write of their own
            // before it. A stream that ends before any event is empty.
            let first = answers.recv().await;
            event_stream(first, answers, Some(abandon))
        } else {
            let answer = answers.recv().await;
            drop(abandon);
            match answer {
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
                        self.host_id,
                        RpcError::INTERNAL_ERROR,
                        &format!("mcp-resolve proxy: {why}"),
                    );
                }
            }
        };
        if let Some(id) = self.new_id
            && let Ok(value) = HeaderValue::from_str(&id)
        {
            response.headers_mut().insert(SESSION_HEADER, value);
        }
        response
    }
}

/// A request's hold on its exchange: dropped before the answer came (the
/// host closed the request's stream or its connection), it cancels the
/// request (`HostSession::abandon`); after the answer, it does nothing.
struct Abandon {
    session: Arc<HostSession>,
    proxy_id: u64,
}

impl Drop for Abandon {
    fn drop(&mut self) {
        self.session.abandon(self.proxy_id);
    }
}

/// `text` with each of `parts` (slices of `text` that do not overlap)
/// replaced by its text; `None` when one is not a slice of `text`.
fn splice_all(text: &str, parts: &mut [(&str, &str)]) -> Option<String> {
    parts.sort_by_key(|(part, _)| part.as_ptr() as usize);
    let base = text.as_ptr() as usize;
    let mut out = String::with_capacity(text.len() + 16);
    let mut at = 0;
    for (part, with) in parts.iter() {
        let start = (part.as_ptr() as usize).checked_sub(base)?;
        let end = start.checked_add(part.len())?;
        out.push_str(text.get(at..start)?);
        out.push_str(with);
        at = end;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

/// A request's progress token as written: as the read found it, or looked
/// for in params the read left as written (or parsed without looking).
fn written_token<'a>(
    message: &Envelope<'a>,
    read: Option<&ParamsRead<'a>>,
) -> Option<&'a RawValue> {
    match read {
        Some(read) if read.located => read.token,
        Some(read) if read.tree.pointer("/_meta/progressToken").is_none() => None,
        _ => message.params.and_then(request_progress_token),
    }
}

/// A request (`text`, read as `message` and `params`) as its session is
/// handed it: the proxy's id `opened` spliced in where the host wrote its
/// id and its progress `token`, and the read following the text — the id,
/// the token in the parsed params, where the params and their `_meta` now
/// are — so that it is what a read of the new text would give.
fn under_proxy_id(
    text: &str,
    message: &Envelope<'_>,
    params: Option<ParamsRead<'_>>,
    token: Option<&RawValue>,
    opened: u64,
) -> HostMessage {
    let proxy_text = opened.to_string();
    let mut parts: Vec<(&str, &str)> = Vec::with_capacity(2);
    if let Some(raw) = message.id_raw {
        parts.push((raw.get(), &proxy_text));
    }
    if let Some(raw) = token {
        parts.push((raw.get(), &proxy_text));
    }
    let mut read = HostMessage::read(text, message, params);
    if let Some(line) = splice_all(text, &mut parts) {
        read.id = Some(Value::from(opened));
        if token.is_some()
            && let Some(meta) = read
                .params
                .as_mut()
                .and_then(|p| p.get_mut("_meta"))
                .and_then(Value::as_object_mut)
        {
            meta.insert("progressToken".into(), Value::from(opened));
        }
        read.params_at = read
            .params_at
            .map(|at| moved(at.start, text, &parts)..moved(at.end, text, &parts));
        read.meta_at = std::mem::take(&mut read.meta_at).mapped(|at| moved(at, text, &parts));
        read.text = line;
    }
    read
}

/// Where offset `at` of `text` is once `parts` (slices of `text`, sorted,
/// as [`splice_all`] left them) are replaced.
fn moved(at: usize, text: &str, parts: &[(&str, &str)]) -> usize {
    let base = text.as_ptr() as usize;
    parts
        .iter()
        .filter(|(part, _)| (part.as_ptr() as usize).saturating_sub(base) < at)
        .fold(at, |at, (part, with)| {
            (at + with.len()).saturating_sub(part.len())
        })
}

fn start_failure(hub: &Hub, id: Option<Value>, error: &UpstreamError) -> Response {
    log(&format!(
        "cannot open a session with the server {}: {error}",
        hub.upstream.describe()
    ));
    rpc_refusal(
        StatusCode::BAD_GATEWAY,
        id.unwrap_or(Value::Null),
        RpcError::INTERNAL_ERROR,
        &format!("mcp-resolve proxy: cannot start the server: {error}"),
    )
}

/// The host's stream of server messages outside its requests.
pub(super) fn get(hub: Arc<Hub>, session_id: Option<String>, headers: &HeaderMap) -> Response {
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
    event_stream(None, lines, None)
}

/// An event-stream response carrying `first` (a line already received)
/// and then each of `lines` as a `message` event, until the sender side is
/// dropped; `abandon` is held as long as the host reads it.
fn event_stream(
    first: Option<String>,
    mut lines: mpsc::UnboundedReceiver<String>,
    abandon: Option<Abandon>,
) -> Response {
    let mut first = first;
    let body = futures_util::stream::poll_fn(move |cx| {
        let _hold = &abandon;
        match first.take() {
            Some(line) => std::task::Poll::Ready(Some(line)),
            None => lines.poll_recv(cx),
        }
    })
    .map(|line| {
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

pub(super) fn delete(hub: Arc<Hub>, session_id: Option<String>) -> Response {
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

/// A plain-text refusal with HTTP `status`.
pub(super) fn refuse(status: StatusCode, message: &str) -> Response {
    (status, message.to_string()).into_response()
}

/// A JSON-RPC error body with HTTP `status`.
fn rpc_refusal(status: StatusCode, id: Value, code: i64, message: &str) -> Response {
    let body = error_response(&id, &RpcError::new(code, message, None));
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

#[cfg(test)]
mod tests;
