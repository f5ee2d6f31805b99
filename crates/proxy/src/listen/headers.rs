//! The SEP-2243 headers of a host's `POST`, checked against its body where
//! the proxy receives it, as a 2026-07-28 server checks them: before any
//! decision reads the body, so that a gateway routing or authorizing on
//! the headers is never told one thing while the server is asked another.
//!
//! - A body whose `_meta` claims a protocol version: an
//!   `MCP-Protocol-Version` header naming another, or an `Mcp-Method`
//!   naming another method, is refused.
//! - A 2026-07-28 request must carry `MCP-Protocol-Version` and
//!   `Mcp-Method`, and `Mcp-Name` (decoded from `=?base64?…?=`) equal to the
//!   `params.name`, `params.uri` or `params.taskId` it mirrors.
//! - `initialize` with a 2026-07-28 `MCP-Protocol-Version` header is
//!   refused; a request whose header names 2026-07-28 but whose body claims
//!   no version is invalid params.
//!
//! Older-protocol traffic is never held to these rules. The refusals are
//! the ones the TypeScript SDK v2 server gives: HTTP 400 with `-32020`
//! (`data.mismatch` names the header's value and what the body says), or
//! `-32602` for the missing claim.

use axum::http::HeaderMap;
use mcp_resolve_protocol::{Envelope, Raw, is_stateless_version};
use serde_json::{Value, json};

use crate::upstream::http::{HeaderParams, header_value_text};

/// SEP-2243's error for headers that disagree with the body.
pub(crate) const HEADER_MISMATCH: i64 = -32020;

/// Why a message's headers were refused: the JSON-RPC error to answer with
/// (HTTP 400).
#[derive(Debug, PartialEq)]
pub(crate) struct Refusal {
    pub(crate) code: i64,
    pub(crate) message: String,
    pub(crate) data: Value,
}

/// The three headers as the host sent them, without optional whitespace;
/// a value that is not visible ASCII counts as sent with no usable value.
pub(crate) struct Sent<'h> {
    version: Option<&'h str>,
    method: Option<&'h str>,
    name: Option<&'h str>,
}

