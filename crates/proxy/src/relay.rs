//! The relay of one host on stdio to one server: the session loop that the
//! stdio transport and each HTTP session run (see the crate documentation).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncWrite;

use crate::guard::{Guard, Sinks};
pub use crate::link::Upstream;
use crate::link::{GRACE, Link, Source, write_line};
use crate::log;
pub use crate::rules::{ProxyRules, Rewrite};
pub use crate::session::Ended;
use crate::session::{Config, Effect, Input, Session};
use crate::upstream::UpstreamError;
use mcp_resolve_protocol::id_key;

/// The proxy's settings.
#[derive(Clone, Debug)]
pub struct Options {
    /// How long a forwarded request may wait for the server's answer;
    /// `None`: forever.
    pub timeout: Option<Duration>,
    /// The largest message read from either side.
    pub max_message_bytes: usize,
    /// Argument checks, policy, pin and declarations of `tools/call` and
    /// `tools/list`.
    pub guard: Arc<Guard>,
    /// Where audit records, spans and measures go (the audit log,
    /// telemetry).
    pub sinks: Arc<Sinks>,
    /// Compare the rules with the server's first `tools/list` answer in the
    /// session, and say on stderr where they disagree (the start-up check
    /// done on the host's own session: the server is started once).
    pub compare_listing: bool,
    /// What several instances share (`--redis`): request states used.
    pub shared: Option<Arc<crate::shared::Shared>>,
}

/// Where the proxy's messages for the host go: a line each.
pub(crate) trait HostSink {
    /// Delivers one message; an error ends the session.
    async fn deliver(&mut self, line: String) -> std::io::Result<()>;

    /// Delivers the server's answer to a host's request, routed by the
    /// proxy's id it names ([`HostSide::routes_answers`]).
    async fn deliver_answer(&mut self, answer: crate::session::Answer) -> std::io::Result<()> {
        self.deliver(answer.text).await
    }

    /// Delivers a server's progress notification, routed by the proxy's id
    /// of the request that asked for it ([`HostSide::routes_answers`]).
    async fn deliver_progress(&mut self, progress: crate::session::Answer) -> std::io::Result<()> {
        self.deliver(progress.text).await
    }

    /// The messages delivered from now on were made of a server message
    /// that came on the answer to the request with the proxy's id
    /// `request` (the key of it); `None`: of nothing known to be related.
    /// A host on one stream has nothing to do with it.
    fn relate(&mut self, _request: Option<String>) {}
}

/// A host on a byte stream (stdio): a message a line.
struct Lines<W>(W);

impl<W: AsyncWrite + Unpin> HostSink for Lines<W> {
    async fn deliver(&mut self, line: String) -> std::io::Result<()> {
        write_line(&mut self.0, line).await
    }
}

/// The boxed halves of a host's byte stream.
pub type HostIo = (
    Box<dyn tokio::io::AsyncRead + Send + Unpin>,
    Box<dyn AsyncWrite + Send + Unpin>,
);

/// The proxy's stdin and stdout. A pipe or a socket (what hosts give the
/// servers they start) is read and written without blocking, straight from
/// the event loop; anything else (a file, a terminal) goes through tokio's
/// blocking pool, which costs a thread hand-off per message.
pub fn host_stdio() -> HostIo {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let input = std::io::stdin().as_fd().try_clone_to_owned().ok().and_then(
            |fd| -> Option<Box<dyn tokio::io::AsyncRead + Send + Unpin>> {
                match tokio::net::unix::pipe::Receiver::from_owned_fd(fd.try_clone().ok()?) {
                    Ok(pipe) => Some(Box::new(pipe)),
                    Err(_) => Some(Box::new(socket(fd)?)),
                }
            },
        );
        let output = std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .and_then(|fd| -> Option<Box<dyn AsyncWrite + Send + Unpin>> {
                match tokio::net::unix::pipe::Sender::from_owned_fd(fd.try_clone().ok()?) {
                    Ok(pipe) => Some(Box::new(pipe)),
                    Err(_) => Some(Box::new(socket(fd)?)),
                }
            });
        (
            input.unwrap_or_else(|| Box::new(tokio::io::stdin())),
            output.unwrap_or_else(|| Box::new(tokio::io::stdout())),
        )
    }
    #[cfg(not(unix))]
    {
        (Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout()))
    }
}

