//! The listening proxy as an OAuth 2.1 resource server (MCP authorization,
//! `--auth-issuer`): every request to `/mcp` carries a bearer token, a JWT
//! access token verified against the issuer's keys, for this resource (its
//! canonical URI as the audience); a call whose resolved variant needs
//! scopes the token lacks is answered `403 insufficient_scope` naming the
//! scopes to ask for (step-up).
//!
//! The issuer's keys come from its metadata (RFC 8414
//! `/.well-known/oauth-authorization-server`, then OpenID Connect
//! discovery), fetched with [`crate::jwks`]'s protections (HTTPS only; a
//! loopback issuer, as tests use, over loopback), cached, and fetched
//! again when a token names a key the cache does not hold (at most every
//! [`REFRESH_INTERVAL`]). Tokens are verified by `jsonwebtoken`: RS256,
//! ES256 or EdDSA as the key's type says (never an HMAC, never `none`),
//! `iss`, `aud`, `exp`, `nbf`, with [`LEEWAY`] of clock skew.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::{Value, json};

/// Clock skew allowed on `exp` and `nbf`, in seconds.
pub const LEEWAY: u64 = 30;

/// The shortest time between two fetches of the issuer's keys.
pub const REFRESH_INTERVAL: Duration = Duration::from_secs(30);

/// Who a verified token speaks for.
pub use mcp_resolve_policy::Principal;

/// Where and as whom the proxy introspects opaque tokens (RFC 7662).
#[derive(Clone)]
pub struct Introspection {
    /// The introspection endpoint.
    pub url: String,
    /// The proxy's client id at the authorization server.
    pub client_id: String,
    /// Its secret (from the environment or a file, never the command line).
    pub client_secret: String,
}

/// Why a request is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Denied {
    /// It carries no bearer token: `401`, and where to get one.
    Missing,
    /// Its token does not verify: `401 invalid_token`, and why.
    Invalid(String),
    /// Its token lacks scopes this call needs: `403 insufficient_scope`.
    InsufficientScope {
        /// What the token grants.
        granted: BTreeSet<String>,
        /// What the call needs besides.
        missing: BTreeSet<String>,
    },
}

/// Why the resource server cannot start.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The issuer's metadata or keys cannot be had.
    #[error("the authorization server `{issuer}`: {why}")]
    Issuer {
        /// The issuer.
        issuer: String,
        /// Why.
        why: String,
    },
}

#[derive(Deserialize)]
struct Claims {
    exp: u64,
    sub: Option<String>,
    client_id: Option<String>,
    azp: Option<String>,
    scope: Option<String>,
    scp: Option<Vec<String>>,
}

/// The resource server's settings and the issuer's keys.
pub struct Authorizer {
    issuer: String,
    audience: String,
    jwks_uri: String,
    loopback: bool,
    scopes_supported: Vec<String>,
    /// The scopes a request without a token is told to ask for first.
    first_scope: Option<String>,
    /// `tools/list` shows a token only the tools it can call.
    by_scope: bool,
    /// Opaque tokens are introspected here (RFC 7662).
    introspection: Option<Introspection>,
    keys: RwLock<Keys>,
    /// Tokens that verified, with who they speak for and when they
    /// expire: a host sends the same token with every request, and its
    /// signature is checked once.
    verified: Mutex<HashMap<String, (Principal, u64)>>,
}

/// The most verified tokens remembered (the cache is emptied when full).
const CACHED_TOKENS: usize = 1024;

struct Keys {
    set: JwkSet,
    fetched: Instant,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("jwks_uri", &self.jwks_uri)
            .finish_non_exhaustive()
    }
}

/// Whether `url`'s host is a loopback address or `localhost`.
fn is_loopback(url: &str) -> bool {
    reqwest::Url::parse(url).is_ok_and(|u| {
        let host = u.host_str().unwrap_or_default();
        let host = host.trim_start_matches('[').trim_end_matches(']');
        host == "localhost"
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    })
}