impl<'h> Sent<'h> {
    pub(crate) fn of(headers: &'h HeaderMap) -> Sent<'h> {
        let get = |name: &str| {
            headers
                .get(name)
                .map(|v| v.to_str().unwrap_or("").trim_matches([' ', '\t']))
        };
        Sent {
            version: get("mcp-protocol-version"),
            method: get("mcp-method"),
            name: get("mcp-name"),
        }
    }
}

fn mismatch(header: &str, body: String) -> Refusal {
    Refusal {
        code: HEADER_MISMATCH,
        message: format!("Bad Request: the request headers and body disagree: {body}"),
        data: json!({"mismatch": {"header": header, "body": body}}),
    }
}

const MISSING: &str = "(missing)";

/// Checks the headers `sent` with `message` (a request or notification;
/// responses pass), whose params, when its read parsed them, are `parsed`
/// (read from them, not from the text again).
pub(crate) fn check(
    sent: &Sent<'_>,
    message: &Envelope<'_>,
    parsed: Option<&Value>,
) -> Result<(), Refusal> {
    let Some(method) = message.method.as_deref() else {
        return Ok(());
    };
    // A legacy message that names no version anywhere: nothing to check
    // and nothing to read.
    if sent.version.is_none() && sent.method.is_none() && !may_claim(message.params) {
        return Ok(());
    }
    let params = match parsed {
        Some(parsed) => HeaderParams::of_tree(parsed),
        None => HeaderParams::of(message.params),
    };
    // The envelope's claim: `_meta`'s protocol version member (a `null`
    // one reads as none).
    let claimed = params
        .meta
        .as_ref()
        .and_then(|m| m.protocol_version.as_ref());
    let header_modern = sent.version.is_some_and(is_stateless_version);
    let request = message.is_request();
    if request && method == "initialize" {
        let claims_modern = claimed
            .and_then(Value::as_str)
            .is_some_and(is_stateless_version);
        if !claims_modern {
            if let (true, Some(version)) = (header_modern, sent.version) {
                return Err(mismatch(
                    version,
                    "an initialize request (legacy handshake) was sent with a modern MCP-Protocol-Version header".into(),
                ));
            }
            return Ok(());
        }
    }
    match claimed {
        Some(claim) => {
            let claim = claim.as_str();
            if let (Some(header), Some(claim)) = (sent.version, claim)
                && header != claim
            {
                let what = if request { "body" } else { "notification" };
                return Err(mismatch(
                    header,
                    format!(
                        "the {what} envelope names protocol version {claim} but the MCP-Protocol-Version header names {header}"
                    ),
                ));
            }
            let modern = claim.is_none_or(is_stateless_version);
            if let Some(header) = sent.method
                && header != method
                && (request || modern)
            {
                return Err(method_mismatch(header, method, request));
            }
            if request && modern {
                return standard(sent, method, &params, claim);
            }
            Ok(())
        }
        None if header_modern => {
            if let Some(header) = sent.method
                && header != method
            {
                return Err(method_mismatch(header, method, request));
            }
            if !request {
                return Ok(());
            }
            let missing = if params.meta.is_none() {
                "_meta"
            } else {
                mcp_resolve_protocol::META_PROTOCOL_VERSION
            };
            Err(Refusal {
                code: mcp_resolve_runtime::RpcError::INVALID_PARAMS,
                message: format!(
                    "Invalid params: the MCP-Protocol-Version header names protocol revision {}, but the request is missing the required per-request envelope key(s): {missing}",
                    sent.version.unwrap_or_default()
                ),
                data: json!({"envelope": {"missing": [missing]}}),
            })
        }
        None => Ok(()),
    }
}

fn method_mismatch(header: &str, method: &str, request: bool) -> Refusal {
    let what = if request { "body" } else { "notification body" };
    mismatch(
        header,
        format!("the {what} names method {method} but the Mcp-Method header names {header}"),
    )
}

/// The headers every 2026-07-28 request carries: `MCP-Protocol-Version`,
/// `Mcp-Method`, and `Mcp-Name` where the method has one.
fn standard(
    sent: &Sent<'_>,
    method: &str,
    params: &HeaderParams,
    claim: Option<&str>,
) -> Result<(), Refusal> {
    if sent.version.is_none() {
        let body = match claim {
            Some(claim) => format!(
                "the body envelope names protocol version {claim} but the required MCP-Protocol-Version header is absent"
            ),
            None => "the body carries a modern per-request envelope but the required MCP-Protocol-Version header is absent".into(),
        };
        return Err(mismatch(MISSING, body));
    }
    if sent.method.is_none() {
        return Err(mismatch(
            MISSING,
            format!("the body names method {method} but the required Mcp-Method header is absent"),
        ));
    }
    let Some((field, value)) = params.name_source(method) else {
        return Ok(());
    };
    let Some(header) = sent.name else {
        return match value {
            Some(value) => Err(mismatch(
                MISSING,
                format!(
                    "the body carries params.{field}=\"{value}\" but the required Mcp-Name header is absent"
                ),
            )),
            None => Ok(()),
        };
    };
    let Some(decoded) = header_value_text(header) else {
        return Err(mismatch(
            header,
            "the Mcp-Name header carries an invalid Base64 sentinel value".into(),
        ));
    };
    match value {
        Some(value) if decoded != value => Err(mismatch(
            header,
            format!(
                "the body carries params.{field}=\"{value}\" but the Mcp-Name header names \"{decoded}\""
            ),
        )),
        _ => Ok(()),
    }
}

/// Whether params could carry a `_meta` claim (a proof of absence when
/// `false`, without a parse).
fn may_claim(params: Option<Raw<'_>>) -> bool {
    params.is_some_and(|p| mcp_resolve_protocol::may_name_meta(p.get()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    const MODERN: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    fn checked(text: &str, pairs: &[(&'static str, &str)]) -> Result<(), Refusal> {
        let map = headers(pairs);
        let message = Envelope::of(text).unwrap();
        let by_text = check(&Sent::of(&map), &message, None);
        // From the parsed params, the same answer.
        assert_eq!(
            check(&Sent::of(&map), &message, message.params().as_ref()),
            by_text,
            "{text}"
        );
        by_text
    }

    const ALL: [(&str, &str); 3] = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "t"),
    ];

    #[test]
    fn a_modern_request_with_its_headers_passes() {
        assert_eq!(checked(MODERN, &ALL), Ok(()));
        // Optional whitespace around a value is no difference.
        assert_eq!(
            checked(
                MODERN,
                &[
                    ("mcp-protocol-version", " 2026-07-28"),
                    ("mcp-method", "tools/call\t"),
                    ("mcp-name", "=?base64?dA==?="),
                ]
            ),
            Ok(())
        );
    }

    #[test]
    fn each_header_missing_or_contradicting_the_body_is_refused() {
        for (drop, expected) in [
            (
                "mcp-protocol-version",
                "the required MCP-Protocol-Version header is absent",
            ),
            ("mcp-method", "the required Mcp-Method header is absent"),
            ("mcp-name", "the required Mcp-Name header is absent"),
        ] {
            let pairs: Vec<_> = ALL.iter().copied().filter(|(n, _)| *n != drop).collect();
            let refusal = checked(MODERN, &pairs).unwrap_err();
            assert_eq!(refusal.code, HEADER_MISMATCH);
            assert!(refusal.message.contains(expected), "{drop}: {refusal:?}");
            assert_eq!(refusal.data["mismatch"]["header"], MISSING);
        }
        for (name, value, expected) in [
            (
                "mcp-protocol-version",
                "2025-11-25",
                "names protocol version 2026-07-28 but the MCP-Protocol-Version header names 2025-11-25",
            ),
            (
                "mcp-method",
                "tools/list",
                "names method tools/call but the Mcp-Method header names tools/list",
            ),
            (
                "mcp-name",
                "u",
                "params.name=\"t\" but the Mcp-Name header names \"u\"",
            ),
            ("mcp-name", "=?base64?!!?=", "invalid Base64 sentinel"),
        ] {
            let pairs: Vec<_> = ALL
                .iter()
                .map(|(n, v)| if *n == name { (*n, value) } else { (*n, *v) })
                .collect();
            let refusal = checked(MODERN, &pairs).unwrap_err();
            assert_eq!(refusal.code, HEADER_MISMATCH, "{name}");
            assert!(refusal.message.contains(expected), "{name}: {refusal:?}");
            assert_eq!(refusal.data["mismatch"]["header"], value);
        }
    }

    #[test]
    fn legacy_traffic_is_not_held_to_the_rules() {
        let legacy = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{}}}"#;
        assert_eq!(checked(legacy, &[]), Ok(()));
        assert_eq!(
            checked(legacy, &[("mcp-protocol-version", "2025-11-25")]),
            Ok(())
        );
        // A legacy notification's Mcp-Method is not checked.
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(checked(note, &[("mcp-method", "x")]), Ok(()));
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;
        assert_eq!(
            checked(init, &[("mcp-protocol-version", "2025-11-25")]),
            Ok(())
        );
        // A `_meta` without a claim (a progress token) is no claim.
        let token = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":1}}}"#;
        assert_eq!(
            checked(token, &[("mcp-protocol-version", "2025-11-25")]),
            Ok(())
        );
        // Responses pass.
        assert_eq!(
            checked(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, &ALL),
            Ok(())
        );
    }

    #[test]
    fn a_modern_header_needs_a_modern_body() {
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;
        let refusal = checked(init, &[("mcp-protocol-version", "2026-07-28")]).unwrap_err();
        assert_eq!(refusal.code, HEADER_MISMATCH);
        let bare = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;
        let refusal = checked(bare, &[("mcp-protocol-version", "2026-07-28")]).unwrap_err();
        assert_eq!(refusal.code, -32602);
        assert!(refusal.message.contains("_meta"), "{refusal:?}");
        // A modern notification: only contradictions, no presence rule.
        let note = r#"{"jsonrpc":"2.0","method":"notifications/x","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        assert_eq!(checked(note, &[]), Ok(()));
        assert!(checked(note, &[("mcp-method", "notifications/y")]).is_err());
    }

    #[test]
    fn a_method_without_a_name_needs_no_mcp_name() {
        let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        assert_eq!(
            checked(
                list,
                &[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "tools/list")
                ]
            ),
            Ok(())
        );
    }
}