/// `fd` as a non-blocking tokio socket, when it is a Unix socket.
#[cfg(unix)]
fn socket(fd: std::os::fd::OwnedFd) -> Option<tokio::net::UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(fd);
    // Only a socket has a socket type; a file or a terminal fails here.
    stream.local_addr().ok()?;
    stream.set_nonblocking(true).ok()?;
    tokio::net::UnixStream::from_std(stream).ok()
}

/// One proxy session between a host on a byte stream (`host_in`,
/// `host_out`: stdio) and the server, until either side ends.
pub async fn run<R, W>(
    rules: &ProxyRules,
    options: &Options,
    upstream: &Upstream,
    host_in: R,
    host_out: W,
) -> Result<Ended, UpstreamError>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin,
{
    let link = Link::open(upstream, options.max_message_bytes, false, None)?;
    let from_host = Source::lines(Box::new(host_in), options.max_message_bytes);
    relay(
        rules,
        options,
        link,
        from_host,
        &mut Lines(host_out),
        HostSide::stream(),
    )
    .await
}

/// The session itself: messages from the host (`from_host`) to the server
/// (`link`) and back, through a [`Session`] that decides what becomes of
/// each. This function only moves lines, keeps time and applies the
/// session's effects.
pub(crate) async fn relay<S: HostSink>(
    rules: &ProxyRules,
    options: &Options,
    mut link: Link,
    mut from_host: Source,
    host: &mut S,
    side: HostSide,
) -> Result<Ended, UpstreamError> {
    let guard: &Guard = &options.guard;
    let mut driver = Driver {
        session: Session::new(rules, guard, session_config(options, side)),
        keeper: Keeper::of(options),
        effects: Vec::new(),
    };
    // One timer for the session, armed at the earliest deadline and moved
    // only to an earlier one: a deadline that passes with nothing due (its
    // request answered meanwhile) costs one tick, not a timer per message.
    let timer = tokio::time::sleep_until(far_future());
    tokio::pin!(timer);
    let mut armed: Option<std::time::Instant> = None;
    let ended = loop {
        if let Some(deadline) = driver.session.next_deadline()
            && armed.is_none_or(|at| deadline < at)
        {
            timer
                .as_mut()
                .reset(tokio::time::Instant::from_std(deadline));
            armed = Some(deadline);
        }
        tokio::select! {
            input = from_host.recv() => {
                let input = input.unwrap_or_else(|| Input::Ended(String::new()));
                if let Some(shared) = &options.shared {
                    claim(&mut driver.session, shared, guard, &input).await;
                }
                driver.session.from_host(input, crate::machine::clock(), &mut driver.effects);
            }
            input = link.from.recv() => {
                let input = match input {
                    Some(Input::Related(text, request)) => {
                        host.relate(Some(id_key(&request)));
                        Input::Line(text)
                    }
                    Some(input) => input,
                    None => Input::Ended(link.ended().await),
                };
                if let (Some(shared), Input::Line(text)) = (&options.shared, &input)
                    && driver.session.wants_baselines(text)
                {
                    let tools = listed_tools(text);
                    let baselines = shared.baselines(&rules.server().name, &tools).await;
                    if let Err(why) = &baselines {
                        log(&format!("{why}; the pin withholds the tools it lists"));
                    }
                    driver.session.shared_baselines(baselines);
                }
                driver.session.from_server(input, crate::machine::clock(), &mut driver.effects);
            }
            () = &mut timer, if armed.is_some() => {
                armed = None;
                driver.session.tick(crate::machine::clock(), &mut driver.effects);
            }
        }
        let ended = driver.session.ended().cloned();
        // After the end, the host may be gone: what cannot be delivered
        // no longer ends anything.
        driver.apply(host, &mut link, ended.is_none()).await?;
        host.relate(None);
        if let Some(ended) = ended {
            break ended;
        }
    };
    link.close().await?;
    Ok(ended)
}

