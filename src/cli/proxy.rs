//! `proxy`: `tools/resolve` from rules, in front of any MCP server.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use mcp_resolve_host::Signature;
use mcp_resolve_proxy::auth::{Authorizer, Introspection};
use mcp_resolve_proxy::declare::Declarer;
use mcp_resolve_proxy::guard::{Audit, Guard, Sinks};
use mcp_resolve_proxy::listen::{ListenOptions, serve};
use mcp_resolve_proxy::pin::{self, PinError, PinSource};
use mcp_resolve_proxy::trust::{Policy as TrustPolicyKind, Verifier};
use mcp_resolve_proxy::upstream::{UpstreamError, UpstreamHeaders, interrupted, until_interrupted};
use mcp_resolve_proxy::{
    Ended, Options, ProxyRules, Upstream, check_pin, compare, host_stdio, probe, run,
};

use super::args::TrustPolicy;
use super::{FAILURE, OK, USAGE, with_server};

/// The command line's choices, as clap parsed them (one type: an option
/// is added to [`super::args::ProxyArgs`] and read here).
pub(crate) type Args = super::args::ProxyArgs;

impl Args {
    /// Whether to probe the server at start (`--no-probe` not given).
    fn probe(&self) -> bool {
        !self.no_probe
    }

    /// The largest message read, at least 1 KiB.
    fn message_limit(&self) -> usize {
        self.max_message_bytes.max(1024)
    }

    /// `--listen` and the options that go with it.
    fn listen_options(&self) -> Option<ListenOptions> {
        self.listen.map(|addr| ListenOptions {
            addr,
            allowed_hosts: self.allow_host.clone(),
            allowed_origins: self.allow_origin.clone(),
            max_sessions: self.max_sessions.max(1),
            session_idle: (self.session_idle > 0).then(|| Duration::from_secs(self.session_idle)),
            auth: None,
        })
    }
}

/// Reads the pinned signature ([`mcp_resolve_proxy::pin::load`]), saying
/// on stderr what was found on the way.
fn load_pin(
    path: &Path,
    key: Option<&Path>,
    baseline: Option<&Path>,
    server: &mcp_resolve::ir::Server,
) -> Result<Signature, u8> {
    let keys = match key {
        Some(key) => Some(super::keys::public_keys(&[key])?),
        None => None,
    };
    let source = PinSource {
        document: path,
        keys: keys.as_deref(),
        baseline,
        max_bytes: super::document_limit(),
    };
    match pin::load(&source, server) {
        Ok(pin) => {
            for note in pin.notes {
                eprintln!("mcp-resolve proxy: {note}");
            }
            Ok(pin.signature)
        }
        Err(e) => {
            if let PinError::Widens { report, .. } = &e {
                eprint!("{report}");
            }
            eprintln!("error: {e}");
            Err(USAGE)
        }
    }
}

/// `mcp-resolve proxy`: its exit code.
pub(crate) fn main(args: Args) -> u8 {
    let upstream = match (args.upstream.clone(), args.command.is_empty()) {
        (Some(url), true) => {
            let env = |name: &str| std::env::var(name).ok();
            match UpstreamHeaders::parse(&args.upstream_header, &env) {
                Ok(headers) => Upstream::Url(url, headers),
                Err(why) => {
                    eprintln!("error: --upstream-header {why}");
                    return USAGE;
                }
            }
        }
        (None, false) => Upstream::Command(args.command.clone()),
        _ => {
            eprintln!(
                "error: give the server's command after `--` (mcp-resolve proxy [RULES] -- COMMAND ARGS…) or its URL (--upstream URL)"
            );
            return USAGE;
        }
    };
    // Without rules, the proxy guards, authorizes, traces and balances a
    // server nobody wrote rules for, and resolves nothing.
    if args.paths.is_empty() {
        return match ProxyRules::none(args.dialect) {
            Ok(rules) => {
                let server = rules.server().clone();
                serve_with(&args, upstream, &server, rules)
            }
            Err(e) => {
                eprintln!("error: {e}");
                FAILURE
            }
        };
    }
    // Rules are loaded and checked before the server starts: a rules error
    // stops here, with the usual diagnostics and exit code.
    with_server(&args.paths, |_, server| {
        match ProxyRules::new(server.clone(), args.dialect) {
            Ok(rules) => serve_with(&args, upstream, server, rules),
            Err(e) => {
                eprintln!("error: {e}");
                FAILURE
            }
        }
    })
}

