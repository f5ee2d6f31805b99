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
//! With a signing key (SEP-3140), it also serves the server's Protected
//! Resource Metadata (RFC 9728, at `/.well-known/oauth-protected-resource`
//! and with `/mcp` after it) naming `mcp_signing_jwks_uri`, and that JWKS
//! (at [`crate::declare::JWKS_PATH`]).
//!
//! The same protections as rmcp's: requests whose `Host` is not a loopback
//! name (or one allowed with `--allow-host`) are refused with `403`, and so
//! are requests whose `Origin` is present and neither a loopback origin nor
//! one allowed with `--allow-origin` (DNS rebinding).

mod auth;
mod exchange;
mod guards;
mod headers;
mod hub;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;

use self::exchange::{delete, get, post};

/// SEP-2243: whether the headers of a host's `POST` agree with its message
/// (`message`, its envelope, and `params`, its params when its read parsed
/// them), as `--listen` checks them before anything reads the body to
/// decide; the JSON-RPC error it answers with HTTP 400 otherwise (`-32020`
/// with `data.mismatch`, or `-32602`).
pub fn check_headers(
    headers: &axum::http::HeaderMap,
    message: &mcp_resolve_protocol::Envelope<'_>,
    params: Option<&serde_json::Value>,
) -> Result<(), mcp_resolve_runtime::RpcError> {
    headers::check(&headers::Sent::of(headers), message, params).map_err(|refusal| {
        mcp_resolve_runtime::RpcError::new(refusal.code, refusal.message, Some(refusal.data))
    })
}
use self::hub::Hub;
use crate::link::Upstream;
use crate::log;
use crate::relay::{Options, ProxyRules};
use crate::upstream::UpstreamError;

const SESSION_HEADER: &str = "mcp-session-id";

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
    /// The proxy as an OAuth resource server (`--auth-issuer`): every
    /// request carries a bearer token, and each call the scopes its
    /// resolution needs.
    pub auth: Option<Arc<crate::auth::Authorizer>>,
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
    let mut app = axum::Router::new().route("/mcp", axum::routing::any(handle));
    if hub.options.guard.declare.is_some() || hub.listen.auth.is_some() {
        app = app
            .route(
                "/.well-known/oauth-protected-resource",
                axum::routing::get(resource_metadata),
            )
            .route(
                "/.well-known/oauth-protected-resource/mcp",
                axum::routing::get(resource_metadata),
            )
            .route(crate::declare::JWKS_PATH, axum::routing::get(jwks));
    }
    let app = app.with_state(Arc::clone(&hub));
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

/// A JSON document as a `200` answer.
fn json_document(value: &serde_json::Value) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

/// The Protected Resource Metadata of the server the proxy signs for.
async fn resource_metadata(State(hub): State<Arc<Hub>>, request: Request) -> Response {
    if let Some(refusal) = hub.refusal(request.headers()) {
        return refusal;
    }
    let mut metadata = match &hub.listen.auth {
        Some(auth) => auth.resource_metadata(),
        None => serde_json::json!({}),
    };
    if let Some(declarer) = &hub.options.guard.declare {
        let jwks_uri = reqwest::Url::parse(declarer.server_uri())
            .and_then(|uri| uri.join(crate::declare::JWKS_PATH))
            .map(String::from)
            .unwrap_or_default();
        if let (serde_json::Value::Object(all), serde_json::Value::Object(signing)) =
            (&mut metadata, declarer.resource_metadata(&jwks_uri))
        {
            for (key, value) in signing {
                // The resource server's `resource` wins: tokens name it.
                all.entry(key).or_insert(value);
            }
        }
    }
    json_document(&metadata)
}

/// The JWKS of the key the proxy signs with.
async fn jwks(State(hub): State<Arc<Hub>>, request: Request) -> Response {
    if let Some(refusal) = hub.refusal(request.headers()) {
        return refusal;
    }
    match &hub.options.guard.declare {
        Some(declarer) => json_document(&declarer.jwks()),
        None => StatusCode::NOT_FOUND.into_response(),
    }
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
    let principal = match &hub.listen.auth {
        Some(auth) => {
            let authorization = request
                .headers()
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok());
            match auth.authorize(authorization).await {
                Ok(principal) => Some(principal),
                Err(denied) => {
                    // Refused before its body is read: the connection is
                    // not kept (hyper would close it anyway, and a client
                    // that sent its next request on it meanwhile would see
                    // it cut off without an answer).
                    let mut response = self::auth::denied(auth, &denied);
                    response.headers_mut().insert(
                        header::CONNECTION,
                        axum::http::HeaderValue::from_static("close"),
                    );
                    return response;
                }
            }
        }
        None => None,
    };
    match *request.method() {
        Method::POST => post(hub, session_id, principal, request).await,
        Method::GET => get(hub, session_id, request.headers()),
        Method::DELETE => delete(hub, session_id),
        _ => (
            StatusCode::METHOD_NOT_ALLOWED,
            [(header::ALLOW, "GET, POST, DELETE")],
        )
            .into_response(),
    }
}