impl Authorizer {
    /// The resource server for `audience` (the canonical URI hosts reach
    /// it at) trusting tokens `issuer` issues: the issuer's metadata and
    /// keys are fetched now. `scopes_supported` is what the metadata lists.
    pub async fn discover(
        issuer: &str,
        audience: &str,
        scopes_supported: Vec<String>,
    ) -> Result<Authorizer, SetupError> {
        let fail = |why: String| SetupError::Issuer {
            issuer: issuer.to_owned(),
            why,
        };
        let loopback = is_loopback(issuer);
        let metadata = metadata(issuer, loopback).await.map_err(fail)?;
        if metadata.get("issuer").and_then(Value::as_str) != Some(issuer) {
            return Err(fail(format!(
                "its metadata names the issuer {}, not this one",
                metadata.get("issuer").unwrap_or(&Value::Null)
            )));
        }
        let jwks_uri = metadata
            .get("jwks_uri")
            .and_then(Value::as_str)
            .ok_or_else(|| fail("its metadata has no `jwks_uri`".into()))?
            .to_owned();
        let set = fetch_keys(&jwks_uri, loopback).await.map_err(fail)?;
        let mut authorizer = Authorizer::with_keys(issuer, audience, set, scopes_supported);
        authorizer.jwks_uri = jwks_uri;
        authorizer.loopback = loopback;
        Ok(authorizer)
    }

    /// A resource server with the issuer's keys given (`keys`, a JWKS)
    /// rather than discovered: they are never fetched again.
    pub fn with_keys(
        issuer: &str,
        audience: &str,
        keys: JwkSet,
        scopes_supported: Vec<String>,
    ) -> Authorizer {
        Authorizer {
            issuer: issuer.to_owned(),
            audience: audience.to_owned(),
            jwks_uri: String::new(),
            loopback: false,
            scopes_supported,
            first_scope: None,
            by_scope: false,
            introspection: None,
            keys: RwLock::new(Keys {
                set: keys,
                fetched: Instant::now(),
            }),
            verified: Mutex::new(HashMap::new()),
        }
    }

    /// Names `scope` (space-separated) in the challenge to a request
    /// without a token: what a client asks for first (MCP's scope
    /// selection takes the challenge's `scope`, else every scope the
    /// metadata lists); later calls step up from there.
    pub fn asking_first(mut self, scope: &str) -> Authorizer {
        self.first_scope = Some(scope.to_owned()).filter(|s| !s.trim().is_empty());
        self
    }

    /// Introspects tokens that are not JWTs at `introspection`'s endpoint
    /// (RFC 7662), as its client: an active token for this audience (and,
    /// when it says so, this issuer) is accepted, and the answer is cached
    /// for the token's lifetime.
    pub fn introspecting(mut self, introspection: Introspection) -> Authorizer {
        self.introspection = Some(introspection);
        self
    }

    /// `tools/list` shows each token only the tools it can call at least
    /// one variant of (`--list-by-scope`).
    pub fn listing_by_scope(mut self) -> Authorizer {
        self.by_scope = true;
        self
    }

    /// Whether `tools/list` is filtered by the token's scopes.
    pub fn lists_by_scope(&self) -> bool {
        self.by_scope
    }

    /// The canonical resource URI tokens must be issued for.
    pub fn audience(&self) -> &str {
        &self.audience
    }

    /// The resource's Protected Resource Metadata (RFC 9728).
    pub fn resource_metadata(&self) -> Value {
        json!({
            "resource": self.audience,
            "authorization_servers": [self.issuer],
            "scopes_supported": self.scopes_supported,
            "bearer_methods_supported": ["header"],
        })
    }

    /// Where the resource's metadata is: the well-known path with the
    /// resource's path after it, on its origin.
    pub fn resource_metadata_url(&self) -> String {
        match reqwest::Url::parse(&self.audience) {
            Ok(url) => {
                let path = url.path().trim_end_matches('/');
                let origin = url.origin().ascii_serialization();
                format!("{origin}/.well-known/oauth-protected-resource{path}")
            }
            Err(_) => String::new(),
        }
    }

    /// Verifies a request's `Authorization` header value, fetching the
    /// issuer's keys again when the token names one not held (at most
    /// every [`REFRESH_INTERVAL`]).
    pub async fn authorize(&self, authorization: Option<&str>) -> Result<Principal, Denied> {
        match self.check(authorization) {
            Err(Denied::Invalid(why)) if why.starts_with(NOT_A_JWT) => {
                match (&self.introspection, authorization.and_then(bearer)) {
                    (Some(introspection), Some(token)) => {
                        self.introspect(introspection, token).await
                    }
                    _ => Err(Denied::Invalid(why)),
                }
            }
            Err(Denied::Invalid(why)) if why.starts_with(UNKNOWN_KEY) && self.may_refresh() => {
                if let Ok(set) = fetch_keys(&self.jwks_uri, self.loopback).await {
                    let mut keys = self.keys.write().unwrap_or_else(|e| e.into_inner());
                    *keys = Keys {
                        set,
                        fetched: Instant::now(),
                    };
                }
                self.check(authorization)
            }
            checked => checked,
        }
    }