/// The proxy with its rules (or none) read: the guard, the listener and
/// the sessions, until it ends.
fn serve_with(
    args: &Args,
    upstream: Upstream,
    server: &mcp_resolve::ir::Server,
    rules: ProxyRules,
) -> u8 {
    if !rules.given()
        && let Some(why) = needs_rules(args)
    {
        eprintln!("error: {why}");
        return USAGE;
    }
    let (mut guard, sinks) = match guard(args, server) {
        Ok(guard) => guard,
        Err(code) => return code,
    };
    if !rules.given()
        && let Some(policy) = &guard.policy
        && let naming @ [_, ..] = policy.naming_variants().as_slice()
    {
        eprintln!(
            "error: the policy {} reads a call's variant (`{}`), and no rules were given to resolve one: name the rules file (mcp-resolve proxy RULES --policy … -- SERVER), or write the rule on hints and tools only",
            args.policy
                .as_deref()
                .map(Path::display)
                .map(|p| format!("`{p}`"))
                .unwrap_or_default(),
            naming.join("`, `")
        );
        return USAGE;
    }
    guard.declare = match declarer(args, &rules) {
        Ok(declarer) => declarer,
        Err(code) => return code,
    };
    let shared = match args
        .redis
        .as_deref()
        .map(mcp_resolve_proxy::shared::Shared::open)
    {
        None => None,
        Some(Ok(shared)) => Some(Arc::new(shared)),
        Some(Err(e)) => {
            eprintln!("error: {e}");
            return USAGE;
        }
    };
    let options = Options {
        shared,
        timeout: (args.timeout > 0).then(|| Duration::from_secs(args.timeout)),
        max_message_bytes: args.message_limit(),
        guard: Arc::new(guard),
        sinks: Arc::new(sinks),
        // On stdio the rules are compared with the host's own first
        // listing: the server is started once.
        compare_listing: args.probe() && args.listen.is_none() && rules.given(),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return FAILURE;
        }
    };
    let auth = match auth_settings(args, server) {
        Ok(auth) => auth,
        Err(code) => return code,
    };
    let listen = args.listen_options().map(|listen| Listen {
        options: listen,
        auth,
    });
    let sinks = options.sinks.clone();
    let code = exit_code(runtime.block_on(proxy(
        rules,
        options,
        upstream.clone(),
        args.probe(),
        listen,
    )));
    // A session step still running on the blocking pool (an interrupt
    // while it waits to write to a host that does not read) is left
    // behind, not waited for. What telemetry still holds is sent now,
    // for a bounded time: a collector that is down costs the exit
    // that, never a host.
    runtime.shutdown_timeout(Duration::from_secs(1));
    if let Some(telemetry) = &sinks.telemetry {
        for failed in telemetry.shutdown() {
            eprintln!("mcp-resolve proxy: OpenTelemetry: cannot send {failed}");
        }
    }
    code
}

/// SEP-3140: what signs the declarations the proxy lists (`--sign-key`
/// with `--server-uri`), if the options ask for it.
fn declarer(args: &Args, rules: &ProxyRules) -> Result<Option<Declarer>, u8> {
    let (Some(key), Some(uri)) = (&args.sign_key, &args.server_uri) else {
        return Ok(None);
    };
    let key = super::keys::private_keys(std::slice::from_ref(key))?.remove(0);
    let declarer = Declarer::new(
        key,
        uri.clone(),
        args.publisher.clone(),
        args.manifest_expires,
        rules,
    );
    match args.jws_alg.as_deref() {
        None => Ok(Some(declarer)),
        Some(alg) => declarer.naming(alg).map(Some).map_err(|e| {
            eprintln!("error: --jws-alg: {e}");
            USAGE
        }),
    }
}

/// Why the options cannot be served without rules, if they cannot: what
/// needs the rules' variants or tools says so, with the fix.
fn needs_rules(args: &Args) -> Option<String> {
    if args.sign_key.is_some() {
        return Some(
            "--sign-key declares the tools the rules describe, and no rules were given: name the rules file (mcp-resolve proxy RULES --sign-key … -- SERVER)".into(),
        );
    }
    None
}

