//! Who may talk to the listener: the protections rmcp's streamable HTTP
//! server has. A request whose `Host` is not a loopback name, the bound
//! address or one allowed with `--allow-host` is refused with `403`, and so
//! is one whose `Origin` is present and neither a loopback origin nor one
//! allowed with `--allow-origin` (DNS rebinding).

use std::net::IpAddr;

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;

use super::ListenOptions;
use super::exchange::refuse;
use super::hub::Hub;

impl Hub {
    /// `None` when `headers` pass the `Host` and `Origin` checks; the
    /// refusal otherwise.
    pub(super) fn refusal(&self, headers: &HeaderMap) -> Option<Response> {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        if !host_allowed(host, &self.listen) {
            return Some(refuse(
                StatusCode::FORBIDDEN,
                &format!(
                    "Forbidden: Host `{host}` is not allowed (mcp-resolve proxy --allow-host)"
                ),
            ));
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("");
            if !origin_allowed(origin, &self.listen.allowed_origins) {
                return Some(refuse(
                    StatusCode::FORBIDDEN,
                    &format!(
                        "Forbidden: Origin `{origin}` is not allowed (mcp-resolve proxy --allow-origin)"
                    ),
                ));
            }
        }
        None
    }
}

const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// `host` (a `Host` header: `name[:port]`, IPv6 in brackets) and its port.
fn split_authority(authority: &str) -> Option<(String, Option<u16>)> {
    let authority = authority.trim();
    if authority.is_empty() {
        return None;
    }
    let parsed = axum::http::uri::Authority::try_from(authority).ok()?;
    let host = parsed
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    Some((host, parsed.port_u16()))
}

fn host_allowed(host: &str, listen: &ListenOptions) -> bool {
    let Some((name, port)) = split_authority(host) else {
        return false;
    };
    let bound = listen.addr.ip();
    if LOOPBACK_NAMES.contains(&name.as_str())
        || (!bound.is_unspecified() && name.parse::<IpAddr>().ok() == Some(bound))
    {
        return true;
    }
    listen.allowed_hosts.iter().any(|allowed| {
        split_authority(allowed).is_some_and(|(allowed_name, allowed_port)| {
            allowed_name == name && allowed_port.is_none_or(|p| Some(p) == port)
        })
    })
}

fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
    let normal = |o: &str| o.trim().trim_end_matches('/').to_ascii_lowercase();
    let origin = normal(origin);
    if allowed.iter().any(|a| normal(a) == origin) {
        return true;
    }
    let Ok(uri) = origin.parse::<axum::http::Uri>() else {
        return false;
    };
    matches!(uri.scheme_str(), Some("http" | "https"))
        && uri.authority().is_some_and(|a| {
            let host = a.host().trim_start_matches('[').trim_end_matches(']');
            LOOPBACK_NAMES.contains(&host)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(addr: &str, hosts: &[&str]) -> ListenOptions {
        ListenOptions {
            addr: addr.parse().unwrap(),
            allowed_hosts: hosts.iter().map(|h| h.to_string()).collect(),
            allowed_origins: Vec::new(),
            max_sessions: 4,
            session_idle: None,
            auth: None,
        }
    }

    #[test]
    fn hosts_are_loopback_names_the_bound_address_or_allowed() {
        let local = options("127.0.0.1:8080", &[]);
        for host in [
            "localhost:8080",
            "127.0.0.1:8080",
            "[::1]:8080",
            "LOCALHOST",
        ] {
            assert!(host_allowed(host, &local), "{host}");
        }
        for host in [
            "evil.example:8080",
            "",
            "127.0.0.2:8080",
            "localhost.evil.example",
        ] {
            assert!(!host_allowed(host, &local), "{host}");
        }
        let bound = options("10.0.0.5:8080", &["proxy.internal:8080"]);
        assert!(host_allowed("10.0.0.5:8080", &bound));
        assert!(host_allowed("proxy.internal:8080", &bound));
        assert!(!host_allowed("proxy.internal:9090", &bound));
        let any = options("0.0.0.0:8080", &[]);
        assert!(!host_allowed("0.0.0.0:8080", &any));
    }

    #[test]
    fn origins_are_loopback_or_allowed() {
        let allowed = vec!["https://app.example".to_string()];
        for origin in [
            "http://localhost:3000",
            "http://127.0.0.1",
            "https://[::1]:8443",
        ] {
            assert!(origin_allowed(origin, &[]), "{origin}");
        }
        for origin in [
            "https://evil.example",
            "null",
            "file://localhost",
            "",
            "http://localhost.evil.example",
        ] {
            assert!(!origin_allowed(origin, &[]), "{origin}");
        }
        assert!(origin_allowed("https://app.example/", &allowed));
        assert!(!origin_allowed("https://app.example:444", &allowed));
    }
}
