//! A server behind a streamable HTTP endpoint (MCP 2025-03-26 and later).
//!
//! Each message is `POST`ed; the answer is `202 Accepted` (notifications and
//! responses), one JSON body (a message or a batch), or an SSE stream whose
//! events carry messages. The `Mcp-Session-Id` the server assigns is sent
//! back on every request and the session is `DELETE`d at the end.
//!
//! [`Endpoint`] is the one home of that exchange; [`HttpTransport`] reads
//! its answers in turn (a client session such as `import`'s), and the proxy
//! reads many at once (`crate::link`).

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use futures_util::{Stream, StreamExt};
use mcp_resolve_protocol::Raw;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::Value;

use super::{MAX_MESSAGE_BYTES, Received, UpstreamError, excerpt};

const SESSION_HEADER: &str = "mcp-session-id";
/// The protocol version of a request (negotiated, or named in its `_meta`).
pub(crate) const VERSION_HEADER: &str = "mcp-protocol-version";
/// SEP-2243: a request's method, for intermediaries that route on it.
const METHOD_HEADER: &str = "mcp-method";
/// SEP-2243: the tool, prompt, resource or task a request names.
const NAME_HEADER: &str = "mcp-name";

/// The events of an SSE answer.
pub(crate) type Events =
    Pin<Box<dyn Stream<Item = Result<sse_stream::Sse, sse_stream::Error>> + Send>>;

/// What a `POST` was answered with.
pub(crate) enum Answer {
    /// `202 Accepted`, or a success with no body worth reading.
    Accepted,
    /// One JSON body: a message or a batch.
    Json(Vec<u8>),
    /// An event stream.
    Events(Events),
    /// A status other than a success, with the start of its body (a
    /// server may put a JSON-RPC error there).
    Refused {
        /// The HTTP status.
        status: reqwest::StatusCode,
        /// The body, at most [`MAX_MESSAGE_BYTES`].
        body: Vec<u8>,
    },
}

impl Answer {
    /// The error a client that expects a success reports for `Refused`.
    fn refusal(status: reqwest::StatusCode, body: &[u8], url: &reqwest::Url) -> UpstreamError {
        UpstreamError::Http(format!(
            "POST {url} answered {status}{}",
            if body.is_empty() {
                String::new()
            } else {
                format!(": {}", excerpt(&String::from_utf8_lossy(body)))
            }
        ))
    }
}

/// Headers the proxy sends an upstream with every request: its own
/// credential (`--upstream-header`), never the host's. Their values are
/// marked sensitive and never printed.
#[derive(Clone, Default)]
pub struct UpstreamHeaders(HeaderMap);

impl std::fmt::Debug for UpstreamHeaders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.keys()).finish()
    }
}