/// A session's settings from the proxy's and its host side's.
pub(crate) fn session_config(options: &Options, side: HostSide) -> Config {
    Config {
        timeout: options.timeout,
        max_message_bytes: options.max_message_bytes,
        per_message: side.per_message,
        routes_answers: side.routes_answers,
        lists_by_scope: side.lists_by_scope,
        compare_listing: options.compare_listing,
        ids: crate::machine::random_ids(),
        span_attributes: side.span_attributes,
        shared: options.shared.is_some(),
        records: options.sinks.records(),
        traces: options.sinks.telemetry.is_some(),
    }
}

/// Claims in the shared store the request state a host's retry carries,
/// and tells the session what the store said (`--redis`).
async fn claim(
    session: &mut Session<'_>,
    shared: &crate::shared::Shared,
    guard: &Guard,
    input: &Input,
) {
    let text = match input {
        Input::Line(text) => text,
        Input::Read(read, _) => &read.text,
        _ => return,
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let Some((id, expires)) = crate::state::retry_state(&guard.state, text, now) else {
        return;
    };
    let verdict = shared
        .claim(&id, Duration::from_secs(expires.saturating_sub(now)))
        .await;
    if let crate::shared::Claim::Unavailable(why) = &verdict {
        log(&format!(
            "the shared store ({}) did not answer: {why}; the retry is refused",
            shared.shown()
        ));
    }
    session.claimed(id, verdict);
}

/// The tools of a `tools/list` answer (name, the tool as listed).
fn listed_tools(text: &str) -> Vec<(String, Value)> {
    mcp_resolve_protocol::json::from_str::<Value>(text)
        .ok()
        .and_then(|answer| answer.pointer("/result/tools").cloned())
        .and_then(|tools| match tools {
            Value::Array(tools) => Some(tools),
            _ => None,
        })
        .unwrap_or_default()
        .into_iter()
        .filter_map(|tool| Some((tool.get("name")?.as_str()?.to_string(), tool)))
        .collect()
}

/// What a relay's host side is.
pub(crate) struct HostSide {
    /// The host's messages each arrive on their own (HTTP requests that
    /// name no session), not on one stream.
    pub(crate) per_message: bool,
    /// What every span of the session says of its transport.
    pub(crate) span_attributes: Vec<(&'static str, serde_json::Value)>,
    /// The host side routes answers by the proxy's id (`--listen`):
    /// [`HostSink::deliver_answer`].
    pub(crate) routes_answers: bool,
    /// A `tools/list` answer lists only the tools the request's token can
    /// call (`--list-by-scope`).
    pub(crate) lists_by_scope: bool,
}

impl HostSide {
    /// A host on one byte stream (stdio).
    pub(crate) fn stream() -> HostSide {
        HostSide {
            per_message: false,
            span_attributes: vec![("network.transport", "pipe".into())],
            routes_answers: false,
            lists_by_scope: false,
        }
    }
}

/// A deadline no session reaches (the timer branch is off then anyway).
pub(crate) fn far_future() -> tokio::time::Instant {
    tokio::time::Instant::now() + Duration::from_secs(86_400 * 365)
}

/// A session and the effects it asked for, applied in order. Dropped
/// before its session ended (the proxy's task cancelled on `SIGTERM`), it
/// still writes the audit lines of the calls the session leaves behind.
struct Driver<'s> {
    session: Session<'s>,
    keeper: Keeper<'s>,
    effects: Vec<Effect>,
}

impl Driver<'_> {
    /// Applies the pending effects. `strict`: a host that cannot be written
    /// to ends the session with an error.
    async fn apply<S: HostSink>(
        &mut self,
        host: &mut S,
        link: &mut Link,
        strict: bool,
    ) -> Result<(), UpstreamError> {
        for effect in self.effects.drain(..) {
            match effect {
                Effect::Host(_) | Effect::Answer(_) | Effect::Progress(_) => {
                    let delivered = match effect {
                        Effect::Answer(answer) => host.deliver_answer(*answer).await,
                        Effect::Progress(progress) => host.deliver_progress(*progress).await,
                        Effect::Host(line) => host.deliver(line).await,
                        _ => Ok(()),
                    };
                    if strict {
                        delivered.map_err(|source| UpstreamError::Io {
                            context: "cannot write to the host".into(),
                            source,
                        })?;
                    }
                }
                Effect::Server(line) => {
                    if let Err(e) = link.send(line).await {
                        log(&format!("cannot write to the server: {e}"));
                    }
                }
                other => self.keeper.keep(other),
            }
        }
        Ok(())
    }
}

