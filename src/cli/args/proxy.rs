//! `proxy`'s grammar: its options as clap reads them, and their value
//! parsers.

use std::ffi::OsString;
use std::path::PathBuf;

#[cfg(feature = "proxy")]
use mcp_resolve_proxy::{guard::DEFAULT_ASK_TIMEOUT_SECS, upstream::MAX_MESSAGE_BYTES};
use mcp_resolve_runtime::Dialect;

use super::{parse_dialect, parse_duration};

// The proxy's defaults, for `--help` in a build without it (scripts/test.sh
// holds every `--help` of that build to the full one's).
#[cfg(not(feature = "proxy"))]
const MAX_MESSAGE_BYTES: usize = 64 << 20;
#[cfg(not(feature = "proxy"))]
const DEFAULT_ASK_TIMEOUT_SECS: u64 = 300;

/// `proxy`'s arguments.
#[derive(clap::Args)]
pub(crate) struct ProxyArgs {
    /// Rules files, or directories of them (one server). Without them the
    /// proxy resolves nothing and passes the server's tools through; the
    /// guard, authorization, telemetry and --listen work as with rules.
    pub(crate) paths: Vec<PathBuf>,
    /// The resolve dialect served.
    #[arg(long, default_value = "extension", value_parser = parse_dialect)]
    pub(crate) dialect: Dialect,
    /// Seconds a request may wait for the server's answer before the
    /// host gets an error (0: no limit).
    #[arg(long, default_value_t = 300, value_name = "SECONDS")]
    pub(crate) timeout: u64,
    /// The largest message read from the host or the server, in bytes.
    #[arg(long, default_value_t = MAX_MESSAGE_BYTES, value_name = "BYTES")]
    pub(crate) max_message_bytes: usize,
    /// Do not compare the rules with the server's tools/list (on stdio
    /// made on the host's first listing; with --listen, by starting the
    /// server once, briefly, before any host).
    #[arg(long)]
    pub(crate) no_probe: bool,
    /// Connect to a server over streamable HTTP at this URL instead of
    /// starting one.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub(crate) upstream: Option<String>,
    /// Serve hosts over streamable HTTP at http://ADDR/mcp instead of
    /// stdio (a port alone binds 127.0.0.1).
    #[arg(long, value_name = "ADDR", value_parser = parse_listen)]
    pub(crate) listen: Option<std::net::SocketAddr>,
    /// With --listen: a Host header value to accept besides loopback
    /// names and the bound address (NAME or NAME:PORT; repeatable).
    #[arg(long, value_name = "HOST", requires = "listen")]
    pub(crate) allow_host: Vec<String>,
    /// With --listen: a browser Origin to accept besides loopback
    /// origins (SCHEME://HOST[:PORT]; repeatable).
    #[arg(long, value_name = "ORIGIN", requires = "listen")]
    pub(crate) allow_origin: Vec<String>,
    /// With --listen: the most host sessions open at once (each has a
    /// server of its own).
    #[arg(long, default_value_t = 64, value_name = "N", requires = "listen")]
    pub(crate) max_sessions: usize,
    /// With --listen: end a session (and stop its server) after this
    /// many seconds without a request or an open stream (0: never).
    #[arg(
        long,
        default_value_t = 1800,
        value_name = "SECONDS",
        requires = "listen"
    )]
    pub(crate) session_idle: u64,
    /// Pin this signature document: its fingerprint must verify and be
    /// the rules' own; tools the server lists that it does not allow,
    /// or that change during a session, are withheld from the host.
    #[arg(long, value_name = "SIGNATURE.json")]
    pub(crate) pin: Option<PathBuf>,
    /// Pin a publisher: the --pin document must carry a signature
    /// (SIGNATURE.json.jws) from this key (a JWK or a JWKS).
    #[arg(long, value_name = "JWK", requires = "pin")]
    pub(crate) pin_key: Option<PathBuf>,
    /// With --pin-key: the document reviewed before; the --pin document
    /// may differ from it only by narrowing (as `diff` finds it).
    #[arg(long, value_name = "SIGNATURE.json", requires = "pin_key")]
    pub(crate) pin_baseline: Option<PathBuf>,
    /// Decide every tools/call by this policy (allow, deny, or ask the
    /// user) over its resolved annotations, variant, tool, scopes and
    /// arguments: Cedar (`FILE.cedar`, or a directory of `.cedar` files,
    /// validated against the rules' schema at start) or the YAML form.
    #[arg(long, value_name = "FILE")]
    pub(crate) policy: Option<PathBuf>,
    /// The Cedar principal of calls without a bearer token
    /// (`User::"alice"`); `Anonymous::"anonymous"` when not given.
    #[arg(long, value_name = "TYPE::\"ID\"", requires = "policy")]
    pub(crate) principal: Option<String>,
    /// How long a call the policy asks about waits for the user's
    /// answer before it is refused.
    #[arg(
        long,
        default_value_t = DEFAULT_ASK_TIMEOUT_SECS,
        value_name = "SECONDS",
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub(crate) ask_timeout: u64,
    /// Write one JSON line per tools/call and per resolution to FILE
    /// (appended; `-` for stderr).
    #[arg(long, value_name = "FILE")]
    pub(crate) audit: Option<PathBuf>,
    /// With --audit: include the calls' arguments.
    #[arg(long, requires = "audit")]
    pub(crate) audit_arguments: bool,
    /// Export every audit record to this OpenTelemetry collector (OTLP over
    /// HTTP/protobuf, a base URL such as `http://127.0.0.1:4318`), as a log
    /// record and metrics; `OTEL_EXPORTER_OTLP_ENDPOINT` does the same.
    #[arg(long, value_name = "ENDPOINT")]
    pub(crate) otlp: Option<String>,
    /// Seal 2026-07-28 questions' request states with this key (from
    /// `keygen --state`), so that any instance with the same key checks the
    /// host's retry. Repeat to rotate: the first seals, every one opens.
    /// Without it, a random key of this process's (one instance only).
    #[arg(long, value_name = "FILE")]
    pub(crate) state_key_file: Vec<PathBuf>,
    /// Share with the other instances, in this Redis (`redis://HOST:PORT`,
    /// `redis+unix:///PATH`), which request states were used: a retry
    /// replayed to another instance is refused there too. Asks fail closed
    /// while it does not answer; everything else goes on.
    #[arg(long, value_name = "URL", requires = "state_key_file")]
    pub(crate) redis: Option<String>,
    /// Sign the declarations listed to hosts (SEP-3140) with this key
    /// (PKCS#8 PEM, from `keygen`): `declarations` capability, `trust`,
    /// `version` and `contentHash` on each tool, `declarations/manifest`,
    /// and `changed` in `notifications/tools/list_changed`.
    #[arg(long, value_name = "KEY.pem", requires = "server_uri")]
    pub(crate) sign_key: Option<PathBuf>,
    /// With --sign-key: the server's canonical URI (RFC 8707) as hosts
    /// know it, the manifests' audience.
    #[arg(long, value_name = "URI", requires = "sign_key", value_parser = parse_server_uri)]
    pub(crate) server_uri: Option<String>,
    /// With --sign-key: the publisher document's URL (`mcp_publisher`).
    #[arg(long, value_name = "URL", requires = "sign_key")]
    pub(crate) publisher: Option<String>,
    /// With --sign-key: how long each signed manifest is valid (a
    /// number and `s`, `m`, `h` or `d`); it is signed again after half.
    #[arg(long, value_name = "DURATION", default_value = "1d", value_parser = parse_duration, requires = "sign_key")]
    pub(crate) manifest_expires: u64,
    /// With --upstream: a header sent with every request to the server,
    /// `'Name: value'`, its value from the environment (`${NAME}`) or a
    /// file (`@PATH`), never written on the command line: the proxy's own
    /// credential (a host's token is never passed on). Repeatable.
    #[arg(long, value_name = "HEADER", requires = "upstream")]
    pub(crate) upstream_header: Vec<String>,
    /// With --listen: be an OAuth resource server for the authorization
    /// server at URL: every request needs a bearer token it issued for
    /// --audience, and each call the scopes its resolved variant needs
    /// (`403 insufficient_scope` to step up).
    #[arg(long, value_name = "URL", requires = "listen")]
    pub(crate) auth_issuer: Option<String>,
    /// With --auth-issuer: the scopes a host without a token is told to
    /// ask for first (space-separated; default: none named, and a client
    /// asks for every scope the metadata lists). Calls step up from there.
    #[arg(long, value_name = "SCOPES", requires = "auth_issuer")]
    pub(crate) auth_scope: Option<String>,
    /// With --auth-issuer: introspect tokens that are not JWTs at URL (RFC
    /// 7662), as the client --auth-client-id with --auth-client-secret.
    #[arg(long, value_name = "URL", requires_all = ["auth_issuer", "auth_client_id", "auth_client_secret"])]
    pub(crate) auth_introspect: Option<String>,
    /// With --auth-introspect: the proxy's client id at the authorization
    /// server.
    #[arg(long, value_name = "ID", requires = "auth_introspect")]
    pub(crate) auth_client_id: Option<String>,
    /// With --auth-introspect: its secret, from the environment
    /// (`${NAME}`) or a file (`@PATH`), never written on the command line.
    #[arg(long, value_name = "SECRET", requires = "auth_introspect")]
    pub(crate) auth_client_secret: Option<String>,
    /// With --auth-issuer: tools/list shows each token only the tools it can
    /// call at least one variant of.
    #[arg(long, requires = "auth_issuer")]
    pub(crate) list_by_scope: bool,
    /// With --auth-issuer: the canonical URI hosts reach this proxy at
    /// (RFC 8707), the tokens' audience (default: --server-uri).
    #[arg(long, value_name = "URI", requires = "auth_issuer", value_parser = parse_server_uri)]
    pub(crate) audience: Option<String>,
    /// With --sign-key: how the JWS header names the algorithm (for
    /// Ed25519, `EdDSA` as SEP-3140's examples write it, or `Ed25519`);
    /// the JWKS served names it the same way.
    #[arg(long, value_name = "NAME", requires = "sign_key")]
    pub(crate) jws_alg: Option<String>,
    /// Verify the server's signed declarations (SEP-3140) and withhold
    /// what fails: `pinned:KEY.jwk` (only these keys), `allow:PUBLISHER`
    /// (manifests naming this publisher, keys from --trust-jwks), or
    /// `tofu:STORE` (the first key seen, remembered in STORE; keys from
    /// --trust-jwks).
    #[arg(long, value_name = "POLICY", value_parser = parse_trust)]
    pub(crate) trust: Option<TrustPolicy>,
    /// With --trust allow: or tofu:: the publisher's keys (a JWK or a
    /// JWKS file, or an `https` URL of one; repeatable). Without it, they
    /// are discovered through the Protected Resource Metadata of the
    /// --trust-audience (`mcp_signing_jwks_uri`).
    #[arg(long, value_name = "JWKS", requires = "trust")]
    pub(crate) trust_jwks: Vec<PathBuf>,
    /// Let a JWKS URL (or the metadata discovered) be on a loopback
    /// address, and plain `http` there: for tests and local development.
    #[arg(long, requires = "trust")]
    pub(crate) allow_loopback_jwks: bool,
    /// With --trust: the server's canonical URI (RFC 8707) its manifests
    /// must be issued for (default: the --upstream URL).
    #[arg(long, value_name = "URI", requires = "trust", value_parser = parse_server_uri)]
    pub(crate) trust_audience: Option<String>,
    /// The server to start.
    #[arg(last = true, value_name = "COMMAND")]
    pub(crate) command: Vec<OsString>,
}
/// `--listen`'s address: `HOST:PORT`, or a port alone (loopback).
pub(crate) fn parse_listen(s: &str) -> Result<std::net::SocketAddr, String> {
    if let Ok(port) = s.parse::<u16>() {
        return Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    }
    s.parse().map_err(|_| {
        format!("`{s}` is not an address: give IP:PORT (127.0.0.1:8080, [::1]:8080) or a port")
    })
}