impl UpstreamHeaders {
    /// Reads `Name: value` specifications whose values come from the
    /// environment (`${NAME}`, `env` looks them up) or from a file
    /// (`@PATH`, the whole value, without its line ending), never written
    /// out on the command line: a value with neither is refused, as are a
    /// variable that is not set and a file that cannot be read.
    pub fn parse(
        specs: &[String],
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<UpstreamHeaders, HeaderError> {
        let mut headers = HeaderMap::new();
        for spec in specs {
            let Some((name, value)) = spec.split_once(':') else {
                return Err(HeaderError::NotNameValue(spec.clone()));
            };
            let name = reqwest::header::HeaderName::from_bytes(name.trim().as_bytes())
                .map_err(|_| HeaderError::Name(name.trim().to_owned()))?;
            let value = expand(value.trim(), env).map_err(|why| HeaderError::Secret {
                name: name.to_string(),
                why,
            })?;
            let mut value =
                HeaderValue::from_str(&value).map_err(|_| HeaderError::Value(name.to_string()))?;
            value.set_sensitive(true);
            headers.append(name, value);
        }
        Ok(UpstreamHeaders(headers))
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A secret given as `${NAME}` references (and text around them), read
/// from the environment through `env`, or as `@PATH`, a file's contents
/// without its line ending; never written out (a value with neither is
/// refused).
pub fn expand(value: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, SecretError> {
    if let Some(path) = value.strip_prefix('@') {
        let text = std::fs::read_to_string(path).map_err(|e| SecretError::Read {
            path: path.to_owned(),
            error: e.to_string(),
        })?;
        return Ok(text.trim_end_matches(['\n', '\r']).to_owned());
    }
    if !value.contains("${") {
        return Err(SecretError::Literal);
    }
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let Some(end) = rest[start..].find('}') else {
            return Err(SecretError::Unclosed);
        };
        let name = &rest[start + 2..start + end];
        out.push_str(&env(name).ok_or_else(|| SecretError::Unset(name.to_owned()))?);
        rest = &rest[start + end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Why a secret given to the proxy cannot be read ([`expand`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    /// `@PATH` names a file that cannot be read.
    #[error("cannot read `{path}`: {error}")]
    Read {
        /// The file.
        path: String,
        /// What reading it said.
        error: String,
    },
    /// A value written out on the command line.
    #[error(
        "the value must come from the environment (`${{NAME}}`) or a file (`@PATH`), never from the command line"
    )]
    Literal,
    /// `${` without its `}`.
    #[error("`${{` without its `}}`")]
    Unclosed,
    /// A referenced variable that is not set.
    #[error("the environment variable `{0}` is not set")]
    Unset(String),
}

/// Why an `--upstream-header` is refused ([`UpstreamHeaders::parse`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// No colon between a name and a value.
    #[error("`{0}` is not `Name: value`")]
    NotNameValue(String),
    /// Not an HTTP header name.
    #[error("`{0}` is not a header name")]
    Name(String),
    /// The value, once read, is not an HTTP header value.
    #[error("`{0}`: the value is not a header value")]
    Value(String),
    /// The value's secret cannot be read.
    #[error("`{name}`: {why}")]
    Secret {
        /// The header's name.
        name: String,
        /// Why.
        why: SecretError,
    },
}

#[cfg(test)]
mod header_tests {
    use super::*;

    #[test]
    fn values_come_from_the_environment_or_a_file_never_the_command_line() {
        let env = |name: &str| (name == "TOKEN").then(|| "s3cret".to_owned());
        let specs = ["Authorization: Bearer ${TOKEN}".to_owned()];
        let headers = UpstreamHeaders::parse(&specs, &env).unwrap();
        assert_eq!(headers.0["authorization"], "Bearer s3cret");
        assert!(headers.0["authorization"].is_sensitive());
        assert_eq!(format!("{headers:?}"), r#"["authorization"]"#);
        let file = std::env::temp_dir().join(format!("mcp-resolve-header-{}", std::process::id()));
        std::fs::write(&file, "from-file\r\n").unwrap();
        let spec = format!("X-Key: @{}", file.display());
        let headers = UpstreamHeaders::parse(&[spec], &env).unwrap();
        assert_eq!(headers.0["x-key"], "from-file");
        std::fs::remove_file(&file).unwrap();
        for (spec, why) in [
            (
                "Authorization: Bearer literal",
                "never from the command line",
            ),
            ("Authorization: ${UNSET}", "is not set"),
            ("Authorization: ${TOKEN", "without its"),
            ("no colon", "is not `Name: value`"),
            ("X-Key: @/nonexistent/file", "cannot read"),
        ] {
            let error = UpstreamHeaders::parse(&[spec.to_owned()], &env)
                .unwrap_err()
                .to_string();
            assert!(error.contains(why), "{spec}: {error}");
        }
    }
}

/// Why an HTTP exchange with the server failed before an answer: a
/// connection that could not be made says so (and what it met), anything
/// else is reqwest's own account.
fn exchange_failed(method: &'static str, url: &reqwest::Url, e: &reqwest::Error) -> UpstreamError {
    if !e.is_connect() {
        return UpstreamError::Http(format!("{method} {url}: {e}"));
    }
    // The innermost cause is the operating system's (`Connection refused`).
    let mut why = e.to_string();
    let mut cause: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(inner) = cause {
        if let Some(io) = inner.downcast_ref::<std::io::Error>() {
            why = match io.kind() {
                std::io::ErrorKind::ConnectionRefused => "connection refused".to_string(),
                _ => io.to_string(),
            };
            break;
        }
        why = inner.to_string();
        cause = inner.source();
    }
    UpstreamError::Unreachable {
        method,
        url: url.to_string(),
        why,
    }
}

/// A streamable HTTP endpoint and the session the server assigned on it;
/// clones share the session.
#[derive(Clone)]
pub(crate) struct Endpoint {
    client: reqwest::Client,
    url: reqwest::Url,
    headers: Arc<Mutex<SessionHeaders>>,
    /// The largest body or event read.
    max: usize,
    /// Requests that name no session (2026-07-28): a session id the server
    /// answers with is not taken up, so none is ever sent or lost.
    sessionless: bool,
}

#[derive(Default)]
struct SessionHeaders {
    session: Option<HeaderValue>,
    protocol_version: Option<HeaderValue>,
}

impl Endpoint {
    /// The endpoint at `url` (`http` or `https`), sent `headers` with
    /// every request.
    pub(crate) fn with_headers_for(
        url: &str,
        headers: &UpstreamHeaders,
    ) -> Result<Self, UpstreamError> {
        let url = reqwest::Url::parse(url)
            .map_err(|e| UpstreamError::Http(format!("`{url}` is not a URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(UpstreamError::Http(format!(
                "`{url}` is not an http or https URL"
            )));
        }
        let client = reqwest::Client::builder()
            .default_headers(headers.0.clone())
            .build()
            .map_err(|e| UpstreamError::Http(format!("cannot build an HTTP client: {e}")))?;
        Ok(Endpoint {
            client,
            url,
            headers: Arc::default(),
            max: MAX_MESSAGE_BYTES,
            sessionless: false,
        })
    }

    /// Never takes up a session the server assigns (for the 2026-07-28
    /// requests of hosts that name no session).
    pub(crate) fn sessionless(mut self) -> Self {
        self.sessionless = true;
        self
    }

    /// Whether requests name no session (see [`Endpoint::sessionless`]).
    pub(crate) fn is_sessionless(&self) -> bool {
        self.sessionless
    }

    /// Reads bodies and events of at most `max` bytes (the default is
    /// [`MAX_MESSAGE_BYTES`]).
    pub(crate) fn with_max(mut self, max: usize) -> Self {
        self.max = max;
        self
    }

    /// The largest body or event read.
    pub(crate) fn max(&self) -> usize {
        self.max
    }

    /// The endpoint's URL, for messages.
    pub(crate) fn url(&self) -> &reqwest::Url {
        &self.url
    }

    /// Sends `MCP-Protocol-Version: version` from now on.
    pub(crate) fn set_protocol_version(&self, version: &str) {
        if let Ok(mut headers) = self.headers.lock() {
            headers.protocol_version = HeaderValue::from_str(version).ok();
        }
    }

    /// Whether the server assigned a session.
    pub(crate) fn has_session(&self) -> bool {
        self.headers.lock().is_ok_and(|h| h.session.is_some())
    }

    fn with_session(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        self.with_headers(request, HeaderMap::new())
    }

    /// `request` with the session's headers, and `extra` over them.
    fn with_headers(
        &self,
        request: reqwest::RequestBuilder,
        extra: HeaderMap,
    ) -> reqwest::RequestBuilder {
        let mut headers = HeaderMap::new();
        if let Ok(session) = self.headers.lock() {
            if let Some(id) = &session.session {
                headers.insert(SESSION_HEADER, id.clone());
            }
            if let Some(version) = &session.protocol_version {
                headers.insert(VERSION_HEADER, version.clone());
            }
        }
        for (name, value) in extra {
            if let Some(name) = name {
                headers.insert(name, value);
            }
        }
        request.headers(headers)
    }

    /// `POST`s one message (JSON text), with `extra` headers over the
    /// session's. `expects_answer` (a request) makes a success with neither
    /// JSON nor events an error.
    pub(crate) async fn post(
        &self,
        body: String,
        expects_answer: bool,
        extra: HeaderMap,
    ) -> Result<Answer, UpstreamError> {
        let request = self
            .client
            .post(self.url.clone())
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .body(body);
        let response = self
            .with_headers(request, extra)
            .send()
            .await
            .map_err(|e| exchange_failed("POST", &self.url, &e))?;
        if let Some(session) = response.headers().get(SESSION_HEADER)
            && !self.sessionless
            && let Ok(mut headers) = self.headers.lock()
        {
            headers.session = Some(session.clone());
        }
        let status = response.status();
        if !status.is_success() {
            let body = read_body(response, self.max).await.unwrap_or_default();
            return Ok(Answer::Refused { status, body });
        }
        if status == reqwest::StatusCode::ACCEPTED {
            return Ok(Answer::Accepted);
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if content_type.starts_with("text/event-stream") {
            Ok(Answer::Events(events(response)))
        } else if content_type.starts_with("application/json") {
            Ok(Answer::Json(read_body(response, self.max).await?))
        } else if expects_answer {
            Err(UpstreamError::Http(format!(
                "POST {} answered with content type `{content_type}`, neither JSON nor an event stream",
                self.url
            )))
        } else {
            Ok(Answer::Accepted)
        }
    }

    /// Opens the stream of messages the server sends outside any request
    /// (`GET`); `None` when the server offers none (`405`).
    pub(crate) async fn listen(&self) -> Result<Option<Events>, UpstreamError> {
        let request = self
            .client
            .get(self.url.clone())
            .header(ACCEPT, "text/event-stream");
        let response = self
            .with_session(request)
            .send()
            .await
            .map_err(|e| exchange_failed("GET", &self.url, &e))?;
        let status = response.status();
        if status == reqwest::StatusCode::METHOD_NOT_ALLOWED {
            return Ok(None);
        }
        if !status.is_success() {
            return Err(UpstreamError::Http(format!(
                "GET {} answered {status}",
                self.url
            )));
        }
        Ok(Some(events(response)))
    }

    /// Deletes the session, if the server assigned one (a server may answer
    /// 405: it does not let clients end sessions).
    pub(crate) async fn delete(&self) {
        if self.has_session() {
            let request = self.with_session(self.client.delete(self.url.clone()));
            let _ = request.send().await;
        }
    }
}

/// The headers a streamable HTTP server of protocol 2026-07-28 requires of
/// a message, from its method and `params` (SEP-2243): `Mcp-Method`,
/// `Mcp-Name` (Base64-wrapped when it would not survive as a header value),
/// and the `MCP-Protocol-Version` its `_meta` (or, for `initialize`, its
/// `protocolVersion`) names. `Mcp-Param-*` headers, which come from the
/// server's input schemas, are not sent. The proxy sends these with
/// 2026-07-28 messages only: a client of an older session sends none.
pub(crate) fn message_headers(method: Option<&str>, params: Option<Raw<'_>>) -> HeaderMap {
    let mut headers = HeaderMap::new();
    let Some(method) = method else {
        return headers;
    };
    if let Ok(value) = HeaderValue::from_str(method) {
        headers.insert(METHOD_HEADER, value);
    }
    let params = HeaderParams::of(params);
    if let Some(name) = params
        .name_for(method)
        .and_then(|name| HeaderValue::from_str(&header_text(name)).ok())
    {
        headers.insert(NAME_HEADER, name);
    }
    let version = if method == "initialize" {
        params.protocol_version
    } else {
        params.meta.and_then(|m| m.protocol_version)
    };
    if let Some(version) = version
        .as_ref()
        .and_then(Value::as_str)
        .and_then(|v| HeaderValue::from_str(v).ok())
    {
        headers.insert(VERSION_HEADER, version);
    }
    headers
}

/// What the SEP-2243 headers mirror of a message's params: the members
/// `Mcp-Name` and `MCP-Protocol-Version` come from, read without building
/// the rest of the params (a call's arguments are skipped, not parsed).
#[derive(Default, serde::Deserialize)]
pub(crate) struct HeaderParams {
    name: Option<Value>,
    uri: Option<Value>,
    #[serde(rename = "taskId")]
    task_id: Option<Value>,
    #[serde(rename = "protocolVersion")]
    pub(crate) protocol_version: Option<Value>,
    #[serde(rename = "_meta")]
    pub(crate) meta: Option<HeaderMeta>,
}

/// What [`HeaderParams`] reads of a request's `_meta`.
#[derive(serde::Deserialize)]
pub(crate) struct HeaderMeta {
    /// The envelope's claim (present as `Some`, whatever its value).
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    pub(crate) protocol_version: Option<Value>,
}

impl HeaderParams {
    /// The members of `params` (none when they are not an object).
    pub(crate) fn of(params: Option<Raw<'_>>) -> HeaderParams {
        params
            .and_then(|raw| mcp_resolve_protocol::json::from_str::<HeaderParams>(raw.get()).ok())
            .unwrap_or_default()
    }

    /// The members of `params` as a parse gave them: what [`HeaderParams::of`]
    /// reads of their text (a `null` member reads as none; a `_meta` that
    /// is not an object leaves nothing read). Of a repeated name, the last
    /// member counts, as in the parse.
    pub(crate) fn of_tree(params: &Value) -> HeaderParams {
        let member = |object: &Value, key: &str| object.get(key).filter(|v| !v.is_null()).cloned();
        let meta = match params.get("_meta") {
            None | Some(Value::Null) => None,
            Some(meta @ Value::Object(_)) => Some(HeaderMeta {
                protocol_version: member(meta, mcp_resolve_protocol::META_PROTOCOL_VERSION),
            }),
            Some(_) => return HeaderParams::default(),
        };
        if !params.is_object() {
            return HeaderParams::default();
        }
        HeaderParams {
            name: member(params, "name"),
            uri: member(params, "uri"),
            task_id: member(params, "taskId"),
            protocol_version: member(params, "protocolVersion"),
            meta,
        }
    }

    /// The body member `Mcp-Name` mirrors for `method`, and its value when
    /// it is a string; `None` for a method that has no `Mcp-Name`.
    pub(crate) fn name_source(&self, method: &str) -> Option<(&'static str, Option<&str>)> {
        let (field, value) = match method {
            "tools/call" | "prompts/get" => ("name", &self.name),
            "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
                ("uri", &self.uri)
            }
            "tasks/get" | "tasks/update" | "tasks/cancel" => ("taskId", &self.task_id),
            _ => return None,
        };
        Some((field, value.as_ref().and_then(Value::as_str)))
    }

    fn name_for(&self, method: &str) -> Option<&str> {
        self.name_source(method).and_then(|(_, value)| value)
    }
}

/// A header value as `header_text` writes it, read back: as it is, or
/// the text a `=?base64?…?=` value wraps; `None` when the wrapped text is
/// not canonical Base64 of UTF-8.
pub(crate) fn header_value_text(value: &str) -> Option<std::borrow::Cow<'_, str>> {
    use base64::Engine;
    let Some(wrapped) = value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    else {
        return Some(std::borrow::Cow::Borrowed(value));
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(wrapped)
        .ok()?;
    String::from_utf8(bytes).ok().map(std::borrow::Cow::Owned)
}

/// `text` as a header value: as it is, or `=?base64?…?=` when it is empty,
/// has leading or trailing blanks, characters outside printable ASCII, or
/// already looks wrapped.
pub(crate) fn header_text(text: &str) -> String {
    use base64::Engine;
    let printable = !text.is_empty() && text.chars().all(|c| (' '..='~').contains(&c));
    let padded = text.starts_with([' ', '\t']) || text.ends_with([' ', '\t']);
    let wrapped = text.starts_with("=?base64?") && text.ends_with("?=");
    if printable && !padded && !wrapped {
        text.to_string()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(text)
        )
    }
}

fn events(response: reqwest::Response) -> Events {
    Box::pin(sse_stream::SseStream::from_bytes_stream(
        response.bytes_stream(),
    ))
}

/// The data of the next event that carries any, at most `max` bytes;
/// `Ok(None)` at the end of the stream.
pub(crate) async fn next_data(
    events: &mut Events,
    max: usize,
) -> Result<Option<String>, UpstreamError> {
    loop {
        match events.next().await {
            None => return Ok(None),
            Some(Err(e)) => {
                return Err(UpstreamError::Http(format!(
                    "the server's event stream broke: {e}"
                )));
            }
            Some(Ok(event)) => {
                let Some(data) = event.data.filter(|d| !d.trim().is_empty()) else {
                    continue; // a priming event, a comment or a retry hint
                };
                if data.len() > max {
                    return Err(UpstreamError::Protocol(format!(
                        "the server sent an event over {max} bytes"
                    )));
                }
                return Ok(Some(data));
            }
        }
    }
}

/// A streamable HTTP endpoint, its answers read one after another.
pub struct HttpTransport {
    endpoint: Endpoint,
    pending: VecDeque<Value>,
    streams: Vec<Events>,
}

impl HttpTransport {
    /// A transport for the endpoint at `url` (`http` or `https`).
    pub fn new(url: &str) -> Result<Self, UpstreamError> {
        Self::with_headers(url, &UpstreamHeaders::default())
    }

    /// [`HttpTransport::new`], sending `headers` with every request.
    pub fn with_headers(url: &str, headers: &UpstreamHeaders) -> Result<Self, UpstreamError> {
        Ok(HttpTransport {
            endpoint: Endpoint::with_headers_for(url, headers)?,
            pending: VecDeque::new(),
            streams: Vec::new(),
        })
    }

    pub(crate) fn set_protocol_version(&mut self, version: &str) {
        self.endpoint.set_protocol_version(version);
    }

    pub(crate) async fn send(&mut self, message: &Value) -> Result<(), UpstreamError> {
        let expects_answer = message.get("id").is_some() && message.get("method").is_some();
        match self
            .endpoint
            .post(message.to_string(), expects_answer, HeaderMap::new())
            .await?
        {
            Answer::Refused { status, body } => {
                return Err(Answer::refusal(status, &body, self.endpoint.url()));
            }
            Answer::Accepted => {}
            Answer::Json(body) => self.take(&body)?,
            Answer::Events(events) => self.streams.push(events),
        }
        Ok(())
    }

    /// Queues the message (or batch of messages) in `body`.
    fn take(&mut self, body: &[u8]) -> Result<(), UpstreamError> {
        let parsed: Value = mcp_resolve_protocol::json::from_slice(body).map_err(|e| {
            UpstreamError::Protocol(format!(
                "the server's HTTP answer is not JSON ({e}): {}",
                excerpt(&String::from_utf8_lossy(body))
            ))
        })?;
        match parsed {
            Value::Array(batch) => self.pending.extend(batch),
            message => self.pending.push_back(message),
        }
        Ok(())
    }

    pub(crate) async fn recv(&mut self) -> Result<Option<Received>, UpstreamError> {
        loop {
            if let Some(message) = self.pending.pop_front() {
                return Ok(Some(if message.is_object() {
                    Received::Message(message)
                } else {
                    Received::Garbage(excerpt(&message.to_string()))
                }));
            }
            let Some(events) = self.streams.last_mut() else {
                return Ok(None);
            };
            match next_data(events, self.endpoint.max()).await {
                Ok(None) => {
                    self.streams.pop();
                }
                Err(UpstreamError::Protocol(why)) => return Err(UpstreamError::Protocol(why)),
                Err(e) => {
                    self.streams.pop();
                    return Err(e);
                }
                Ok(Some(data)) => {
                    if let Err(UpstreamError::Protocol(line)) = self.take(data.as_bytes()) {
                        return Ok(Some(Received::Garbage(line)));
                    }
                }
            }
        }
    }

    /// Deletes the session, if the server assigned one.
    pub(crate) async fn close(self) -> Result<(), UpstreamError> {
        self.endpoint.delete().await;
        Ok(())
    }
}

/// The body of `response`, refused past `max` bytes.
async fn read_body(response: reqwest::Response, max: usize) -> Result<Vec<u8>, UpstreamError> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk =
            chunk.map_err(|e| UpstreamError::Http(format!("reading the answer failed: {e}")))?;
        if body.len() + chunk.len() > max {
            return Err(UpstreamError::Protocol(format!(
                "the server's HTTP answer is over {max} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_resolve_protocol::META_PROTOCOL_VERSION;
    use serde_json::json;

    fn raw(value: Value) -> String {
        value.to_string()
    }

    fn of(text: &str) -> Option<Raw<'_>> {
        Some(Raw::of(text).unwrap())
    }

    #[test]
    fn message_headers_follow_sep_2243() {
        let params =
            json!({"name": "manage_files", "_meta": {META_PROTOCOL_VERSION: "2026-07-28"}});
        let headers = message_headers(Some("tools/call"), of(&raw(params)));
        assert_eq!(headers[METHOD_HEADER], "tools/call");
        assert_eq!(headers[NAME_HEADER], "manage_files");
        assert_eq!(headers[VERSION_HEADER], "2026-07-28");
        let read = message_headers(
            Some("resources/read"),
            of(&raw(json!({"uri": "file:///ä"}))),
        );
        assert_eq!(read[NAME_HEADER], "=?base64?ZmlsZTovLy/DpA==?=");
        assert!(!read.contains_key(VERSION_HEADER));
        let init = message_headers(
            Some("initialize"),
            of(&raw(
                json!({"protocolVersion": "2025-11-25", "arguments": {"a": [1]}}),
            )),
        );
        assert_eq!(init[VERSION_HEADER], "2025-11-25");
        assert!(message_headers(None, None).is_empty());
        // A member of another type carries no header; the others still do.
        let odd = raw(json!({"name": 7, "_meta": {META_PROTOCOL_VERSION: "2026-07-28"}}));
        let odd = message_headers(Some("tools/call"), of(&odd));
        assert!(!odd.contains_key(NAME_HEADER));
        assert_eq!(odd[VERSION_HEADER], "2026-07-28");
        assert_eq!(header_text(" padded"), "=?base64?IHBhZGRlZA==?=");
        assert_eq!(header_text("=?base64?x?="), "=?base64?PT9iYXNlNjQ/eD89?=");
        assert_eq!(header_text("plain name"), "plain name");
    }
}