/// The guard of `tools/call` the options ask for (pin, policy, trust), and
/// where its records go (audit log, telemetry).
fn guard(args: &Args, server: &mcp_resolve::ir::Server) -> Result<(Guard, Sinks), u8> {
    let pin = match args.pin.as_deref() {
        Some(p) => Some(load_pin(
            p,
            args.pin_key.as_deref(),
            args.pin_baseline.as_deref(),
            server,
        )?),
        None => None,
    };
    let policy = match args.policy.as_deref() {
        Some(p) => match super::policy::load_engine(p, server, args.principal.as_deref()) {
            Ok(engine) => Some(engine),
            Err(code) => {
                if args.paths.is_empty() {
                    eprintln!(
                        "help: no rules were given, so the policy's schema has no tool of its own: a Cedar policy names `Mcp::Action::\"call_tool\"` and reads the hints, or the rules file is named (mcp-resolve proxy RULES --policy … -- SERVER)"
                    );
                }
                return Err(code);
            }
        },
        None => None,
    };
    let audit = match args.audit.as_deref().map(Audit::open) {
        Some(Err(e)) => {
            eprintln!("error: cannot open the audit log: {e}");
            return Err(USAGE);
        }
        Some(Ok(audit)) => Some(audit),
        None => None,
    };
    let sinks = Sinks {
        audit,
        telemetry: match mcp_resolve_telemetry::Telemetry::from_env(args.otlp.as_deref(), say) {
            Ok(telemetry) => telemetry,
            Err(e) => {
                eprintln!("error: {e}");
                return Err(USAGE);
            }
        },
    };
    let guard = Guard {
        policy,
        ask_timeout: Duration::from_secs(args.ask_timeout),
        audit_arguments: args.audit_arguments,
        state: if args.state_key_file.is_empty() {
            mcp_resolve_proxy::state::random_keys()
        } else {
            match mcp_resolve_proxy::state::keys_from_files(&args.state_key_file) {
                Ok(keys) => keys,
                Err(e) => {
                    eprintln!("error: {e}");
                    return Err(USAGE);
                }
            }
        },
        spent: mcp_resolve_proxy::state::Spent::default(),
        pin,
        declare: None,
        verify: verifier(args)?,
    };
    Ok((guard, sinks))
}

/// Says what telemetry cannot export, on stderr.
fn say(message: &str) {
    eprintln!("mcp-resolve proxy: {message}");
}

/// Where and how the proxy listens.
struct Listen {
    options: ListenOptions,
    auth: Option<AuthSettings>,
}

/// What `--auth-issuer` asks for.
struct AuthSettings {
    issuer: String,
    /// `None`: the URL the proxy listens at.
    audience: Option<String>,
    first_scope: Option<String>,
    by_scope: bool,
    introspection: Option<Introspection>,
    /// Every scope the rules name.
    scopes: Vec<String>,
}

fn auth_settings(
    args: &Args,
    server: &mcp_resolve::ir::Server,
) -> Result<Option<AuthSettings>, u8> {
    let Some(issuer) = args.auth_issuer.clone() else {
        return Ok(None);
    };
    let introspection = match (
        &args.auth_introspect,
        &args.auth_client_id,
        &args.auth_client_secret,
    ) {
        (Some(url), Some(client_id), Some(secret)) => {
            let env = |name: &str| std::env::var(name).ok();
            let client_secret =
                mcp_resolve_proxy::upstream::expand_secret(secret, &env).map_err(|why| {
                    eprintln!("error: --auth-client-secret: {why}");
                    USAGE
                })?;
            Some(Introspection {
                url: url.clone(),
                client_id: client_id.clone(),
                client_secret,
            })
        }
        _ => None,
    };
    Ok(settings(args, server, issuer, introspection))
}

fn settings(
    args: &Args,
    server: &mcp_resolve::ir::Server,
    issuer: String,
    introspection: Option<Introspection>,
) -> Option<AuthSettings> {
    let scopes: std::collections::BTreeSet<String> = server
        .tools
        .iter()
        .flat_map(|tool| tool.required_scopes.iter().cloned())
        .collect();
    Some(AuthSettings {
        issuer,
        introspection,
        audience: args.audience.clone().or_else(|| args.server_uri.clone()),
        first_scope: args.auth_scope.clone(),
        by_scope: args.list_by_scope,
        scopes: scopes.into_iter().collect(),
    })
}

/// The resource server `settings` ask for, for a proxy listening at
/// `bound`: the issuer's metadata and keys fetched now.
async fn authorizer(
    settings: AuthSettings,
    bound: std::net::SocketAddr,
) -> Result<Authorizer, UpstreamError> {
    let audience = settings
        .audience
        .unwrap_or_else(|| format!("http://{bound}/mcp"));
    let auth = Authorizer::discover(&settings.issuer, &audience, settings.scopes)
        .await
        .map_err(|e| UpstreamError::Protocol(e.to_string()))?;
    let auth = match &settings.first_scope {
        Some(scope) => auth.asking_first(scope),
        None => auth,
    };
    let auth = match settings.introspection {
        Some(introspection) => auth.introspecting(introspection),
        None => auth,
    };
    Ok(if settings.by_scope {
        auth.listing_by_scope()
    } else {
        auth
    })
}