/// A server's canonical URI (RFC 8707), checked.
#[cfg(feature = "proxy")]
pub(crate) fn parse_server_uri(s: &str) -> Result<String, String> {
    mcp_resolve_proxy::declare::server_uri(s).map_err(|e| e.to_string())
}

/// A build without the proxy takes the URI as given (`proxy`, the one
/// command that reads it, then says it is not in the build).
#[cfg(not(feature = "proxy"))]
pub(crate) fn parse_server_uri(s: &str) -> Result<String, String> {
    Ok(s.to_string())
}

/// A `--trust` policy as written.
#[derive(Clone, Debug)]
#[cfg_attr(not(feature = "proxy"), allow(dead_code))]
pub(crate) enum TrustPolicy {
    /// `pinned:KEY.jwk`.
    Pinned(PathBuf),
    /// `allow:PUBLISHER`.
    Allow(String),
    /// `tofu:STORE`.
    Tofu(PathBuf),
}

pub(crate) fn parse_trust(s: &str) -> Result<TrustPolicy, String> {
    match s.split_once(':') {
        Some(("pinned", path)) if !path.is_empty() => Ok(TrustPolicy::Pinned(path.into())),
        Some(("allow", publisher)) if !publisher.is_empty() => {
            Ok(TrustPolicy::Allow(publisher.into()))
        }
        Some(("tofu", path)) if !path.is_empty() => Ok(TrustPolicy::Tofu(path.into())),
        _ => Err("a trust policy is `pinned:KEY.jwk`, `allow:PUBLISHER` or `tofu:STORE`".into()),
    }
}