/// What carries out a session's effects that are not messages: the audit
/// log and telemetry ([`Sinks`]), and the guard's trust store.
#[derive(Clone, Copy)]
pub(crate) struct Keeper<'s> {
    guard: &'s Guard,
    sinks: &'s Sinks,
}

impl<'s> Keeper<'s> {
    /// The keeper of the proxy's `options`.
    pub(crate) fn of(options: &'s Options) -> Keeper<'s> {
        Keeper {
            guard: &options.guard,
            sinks: &options.sinks,
        }
    }

    /// Applies an effect that is not a message (an audit line, a log line,
    /// a span, a measure, a key to remember); messages are the
    /// transport's.
    pub(crate) fn keep(self, effect: Effect) {
        match effect {
            Effect::Host(_) | Effect::Answer(_) | Effect::Progress(_) | Effect::Server(_) => {}
            Effect::Audit(record) => self.sinks.keep(record),
            Effect::Log(line) => log(&line),
            Effect::Span(span) => {
                if let Some(telemetry) = &self.sinks.telemetry {
                    telemetry.span(span);
                }
            }
            Effect::Measure(measure) => {
                if let Some(telemetry) = &self.sinks.telemetry {
                    telemetry.measure(measure);
                }
            }
            Effect::Trust(record) => {
                if let Some(verifier) = &self.guard.verify
                    && let Err(e) = crate::trust::remember(verifier, &record)
                {
                    log(&format!("cannot write the trust store: {e}"));
                }
            }
        }
    }
}

impl Drop for Driver<'_> {
    fn drop(&mut self) {
        abandon(&mut self.session, self.keeper, &mut self.effects);
    }
}

/// A session stopped before it ended (the proxy interrupted): the audit
/// lines, spans and measures of what it leaves behind are kept; nothing
/// more is written to either side.
pub(crate) fn abandon(session: &mut Session<'_>, keeper: Keeper<'_>, effects: &mut Vec<Effect>) {
    if !keeper.sinks.records() {
        return;
    }
    session.abandon(crate::machine::clock(), effects);
    for effect in effects.drain(..) {
        if matches!(
            effect,
            Effect::Audit(_) | Effect::Span(_) | Effect::Measure(_)
        ) {
            keeper.keep(effect);
        }
    }
}

/// What a server's real `tools/list` and the rules disagree on, as lines
/// for stderr ([`ProxyRules::compare`]).
pub fn compare(rules: &ProxyRules, listed: &[Value]) -> Vec<String> {
    rules.compare(listed)
}

/// Checks a server's real `tools/list` (read at start) against the pinned
/// signature, if any: the tools the host would not see are named on stderr.
pub fn check_pin(rules: &ProxyRules, guard: &Guard, listed: &[Value]) {
    let raw = json!({"tools": listed});
    let mut result = raw.clone();
    rules.rewrite(&Rewrite::Tools { marked: true }, &mut result);
    let mut notes = Vec::new();
    guard.check_listing(
        &mut crate::guard::PinState::default(),
        &raw,
        &mut result,
        None,
        &mut notes,
    );
    for note in notes {
        log(&note);
    }
}

/// Reads a server's real `tools/list` through a short session of its own
/// (a command is started and stopped for it).
pub async fn probe(upstream: &Upstream, timeout: Duration) -> Result<Vec<Value>, UpstreamError> {
    let mut session = match upstream {
        Upstream::Command(command) => crate::upstream::Session::spawn(command, timeout).await?,
        Upstream::Url(url, headers) => {
            crate::upstream::Session::connect_with(url, headers, timeout).await?
        }
    };
    let tools = session.list_tools().await;
    session.close(GRACE).await?;
    tools
}
