//! `--auth-issuer` over HTTP: the refusals of the resource server
//! ([`crate::auth`]) as responses, and the per-call scope check (step-up).

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use mcp_resolve_protocol::Envelope;
use mcp_resolve_proxy_core::judge;
use serde_json::{Value, json};

use super::hub::Hub;
use crate::auth::{Authorizer, Denied, Principal};
use crate::record::Record;

/// The response of a refusal: `401` (no token, or one that does not
/// verify) or `403` (scopes missing), with its `WWW-Authenticate`
/// challenge and an OAuth error body.
pub(super) fn denied(auth: &Authorizer, denied: &Denied) -> Response {
    let (status, error, description) = match denied {
        Denied::Missing => (
            StatusCode::UNAUTHORIZED,
            "invalid_request",
            "a bearer token is required".to_owned(),
        ),
        Denied::Invalid(why) => {
            crate::log(&format!("a request's token was refused: {why}"));
            (StatusCode::UNAUTHORIZED, "invalid_token", why.clone())
        }
        Denied::InsufficientScope { missing, .. } => (
            StatusCode::FORBIDDEN,
            "insufficient_scope",
            format!(
                "this call needs the scopes {}",
                missing.iter().cloned().collect::<Vec<_>>().join(" ")
            ),
        ),
    };
    (
        status,
        [
            (header::WWW_AUTHENTICATE, auth.challenge(denied)),
            (header::CONTENT_TYPE, "application/json".to_owned()),
        ],
        json!({"error": error, "error_description": description}).to_string(),
    )
        .into_response()
}

/// A `tools/call` or a resolution (the rules' method) whose resolution
/// needs scopes `principal`'s token lacks (the core's
/// [`mcp_resolve_proxy_core::judge::step_up`]): its `403`, audited. `None`
/// when the request may go on.
///
/// `params`: the request's params as its read parsed them; the methods the
/// step-up reads are among those whose params every read parses.
pub(super) fn step_up(
    hub: &Hub,
    principal: &Principal,
    message: &Envelope<'_>,
    params: Option<&Value>,
) -> Option<Response> {
    let auth = hub.listen.auth.as_ref()?;
    if !message.is_request() {
        return None;
    }
    let method = message.method.as_deref()?;
    let up = judge::step_up(&hub.rules, &principal.scopes, method, params)?;
    if hub.options.sinks.records() {
        hub.options.sinks.keep(Record::stepped_up(
            std::time::SystemTime::now(),
            &up,
            principal,
        ));
    }
    let denied = Denied::InsufficientScope {
        granted: principal.scopes.clone(),
        missing: up.missing,
    };
    Some(self::denied(auth, &denied))
}