    /// The principal of an opaque `token`, asked of the introspection
    /// endpoint (or the cache).
    async fn introspect(
        &self,
        introspection: &Introspection,
        token: &str,
    ) -> Result<Principal, Denied> {
        let now = unix_now();
        if let Some(principal) = self.cached(token, now) {
            return Ok(principal);
        }
        let invalid = |why: String| Denied::Invalid(why);
        let form = [("token", token), ("token_type_hint", "access_token")];
        let text = crate::jwks::request_text(&introspection.url, self.loopback, |client, url| {
            client
                .post(url)
                .basic_auth(&introspection.client_id, Some(&introspection.client_secret))
                .header(reqwest::header::ACCEPT, "application/json")
                .form(&form)
        })
        .await
        .map_err(|e| invalid(format!("the token cannot be introspected: {e}")))?;
        let answer: Value = mcp_resolve_protocol::json::from_str(&text)
            .map_err(|e| invalid(format!("the introspection answer is not JSON: {e}")))?;
        if answer.get("active") != Some(&Value::Bool(true)) {
            return Err(invalid("the token is not active (introspection)".into()));
        }
        let audience_ok = match answer.get("aud") {
            Some(Value::String(aud)) => *aud == self.audience,
            Some(Value::Array(auds)) => auds.iter().any(|a| a.as_str() == Some(&self.audience)),
            _ => false,
        };
        if !audience_ok {
            return Err(invalid("the token is for another resource (`aud`)".into()));
        }
        if let Some(iss) = answer.get("iss").and_then(Value::as_str)
            && iss != self.issuer
        {
            return Err(invalid("the token is from another issuer (`iss`)".into()));
        }
        let exp = answer.get("exp").and_then(Value::as_u64);
        if exp.is_some_and(|exp| exp.saturating_add(LEEWAY) <= now) {
            return Err(invalid("the token expired".into()));
        }
        let text_of = |key: &str| answer.get(key).and_then(Value::as_str).map(str::to_owned);
        let principal = Principal {
            sub: text_of("sub"),
            client_id: text_of("client_id"),
            scopes: text_of("scope")
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_owned)
                .collect(),
        };
        // Without `exp`, the answer is trusted for a minute.
        self.remember(token, &principal, exp.unwrap_or(now + 60));
        Ok(principal)
    }

    fn cached(&self, token: &str, now: u64) -> Option<Principal> {
        let mut cache = self.verified.lock().unwrap_or_else(|e| e.into_inner());
        match cache.get(token) {
            Some((principal, exp)) if now < exp.saturating_add(LEEWAY) => Some(principal.clone()),
            Some(_) => {
                cache.remove(token);
                None
            }
            None => None,
        }
    }

    fn remember(&self, token: &str, principal: &Principal, exp: u64) {
        let mut cache = self.verified.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= CACHED_TOKENS {
            cache.clear();
        }
        cache.insert(token.to_owned(), (principal.clone(), exp));
    }

    fn may_refresh(&self) -> bool {
        let keys = self.keys.read().unwrap_or_else(|e| e.into_inner());
        !self.jwks_uri.is_empty() && keys.fetched.elapsed() >= REFRESH_INTERVAL
    }

    /// Verifies a request's `Authorization` header value with the keys
    /// held: who the token speaks for, or why it is refused. A token
    /// verified before is taken from the cache while it has not expired.
    pub fn check(&self, authorization: Option<&str>) -> Result<Principal, Denied> {
        let Some(value) = authorization else {
            return Err(Denied::Missing);
        };
        let Some(token) = bearer(value) else {
            return Err(Denied::Invalid(
                "the Authorization header is not `Bearer TOKEN`".into(),
            ));
        };
        if let Some(principal) = self.cached(token, unix_now()) {
            return Ok(principal);
        }
        let (principal, exp) = self.verify(token)?;
        self.remember(token, &principal, exp);
        Ok(principal)
    }

    /// Verifies `token` with the keys held: who it speaks for, and its
    /// `exp`.
    fn verify(&self, token: &str) -> Result<(Principal, u64), Denied> {
        let invalid = |why: String| Denied::Invalid(why);
        let header =
            jsonwebtoken::decode_header(token).map_err(|e| invalid(format!("{NOT_A_JWT}: {e}")))?;
        let keys = self.keys.read().unwrap_or_else(|e| e.into_inner());
        let jwk = match &header.kid {
            Some(kid) => keys.set.find(kid),
            None if keys.set.keys.len() == 1 => keys.set.keys.first(),
            None => None,
        }
        .ok_or_else(|| {
            invalid(format!(
                "{UNKNOWN_KEY} (`kid` {})",
                header.kid.as_deref().unwrap_or("missing")
            ))
        })?;
        let algorithm = algorithm_of(jwk).ok_or_else(|| {
            invalid("the issuer's key is not an RSA, P-256 or Ed25519 signing key".into())
        })?;
        if header.alg != algorithm {
            return Err(invalid(format!(
                "the token is signed with {:?}, its key is for {algorithm:?}",
                header.alg
            )));
        }
        let key =
            DecodingKey::from_jwk(jwk).map_err(|e| invalid(format!("the issuer's key: {e}")))?;
        let mut validation = Validation::new(algorithm);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = LEEWAY;
        let data = jsonwebtoken::decode::<Claims>(token, &key, &validation)
            .map_err(|e| invalid(describe(&e)))?;
        let claims = data.claims;
        let exp = claims.exp;
        let mut scopes: BTreeSet<String> = claims
            .scope
            .as_deref()
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        scopes.extend(claims.scp.unwrap_or_default());
        let principal = Principal {
            sub: claims.sub,
            client_id: claims.client_id.or(claims.azp),
            scopes,
        };
        Ok((principal, exp))
    }

    /// The `WWW-Authenticate` value of a refusal.
    pub fn challenge(&self, denied: &Denied) -> String {
        let metadata = self.resource_metadata_url();
        match denied {
            Denied::Missing => match &self.first_scope {
                Some(scope) => format!(
                    r#"Bearer resource_metadata="{metadata}", scope="{}""#,
                    quoted(scope)
                ),
                None => format!(r#"Bearer resource_metadata="{metadata}""#),
            },
            Denied::Invalid(why) => format!(
                r#"Bearer error="invalid_token", error_description="{}", resource_metadata="{metadata}""#,
                quoted(why)
            ),
            Denied::InsufficientScope { granted, missing } => {
                let scope: Vec<&str> = granted
                    .iter()
                    .chain(missing.iter())
                    .map(String::as_str)
                    .collect();
                let needed: Vec<&str> = missing.iter().map(String::as_str).collect();
                format!(
                    r#"Bearer error="insufficient_scope", scope="{}", resource_metadata="{metadata}", error_description="this call needs {}""#,
                    scope.join(" "),
                    quoted(&needed.join(" "))
                )
            }
        }
    }
}

