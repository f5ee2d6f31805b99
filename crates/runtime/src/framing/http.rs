//! The JSON-RPC screen of [`super`] in front of a streamable HTTP service
//! (feature `http`), such as rmcp's `StreamableHttpService`.
//!
//! Every `POST` whose `Content-Type` is `application/json` is read (at most
//! [`Screened::max_body_bytes`]) and screened as one message, as
//! [`Screen::per_message`] describes: what the screen answers is answered
//! here with HTTP `400 Bad Request` and the JSON-RPC error as an
//! `application/json` body — a body that is not JSON or not UTF-8 (`-32700`,
//! `"id": null`), a batch or a value that is not a message (`-32600`), a
//! request with a bad `jsonrpc`, `method`, `params` or `params._meta`, and,
//! for a server in the extension dialect, a 2026-07-28 `tools/resolve`
//! whose capability metadata is missing or does not declare the extension
//! (`-32021`, where rmcp would answer `-32602`). A body over the limit gets
//! `413 Payload Too Large` with `-32600`. Everything else — other methods,
//! other content types, well-formed messages — reaches the inner service
//! unchanged.
//!
//! ```ignore
//! let service = StreamableHttpService::new(move || Ok(server.clone()), sessions, config);
//! let router = axum::Router::new()
//!     .nest_service("/mcp", framing::http::Screened::for_resolution(&resolution, service));
//! ```

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body::Body;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use serde_json::Value;

use super::{Screen, Screened as Verdict};

/// The largest request body read by default: the limit rmcp's streamable
/// HTTP service applies itself (4 MiB).
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 << 20;

/// The response type of rmcp's streamable HTTP service, and of [`Screened`].
pub type BoxResponse = Response<BoxBody<Bytes, Infallible>>;

/// A service that screens request bodies before `inner` sees them.
#[derive(Clone, Debug)]
pub struct Screened<S> {
    inner: S,
    resolve_method: Option<&'static str>,
    max_body_bytes: usize,
}

