//! A server behind a streamable HTTP endpoint (MCP 2025-03-26 and later).
//!
//! Each message is `POST`ed; the answer is `202 Accepted` (notifications and
//! responses), one JSON body (a message or a batch), or an SSE stream whose
//! events carry messages — read event by event until the answer arrives.
//! The `Mcp-Session-Id` the server assigns is sent back on every request
//! and the session is `DELETE`d at the end.

use std::collections::VecDeque;
use std::pin::Pin;

use futures_util::{Stream, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use serde_json::Value;

use super::{MAX_MESSAGE_BYTES, Received, UpstreamError, excerpt};

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";

type Events = Pin<Box<dyn Stream<Item = Result<sse_stream::Sse, sse_stream::Error>> + Send>>;

/// A streamable HTTP endpoint.
pub struct HttpTransport {
    client: reqwest::Client,
    url: reqwest::Url,
    session: Option<HeaderValue>,
    protocol_version: Option<HeaderValue>,
    pending: VecDeque<Value>,
    streams: Vec<Events>,
}

impl HttpTransport {
    /// A transport for the endpoint at `url` (`http` or `https`).
    pub fn new(url: &str) -> Result<Self, UpstreamError> {
        let url = reqwest::Url::parse(url)
            .map_err(|e| UpstreamError::Http(format!("`{url}` is not a URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(UpstreamError::Http(format!(
                "`{url}` is not an http or https URL"
            )));
        }
        let client = reqwest::Client::builder()
            .build()
            .map_err(|e| UpstreamError::Http(format!("cannot build an HTTP client: {e}")))?;
        Ok(HttpTransport {
            client,
            url,
            session: None,
            protocol_version: None,
            pending: VecDeque::new(),
            streams: Vec::new(),
        })
    }

    pub(crate) fn set_protocol_version(&mut self, version: &str) {
        self.protocol_version = HeaderValue::from_str(version).ok();
    }

    fn with_session(&self, mut request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        if let Some(session) = &self.session {
            request = request.header(SESSION_HEADER, session.clone());
        }
        if let Some(version) = &self.protocol_version {
            request = request.header(VERSION_HEADER, version.clone());
        }
        request
    }

    pub(crate) async fn send(&mut self, message: &Value) -> Result<(), UpstreamError> {
        let request = self
            .client
            .post(self.url.clone())
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .body(message.to_string());
        let response = self
            .with_session(request)
            .send()
            .await
            .map_err(|e| UpstreamError::Http(format!("POST {}: {e}", self.url)))?;
        if let Some(session) = response.headers().get(SESSION_HEADER) {
            self.session = Some(session.clone());
        }
        let status = response.status();
        if !status.is_success() {
            let body = read_body(response).await.unwrap_or_default();
            return Err(UpstreamError::Http(format!(
                "POST {} answered {status}{}",
                self.url,
                if body.is_empty() {
                    String::new()
                } else {
                    format!(": {}", excerpt(&String::from_utf8_lossy(&body)))
                }
            )));
        }
        if status == reqwest::StatusCode::ACCEPTED {
            return Ok(());
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if content_type.starts_with("text/event-stream") {
            let events = sse_stream::SseStream::from_bytes_stream(response.bytes_stream());
            self.streams.push(Box::pin(events));
        } else if content_type.starts_with("application/json") {
            let body = read_body(response).await?;
            self.take(&body)?;
        } else if message.get("id").is_some() && message.get("method").is_some() {
            return Err(UpstreamError::Http(format!(
                "POST {} answered with content type `{content_type}`, neither JSON nor an event stream",
                self.url
            )));
        }
        Ok(())
    }

    /// Queues the message (or batch of messages) in `body`.
    fn take(&mut self, body: &[u8]) -> Result<(), UpstreamError> {
        let parsed: Value = serde_json::from_slice(body).map_err(|e| {
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
            match events.next().await {
                None => {
                    self.streams.pop();
                }
                Some(Err(e)) => {
                    self.streams.pop();
                    return Err(UpstreamError::Http(format!(
                        "the server's event stream broke: {e}"
                    )));
                }
                Some(Ok(event)) => {
                    let Some(data) = event.data.filter(|d| !d.trim().is_empty()) else {
                        continue; // a priming event, a comment or a retry hint
                    };
                    if data.len() > MAX_MESSAGE_BYTES {
                        return Err(UpstreamError::Protocol(format!(
                            "the server sent an event over {} MiB",
                            MAX_MESSAGE_BYTES >> 20
                        )));
                    }
                    if let Err(UpstreamError::Protocol(line)) = self.take(data.as_bytes()) {
                        return Ok(Some(Received::Garbage(line)));
                    }
                }
            }
        }
    }

    /// Deletes the session, if the server assigned one (a server may answer
    /// 405: it does not let clients end sessions).
    pub(crate) async fn close(self) -> Result<(), UpstreamError> {
        if self.session.is_some() {
            let request = self.with_session(self.client.delete(self.url.clone()));
            let _ = request.send().await;
        }
        Ok(())
    }
}

/// The body of `response`, refused past [`MAX_MESSAGE_BYTES`].
async fn read_body(response: reqwest::Response) -> Result<Vec<u8>, UpstreamError> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk =
            chunk.map_err(|e| UpstreamError::Http(format!("reading the answer failed: {e}")))?;
        if body.len() + chunk.len() > MAX_MESSAGE_BYTES {
            return Err(UpstreamError::Protocol(format!(
                "the server's HTTP answer is over {} MiB",
                MAX_MESSAGE_BYTES >> 20
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
