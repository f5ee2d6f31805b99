//! A publisher's JWKS fetched by URL (`mcp_signing_jwks_uri`, `--jwks URL`),
//! or discovered through a server's Protected Resource Metadata,
//! with the protections SEP-3140 asks of discovery fetches (those OAuth
//! metadata discovery needs): HTTPS only; the host's addresses resolved
//! once, every one checked, and the connection pinned to them (no second
//! lookup to rebind); no private, link-local, shared, loopback,
//! multicast or unspecified address, unless loopback is explicitly allowed
//! (tests, local development; over loopback plain `http` is allowed too);
//! no redirects; a size limit and a timeout.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use futures_util::StreamExt;
use mcp_resolve_host::jws::{self, PublicKey};

/// The largest JWKS read.
pub const MAX_JWKS_BYTES: usize = 1 << 20;

/// How long a fetch may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Why a JWKS could not be fetched.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// Not a URL this fetch may follow.
    #[error("`{url}` cannot be fetched: {why}")]
    Refused {
        /// The URL.
        url: String,
        /// Why.
        why: String,
    },
    /// The request failed, or the answer is not a JWKS.
    #[error("`{url}`: {why}")]
    Failed {
        /// The URL.
        url: String,
        /// Why.
        why: String,
    },
}

/// Why an address may not be fetched from, if it may not (`loopback`: the
/// loopback addresses are allowed).
pub fn forbidden(ip: IpAddr, loopback: bool) -> Option<&'static str> {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    if ip.is_loopback() {
        return (!loopback).then_some("a loopback address");
    }
    if ip.is_unspecified() || ip.is_multicast() {
        return Some("an unspecified or multicast address");
    }
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            if v4.is_private() {
                Some("a private address")
            } else if v4.is_link_local() {
                Some("a link-local address")
            } else if a == 100 && (64..128).contains(&b) {
                Some("a shared (carrier-grade NAT) address")
            } else if v4.is_broadcast() || a == 0 || a >= 240 {
                Some("a reserved address")
            } else {
                None
            }
        }
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            if first & 0xfe00 == 0xfc00 {
                Some("a private (unique local) address")
            } else if first & 0xffc0 == 0xfe80 {
                Some("a link-local address")
            } else {
                None
            }
        }
    }
}

/// The keys of the JWKS (or single JWK) at `url`; `loopback`: loopback
/// addresses (and plain `http` to them) are allowed.
pub async fn fetch(url: &str, loopback: bool) -> Result<Vec<PublicKey>, FetchError> {
    let text = fetch_text(url, loopback).await?;
    jws::read_keys(&text).map_err(|e| FetchError::Failed {
        url: url.to_owned(),
        why: format!("not a JWKS: {e}"),
    })
}

/// The signing keys of the server at `resource` (its canonical URI),
/// discovered as SEP-3140 says: its Protected Resource Metadata (RFC 9728,
/// at `/.well-known/oauth-protected-resource` with the resource's path
/// after it, then without), whose `mcp_signing_jwks_uri` is fetched; both
/// with [`fetch`]'s protections. The metadata must name `resource`.
pub async fn discover(resource: &str, loopback: bool) -> Result<Vec<PublicKey>, FetchError> {
    let failed = |url: &str, why: String| FetchError::Failed {
        url: url.to_owned(),
        why,
    };
    let parsed = reqwest::Url::parse(resource).map_err(|e| FetchError::Refused {
        url: resource.to_owned(),
        why: format!("not a URL: {e}"),
    })?;
    let path = parsed.path().trim_end_matches('/');
    let mut candidates = vec![format!("/.well-known/oauth-protected-resource{path}")];
    if !path.is_empty() {
        candidates.push("/.well-known/oauth-protected-resource".into());
    }
    let mut last = None;
    for candidate in candidates {
        let url = parsed
            .join(&candidate)
            .map_err(|e| failed(resource, e.to_string()))?
            .to_string();
        let text = match fetch_text(&url, loopback).await {
            Ok(text) => text,
            Err(e @ FetchError::Refused { .. }) => return Err(e),
            Err(e) => {
                last = Some(e);
                continue;
            }
        };
        let metadata: serde_json::Value = mcp_resolve_protocol::json::from_str(&text)
            .map_err(|e| failed(&url, format!("not Protected Resource Metadata: {e}")))?;
        if metadata.get("resource").and_then(serde_json::Value::as_str) != Some(resource) {
            return Err(failed(
                &url,
                format!("the metadata is for another resource, not `{resource}`"),
            ));
        }
        let Some(jwks) = metadata
            .get("mcp_signing_jwks_uri")
            .and_then(serde_json::Value::as_str)
        else {
            return Err(failed(
                &url,
                "the metadata has no `mcp_signing_jwks_uri`".into(),
            ));
        };
        return fetch(jwks, loopback).await;
    }
    Err(last.unwrap_or_else(|| failed(resource, "no metadata".into())))
}

/// The text at `url`, fetched with the protections above.
pub(crate) async fn fetch_text(url: &str, loopback: bool) -> Result<String, FetchError> {
    request_text(url, loopback, |client, url| {
        client
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
    })
    .await
}