impl<S> Screened<S> {
    /// Screens the requests of `inner` for JSON-RPC framing only.
    pub fn new(inner: S) -> Self {
        Screened {
            inner,
            resolve_method: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }

    /// Screens the requests of `inner`, a server answering `resolution`'s
    /// requests (in the extension dialect, with the capability check).
    pub fn for_resolution(resolution: &crate::rmcp::ToolResolution, inner: S) -> Self {
        Screened {
            resolve_method: (resolution.dialect() == crate::Dialect::Extension)
                .then(|| resolution.method()),
            ..Screened::new(inner)
        }
    }

    /// Sets the largest body read (default [`DEFAULT_MAX_BODY_BYTES`]); keep
    /// it no larger than the inner service's own limit.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// What the screen makes of one request body.
    fn screen(&self, body: &[u8]) -> Verdict {
        let Ok(text) = std::str::from_utf8(body) else {
            return reply(
                Value::Null,
                crate::RpcError::PARSE_ERROR,
                "Parse error: the body is not UTF-8",
            );
        };
        let mut screen = match self.resolve_method {
            Some(method) => Screen::checking(method),
            None => Screen::default(),
        }
        .per_message();
        match screen.line(text) {
            Verdict::Drop("a blank line") => reply(
                Value::Null,
                crate::RpcError::PARSE_ERROR,
                "Parse error: the body is empty",
            ),
            Verdict::Drop(why) => reply(
                Value::Null,
                crate::RpcError::INVALID_REQUEST,
                &format!("Invalid Request: {why}"),
            ),
            other => other,
        }
    }
}

fn reply(id: Value, code: i64, message: &str) -> Verdict {
    Verdict::Reply(mcp_resolve_protocol::error_value(
        &id,
        &crate::RpcError::new(code, message, None),
    ))
}

fn json_response(status: StatusCode, body: &Value) -> BoxResponse {
    let mut response =
        Response::new(Full::new(Bytes::from(serde_json::to_vec(body).unwrap_or_default())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Whether the request carries a JSON body (`Content-Type` essence
/// `application/json`).
fn is_json(request: &http::request::Parts) -> bool {
    request
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            let essence = value.split_once(';').map_or(value, |(essence, _)| essence);
            essence.trim().eq_ignore_ascii_case("application/json")
        })
}

impl<S, B> tower_service::Service<Request<B>> for Screened<S>
where
    S: tower_service::Service<
            Request<Full<Bytes>>,
            Response = BoxResponse,
            Error = Infallible,
            Future: Send + 'static,
        > + Clone
        + Send
        + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = BoxResponse;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<BoxResponse, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        // The inner service was made ready by `poll_ready`: take that one
        // and leave a clone in its place (the usual tower idiom).
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let this = Screened {
            inner: (),
            resolve_method: self.resolve_method,
            max_body_bytes: self.max_body_bytes,
        };
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let bytes = match Limited::new(body, this.max_body_bytes).collect().await {
                Ok(collected) => collected.to_bytes(),
                Err(e) => {
                    let too_large = e.is::<http_body_util::LengthLimitError>();
                    let (status, message) = if too_large {
                        (
                            StatusCode::PAYLOAD_TOO_LARGE,
                            format!(
                                "Invalid Request: the body is larger than {} bytes",
                                this.max_body_bytes
                            ),
                        )
                    } else {
                        (
                            StatusCode::BAD_REQUEST,
                            format!("Invalid Request: the body could not be read: {e}"),
                        )
                    };
                    let error =
                        crate::RpcError::new(crate::RpcError::INVALID_REQUEST, message, None);
                    return Ok(json_response(
                        status,
                        &mcp_resolve_protocol::error_value(&Value::Null, &error),
                    ));
                }
            };
            if parts.method == Method::POST
                && is_json(&parts)
                && let Verdict::Reply(answer) = this.screen(&bytes)
            {
                return Ok(json_response(StatusCode::BAD_REQUEST, &answer));
            }
            inner
                .call(Request::from_parts(parts, Full::new(bytes)))
                .await
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    /// An inner service that answers every request `200` with the body it got.
    #[derive(Clone)]
    struct Echo;

    impl tower_service::Service<Request<Full<Bytes>>> for Echo {
        type Response = BoxResponse;
        type Error = Infallible;
        type Future = Pin<Box<dyn Future<Output = Result<BoxResponse, Infallible>> + Send>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, request: Request<Full<Bytes>>) -> Self::Future {
            Box::pin(async move {
                let body = request.into_body().collect().await.unwrap().to_bytes();
                Ok(Response::new(Full::new(body).boxed()))
            })
        }
    }

    async fn post(
        service: &mut Screened<Echo>,
        content_type: &str,
        body: &'static [u8],
    ) -> (StatusCode, Bytes) {
        use tower_service::Service;
        let request = Request::post("/mcp")
            .header(header::CONTENT_TYPE, content_type)
            .body(Full::new(Bytes::from_static(body)))
            .unwrap();
        let response = service.call(request).await.unwrap();
        let status = response.status();
        (
            status,
            response.into_body().collect().await.unwrap().to_bytes(),
        )
    }

    fn error(body: &Bytes) -> (i64, Value) {
        let v: Value = serde_json::from_slice(body).unwrap();
        (v["error"]["code"].as_i64().unwrap(), v["id"].clone())
    }

    #[tokio::test]
    async fn malformed_bodies_are_answered_and_good_ones_pass_unchanged() {
        let mut s = Screened::new(Echo);
        let json = "application/json; charset=utf-8";
        for (body, code, id) in [
            (&b"not json"[..], -32700, Value::Null),
            (b"", -32700, Value::Null),
            (b"\"\xff\"", -32700, Value::Null),
            (b"[1]", -32600, Value::Null),
            (
                br#"{"jsonrpc":"1.0","id":4,"method":"tools/list"}"#,
                -32600,
                json!(4),
            ),
            (
                br#"{"jsonrpc":"2.0","id":"x","method":"tools/list","params":[]}"#,
                -32602,
                json!("x"),
            ),
            (
                br#"{"jsonrpc":"2.0","method":"n","params":7}"#,
                -32600,
                Value::Null,
            ),
        ] {
            let (status, answer) = post(&mut s, json, body).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{body:?}");
            assert_eq!(error(&answer), (code, id), "{body:?}");
        }
        let good = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;
        assert_eq!(
            post(&mut s, json, good).await,
            (StatusCode::OK, Bytes::from_static(good))
        );
        // A notification, alone in its request, is not "too early".
        let note = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(post(&mut s, json, note).await.0, StatusCode::OK);
        // Other content types are the inner service's business.
        assert_eq!(
            post(&mut s, "text/plain", b"not json").await.0,
            StatusCode::OK
        );
    }

    #[tokio::test]
    async fn bodies_over_the_limit_are_refused() {
        let mut s = Screened::new(Echo).max_body_bytes(8);
        let (status, answer) = post(&mut s, "application/json", b"{\"jsonrpc\":\"2.0\"}").await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(error(&answer), (-32600, Value::Null));
    }

    #[tokio::test]
    async fn resolve_requests_are_checked_per_message() {
        let mut s = Screened {
            resolve_method: Some("tools/resolve"),
            ..Screened::new(Echo)
        };
        let modern = br#"{"jsonrpc":"2.0","id":1,"method":"tools/resolve","params":{"name":"t","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        let (status, answer) = post(&mut s, "application/json", modern).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(error(&answer), (-32021, json!(1)));
        // Without a 2026-07-28 `_meta`, a session's request: the server checks.
        let legacy = br#"{"jsonrpc":"2.0","id":2,"method":"tools/resolve","params":{"name":"t","arguments":{}}}"#;
        assert_eq!(
            post(&mut s, "application/json", legacy).await.0,
            StatusCode::OK
        );
    }
}