/// The verifier of the server's signed declarations `--trust` asks for.
fn verifier(args: &Args) -> Result<Option<Verifier>, u8> {
    let Some(trust) = &args.trust else {
        return Ok(None);
    };
    let Some(audience) = args
        .trust_audience
        .clone()
        .or_else(|| args.upstream.clone())
    else {
        eprintln!(
            "error: --trust needs the server's canonical URI its manifests are issued for: --trust-audience URI (or --upstream URL)"
        );
        return Err(USAGE);
    };
    let (policy, keys) = match trust {
        TrustPolicy::Pinned(path) => (TrustPolicyKind::Pinned, super::keys::public_keys(&[path])?),
        TrustPolicy::Allow(publisher) => (
            TrustPolicyKind::Allow(publisher.clone()),
            super::keys::discovered_or(&args.trust_jwks, &audience, args.allow_loopback_jwks)?,
        ),
        TrustPolicy::Tofu(store) => (
            TrustPolicyKind::Tofu(store.clone()),
            super::keys::discovered_or(&args.trust_jwks, &audience, args.allow_loopback_jwks)?,
        ),
    };
    if keys.is_empty() {
        eprintln!("error: --trust found no keys to verify with");
        return Err(USAGE);
    }
    mcp_resolve_proxy::trust::open(policy, keys, audience)
        .map(Some)
        .map_err(|e| {
            eprintln!("error: {e}");
            USAGE
        })
}

/// The proxy itself, until the host or the server ends it (on stdio) or
/// it is interrupted (over HTTP); `probe`: with `--listen`, list the
/// server's tools before any host comes and compare them with the rules.
async fn proxy(
    rules: ProxyRules,
    options: Options,
    upstream: Upstream,
    probe: bool,
    listen: Option<Listen>,
) -> Result<Ended, UpstreamError> {
    if probe && listen.is_some() && (rules.given() || options.guard.pin.is_some()) {
        // Before any host: each session starts a server of its own.
        let startup = options.timeout.unwrap_or(Duration::from_secs(60));
        let listed = until_interrupted(self::probe(&upstream, startup)).await?;
        if rules.given() {
            for note in compare(&rules, &listed) {
                eprintln!("mcp-resolve proxy: {note}");
            }
        }
        check_pin(&rules, &options.guard, &listed);
    }
    let Some(Listen {
        options: mut listen,
        auth,
    }) = listen
    else {
        return until_interrupted(stdio(rules, options, &upstream)).await;
    };
    let listener = tokio::net::TcpListener::bind(listen.addr)
        .await
        .map_err(|source| UpstreamError::Io {
            context: format!("cannot listen on {}", listen.addr),
            source,
        })?;
    let bound = listener.local_addr().unwrap_or(listen.addr);
    if let Some(settings) = auth {
        listen.auth = Some(Arc::new(authorizer(settings, bound).await?));
    }
    eprintln!(
        "mcp-resolve proxy: serving http://{bound}/mcp for the server {}",
        upstream.describe()
    );
    serve(
        Arc::new(rules),
        options,
        upstream,
        listen,
        listener,
        interrupted(),
    )
    .await?;
    eprintln!("mcp-resolve proxy: stopped; every session's server was stopped");
    Ok(Ended::HostClosed)
}

/// The host on stdio. A server started as a child, with nothing shared
/// between proxies, runs on a thread a direction ([`run_stdio`]); the rules
/// and options then live as long as the process, as the threads may.
async fn stdio(
    rules: ProxyRules,
    options: Options,
    upstream: &Upstream,
) -> Result<Ended, UpstreamError> {
    #[cfg(unix)]
    if let (Upstream::Command(command), None) = (upstream, &options.shared) {
        let rules: &'static ProxyRules = Box::leak(Box::new(rules));
        let options: &'static Options = Box::leak(Box::new(options));
        return mcp_resolve_proxy::run_stdio(rules, options, command).await;
    }
    let (host_in, host_out) = host_stdio();
    run(&rules, &options, upstream, host_in, host_out).await
}

/// The exit code for how the proxy ended, with what it says on stderr.
fn exit_code(outcome: Result<Ended, UpstreamError>) -> u8 {
    match outcome {
        Ok(Ended::HostClosed) => OK,
        Ok(Ended::ServerExited(why)) => {
            // The server's last lines on stderr (if any) below.
            let (first, rest) = match why.split_once('\n') {
                Some((first, rest)) => (first, format!("\n{rest}")),
                None => (why.as_str(), String::new()),
            };
            eprintln!("error: {first}; the proxy stops{rest}");
            FAILURE
        }
        Err(UpstreamError::Interrupted) => {
            eprintln!("mcp-resolve proxy: interrupted; the server was stopped");
            FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            FAILURE
        }
    }
}