/// The text `request` (made with a client held to the checked addresses,
/// for the parsed `url`) answers, with the protections above.
pub(crate) async fn request_text(
    url: &str,
    loopback: bool,
    request: impl FnOnce(&reqwest::Client, reqwest::Url) -> reqwest::RequestBuilder,
) -> Result<String, FetchError> {
    let refused = |why: String| FetchError::Refused {
        url: url.to_owned(),
        why,
    };
    let failed = |why: String| FetchError::Failed {
        url: url.to_owned(),
        why,
    };
    let parsed = reqwest::Url::parse(url).map_err(|e| refused(format!("not a URL: {e}")))?;
    let host = parsed
        .host_str()
        .ok_or_else(|| refused("it names no host".into()))?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = parsed.port_or_known_default().unwrap_or(443);
    let addresses: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), port))
        .await
        .map_err(|e| failed(format!("cannot resolve `{host}`: {e}")))?
        .collect();
    if addresses.is_empty() {
        return Err(failed(format!("`{host}` has no address")));
    }
    for address in &addresses {
        if let Some(why) = forbidden(address.ip(), loopback) {
            return Err(refused(format!(
                "`{host}` resolves to {}, {why}",
                address.ip()
            )));
        }
    }
    let all_loopback = addresses.iter().all(|a| a.ip().is_loopback());
    match parsed.scheme() {
        "https" => {}
        "http" if loopback && all_loopback => {}
        scheme => return Err(refused(format!("`{scheme}`: only `https` is fetched"))),
    }
    // The connection goes to the addresses checked, not to a second lookup.
    let client = reqwest::Client::builder()
        .resolve_to_addrs(&host, &addresses)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(TIMEOUT)
        .build()
        .map_err(|e| failed(format!("cannot make an HTTP client: {e}")))?;
    let response = request(&client, parsed)
        .send()
        .await
        .map_err(|e| failed(format!("the request failed: {e}")))?;
    if !response.status().is_success() {
        return Err(failed(format!("answered {}", response.status())));
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| failed(format!("the answer broke off: {e}")))?;
        if body.len() + chunk.len() > MAX_JWKS_BYTES {
            return Err(failed(format!("the answer is over {MAX_JWKS_BYTES} bytes")));
        }
        body.extend_from_slice(&chunk);
    }
    String::from_utf8(body).map_err(|_| failed("the answer is not UTF-8".into()))
}

/// [`fetch`], on a runtime of its own (for the command line, before any
/// other runtime runs).
pub fn fetch_blocking(url: &str, loopback: bool) -> Result<Vec<PublicKey>, FetchError> {
    blocking(url, fetch(url, loopback))
}

/// [`discover`], on a runtime of its own.
pub fn discover_blocking(resource: &str, loopback: bool) -> Result<Vec<PublicKey>, FetchError> {
    blocking(resource, discover(resource, loopback))
}

fn blocking<T>(
    url: &str,
    work: impl std::future::Future<Output = Result<T, FetchError>>,
) -> Result<T, FetchError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| FetchError::Failed {
            url: url.to_owned(),
            why: format!("cannot start the async runtime: {e}"),
        })?;
    runtime.block_on(work)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_link_local_and_loopback_addresses_are_refused() {
        for (ip, refused) in [
            ("10.1.2.3", true),
            ("172.16.0.1", true),
            ("192.168.1.1", true),
            ("169.254.169.254", true),
            ("100.64.0.1", true),
            ("0.0.0.0", true),
            ("224.0.0.1", true),
            ("255.255.255.255", true),
            ("127.0.0.1", true),
            ("::1", true),
            ("fe80::1", true),
            ("fd00::1", true),
            ("::ffff:10.0.0.1", true),
            ("::ffff:169.254.169.254", true),
            ("93.184.216.34", false),
            ("2606:2800:220:1:248:1893:25c8:1946", false),
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(forbidden(ip, false).is_some(), refused, "{ip}");
        }
        assert_eq!(forbidden("127.0.0.1".parse().unwrap(), true), None);
        assert_eq!(forbidden("::1".parse().unwrap(), true), None);
        assert!(forbidden("10.0.0.1".parse().unwrap(), true).is_some());
    }

    #[test]
    fn only_https_and_public_hosts_are_fetched() {
        for (url, why) in [
            ("http://93.184.216.34/jwks.json", "only `https`"),
            ("https://169.254.169.254/latest", "link-local"),
            ("https://10.0.0.1/jwks.json", "private"),
            ("https://127.0.0.1/jwks.json", "loopback"),
            ("https://[::1]/jwks.json", "loopback"),
            ("ftp://127.0.0.1/jwks.json", "loopback"),
            ("not a url", "not a URL"),
        ] {
            let error = fetch_blocking(url, false).unwrap_err();
            assert!(
                matches!(error, FetchError::Refused { .. }) && error.to_string().contains(why),
                "{url}: {error}"
            );
        }
        // Loopback allowed: still not another scheme.
        let error = fetch_blocking("ftp://127.0.0.1/jwks.json", true).unwrap_err();
        assert!(error.to_string().contains("only `https`"), "{error}");
    }
}