/// What the refusal of a token that is not a JWT starts with (an opaque
/// token is introspected, when the proxy may).
const NOT_A_JWT: &str = "the token is not a JWT";

/// The token of an `Authorization: Bearer TOKEN` value.
fn bearer(value: &str) -> Option<&str> {
    match value.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => Some(token.trim()),
        _ => None,
    }
}

/// Seconds since the epoch, now.
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// What an "unknown key" refusal starts with (the keys are fetched again).
const UNKNOWN_KEY: &str = "the token is signed by a key the issuer does not publish";

/// The one algorithm a JWK's type allows: RS256 for RSA, ES256 for P-256,
/// EdDSA for Ed25519; `None` for anything else (an HMAC secret among them).
fn algorithm_of(jwk: &Jwk) -> Option<Algorithm> {
    use jsonwebtoken::jwk::{EllipticCurve, KeyAlgorithm};
    let by_type = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => Algorithm::RS256,
        AlgorithmParameters::EllipticCurve(p) if p.curve == EllipticCurve::P256 => Algorithm::ES256,
        AlgorithmParameters::OctetKeyPair(p) if p.curve == EllipticCurve::Ed25519 => {
            Algorithm::EdDSA
        }
        _ => return None,
    };
    // A JWK that names another algorithm is not used for this one.
    match jwk.common.key_algorithm {
        None => Some(by_type),
        Some(KeyAlgorithm::RS256) if by_type == Algorithm::RS256 => Some(by_type),
        Some(KeyAlgorithm::ES256) if by_type == Algorithm::ES256 => Some(by_type),
        Some(KeyAlgorithm::EdDSA) if by_type == Algorithm::EdDSA => Some(by_type),
        Some(_) => None,
    }
}

/// A `jsonwebtoken` refusal in words.
fn describe(error: &jsonwebtoken::errors::Error) -> String {
    use jsonwebtoken::errors::ErrorKind;
    match error.kind() {
        ErrorKind::ExpiredSignature => "the token expired".into(),
        ErrorKind::ImmatureSignature => "the token is not valid yet (`nbf`)".into(),
        ErrorKind::InvalidAudience => "the token is for another resource (`aud`)".into(),
        ErrorKind::InvalidIssuer => "the token is from another issuer (`iss`)".into(),
        ErrorKind::InvalidSignature => "the token's signature does not verify".into(),
        ErrorKind::InvalidAlgorithm => "the token's algorithm is not its key's".into(),
        ErrorKind::MissingRequiredClaim(claim) => format!("the token has no `{claim}`"),
        _ => format!("the token is refused: {error}"),
    }
}

/// `text` for a quoted-string of a header: without quotes or backslashes.
fn quoted(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c == '"' || c == '\\' || c.is_control() {
                '\''
            } else {
                c
            }
        })
        .collect()
}

/// The issuer's metadata: RFC 8414's well-known document (the path
/// inserted after the host), then OpenID Connect's (appended, then
/// inserted).
async fn metadata(issuer: &str, loopback: bool) -> Result<Value, String> {
    let url = reqwest::Url::parse(issuer).map_err(|e| format!("not a URL: {e}"))?;
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    let candidates = [
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}{path}/.well-known/openid-configuration"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ];
    let mut last = String::new();
    for candidate in candidates {
        match crate::jwks::fetch_text(&candidate, loopback).await {
            Ok(text) => {
                return mcp_resolve_protocol::json::from_str(&text)
                    .map_err(|e| format!("`{candidate}` is not JSON metadata: {e}"));
            }
            Err(e @ crate::jwks::FetchError::Refused { .. }) => return Err(e.to_string()),
            Err(e) => last = e.to_string(),
        }
    }
    Err(format!("no metadata found ({last})"))
}

async fn fetch_keys(jwks_uri: &str, loopback: bool) -> Result<JwkSet, String> {
    let text = crate::jwks::fetch_text(jwks_uri, loopback)
        .await
        .map_err(|e| e.to_string())?;
    mcp_resolve_protocol::json::from_str(&text)
        .map_err(|e| format!("`{jwks_uri}` is not a JWKS: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwk(value: Value) -> Jwk {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn each_key_type_allows_one_algorithm_and_a_secret_none() {
        let ed = json!({"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"});
        assert_eq!(algorithm_of(&jwk(ed.clone())), Some(Algorithm::EdDSA));
        let mut named = ed.clone();
        named["alg"] = json!("EdDSA");
        assert_eq!(algorithm_of(&jwk(named)), Some(Algorithm::EdDSA));
        let mut misnamed = ed;
        misnamed["alg"] = json!("RS256");
        assert_eq!(algorithm_of(&jwk(misnamed)), None);
        let secret = json!({"kty": "oct", "k": "c2VjcmV0"});
        assert_eq!(algorithm_of(&jwk(secret)), None);
    }

    #[test]
    fn challenges_quote_safely_and_ask_for_what_is_held_and_missing() {
        assert_eq!(quoted(r#"a "b" \c"#), "a 'b' 'c");
        let auth = Authorizer::with_keys(
            "https://as.example",
            "https://files.example/mcp",
            JwkSet { keys: vec![] },
            vec![],
        );
        assert_eq!(
            auth.resource_metadata_url(),
            "https://files.example/.well-known/oauth-protected-resource/mcp"
        );
        let denied = Denied::InsufficientScope {
            granted: ["a".to_owned()].into(),
            missing: ["b".to_owned()].into(),
        };
        assert!(auth.challenge(&denied).contains(r#"scope="a b""#));
        assert_eq!(auth.check(None), Err(Denied::Missing));
        assert!(matches!(
            auth.check(Some("Basic x")),
            Err(Denied::Invalid(_))
        ));
    }
}
