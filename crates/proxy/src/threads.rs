//! The stdio transport with the server started as a child: the host on the
//! proxy's own stdin and stdout, a thread a direction.
//!
//! Each thread reads its side's pipe with a blocking `read` (as `cat`
//! does), hands the message to the [`Session`] under a lock, and writes
//! what the session decided: a message's path runs no event loop, no task,
//! no waker. The event loop (tokio, on the calling thread) keeps what is
//! not on a message's path: the session's deadlines, the child's exit and
//! its stderr, and the signals that interrupt the proxy (the future this
//! returns is then dropped, and the session's audit lines are still kept).
//!
//! Order: what one step of the session decides is written in order, and
//! the output's lock is taken before the session's is let go, so two
//! threads' messages to one side go in the order the session decided
//! them. A thread blocked writing to one side holds only that side's lock:
//! the other thread keeps reading and deciding meanwhile.

use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::os::fd::AsFd;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use mcp_resolve_runtime::framing::LineBuf;
use tokio::sync::mpsc;

use crate::guard::Guard;
use crate::link::{GRACE, Input, child_ended, input_of};
use crate::log;
use crate::relay::{HostSide, Keeper, Options, ProxyRules, abandon, far_future, session_config};
use crate::session::{Effect, Ended, Session};
use crate::upstream::{StdioTransport, UpstreamError, command_line};

/// What the event loop hears from the threads.
enum Event {
    /// The session's earliest deadline moved earlier, to this.
    Deadline(Instant),
    /// The server's output ended.
    ServerEnded,
    /// The session ended, so.
    Ended(Ended),
    /// The host cannot be written to.
    HostGone(std::io::Error),
    /// A thread stopped without ending the session (it panicked).
    Lost(&'static str),
}

/// The session and what it asked for, shared by the threads.
struct Core {
    session: Session<'static>,
    effects: Vec<Effect>,
    /// The deadline the event loop's timer is set to: it is told only of
    /// an earlier one (a request answered before its deadline leaves the
    /// timer set; it then ticks once for nothing).
    armed: Option<Instant>,
    /// The transport stopped: the threads do nothing more.
    stopped: bool,
}

/// What the threads and the event loop share.
struct Shared {
    core: Mutex<Core>,
    keeper: Keeper<'static>,
    host: Mutex<File>,
    /// The server's stdin; `None` once the transport closed it.
    server: Mutex<Option<File>>,
    events: mpsc::UnboundedSender<Event>,
}

/// Locks `mutex`; a thread that panicked while holding it left the data as
/// it was, which every user of these locks can go on from.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// Applies what one step of the session decided; whether the thread
    /// goes on (the session did not end, the host can be written to). A
    /// host that cannot be written to ends the session with an error; the
    /// step's other effects (audit lines among them) are still applied.
    fn apply(&self, mut core: MutexGuard<'_, Core>) -> bool {
        let effects = std::mem::take(&mut core.effects);
        if let Some(deadline) = core.session.next_deadline()
            && core.armed.is_none_or(|at| deadline < at)
        {
            core.armed = Some(deadline);
            let _ = self.events.send(Event::Deadline(deadline));
        }
        let ended = core.session.ended().cloned();
        // The outputs' locks before the session's is let go: one side's
        // messages keep the session's order across threads.
        let mut host = effects
            .iter()
            .any(|e| matches!(e, Effect::Host(_) | Effect::Answer(_) | Effect::Progress(_)))
            .then(|| lock(&self.host));
        let mut server = effects
            .iter()
            .any(|e| matches!(e, Effect::Server(_)))
            .then(|| lock(&self.server));
        drop(core);
        let mut gone = None;
        for effect in effects {
            match effect {
                Effect::Host(_) | Effect::Answer(_) | Effect::Progress(_) => {
                    let line = match effect {
                        Effect::Answer(routed) | Effect::Progress(routed) => routed.text,
                        Effect::Host(line) => line,
                        _ => continue,
                    };
                    if gone.is_none()
                        && let Some(host) = host.as_deref_mut()
                        && let Err(e) = write_line(host, line)
                        && ended.is_none()
                    {
                        gone = Some(e);
                    }
                }
                Effect::Server(line) => {
                    if let Some(Some(server)) = server.as_deref_mut()
                        && let Err(e) = write_line(server, line)
                    {
                        log(&format!("cannot write to the server: {e}"));
                    }
                }
                other => self.keeper.keep(other),
            }
        }
        match (ended, gone) {
            (Some(ended), _) => {
                let _ = self.events.send(Event::Ended(ended));
                false
            }
            (None, Some(e)) => {
                let _ = self.events.send(Event::HostGone(e));
                false
            }
            (None, None) => true,
        }
    }

    /// One input through the session (`from_host` or `from_server`), and
    /// its effects applied; whether the thread goes on.
    fn step(&self, input: Input, host: bool) -> bool {
        let mut core = lock(&self.core);
        if core.stopped {
            return false;
        }
        let Core {
            session, effects, ..
        } = &mut *core;
        if host {
            session.from_host(input, crate::machine::clock(), effects);
        } else {
            session.from_server(input, crate::machine::clock(), effects);
        }
        self.apply(core)
    }
}

/// Writes `text` and a newline in one write (in `text`'s own buffer when it
/// has room: a line read and passed on as it was).
fn write_line(out: &mut File, text: String) -> std::io::Result<()> {
    let mut line = text.into_bytes();
    line.push(b'\n');
    out.write_all(&line)
}

/// Says the thread stopped, if it stops by a panic.
struct Watch(mpsc::UnboundedSender<Event>, &'static str);

impl Drop for Watch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = self.0.send(Event::Lost(self.1));
        }
    }
}

/// Reads `input` a line at a time into the session until it ends; `host`:
/// the host's side (its end is the session's), else the server's (its end
/// is told to the event loop, which reads why).
fn read(shared: &Shared, input: File, max: usize, host: bool) {
    let mut lines = LineBuf::new(max);
    // Read straight into the line's buffer, which becomes the message.
    let mut fill = |buf: &mut Vec<u8>| {
        rustix::io::read(&input, rustix::buffer::spare_capacity(buf)).map_err(std::io::Error::from)
    };
    loop {
        let read = lines.next_filling(&mut fill);
        match input_of(&mut lines, read) {
            Some(message) => {
                if !shared.step(message, host) {
                    return;
                }
            }
            None if host => {
                shared.step(Input::Ended(String::new()), true);
                return;
            }
            None => {
                let _ = shared.events.send(Event::ServerEnded);
                return;
            }
        }
    }
}

/// A duplicate of this process's stdin or stdout, as a blocking file.
fn own(fd: std::os::fd::BorrowedFd<'_>, what: &str) -> Result<File, UpstreamError> {
    fd.try_clone_to_owned()
        .map(File::from)
        .map_err(|source| UpstreamError::Io {
            context: format!("cannot use the proxy's {what}"),
            source,
        })
}

/// One proxy session between the host on this process's stdio and the
/// server `command`, started as a child, until either side ends (see the
/// module's documentation). `rules` and `options` live as long as the
/// process: a thread blocked reading the host may outlive the session.
pub async fn run_stdio(
    rules: &'static ProxyRules,
    options: &'static Options,
    command: &[OsString],
) -> Result<Ended, UpstreamError> {
    let host_in = own(std::io::stdin().as_fd(), "stdin")?;
    let host_out = own(std::io::stdout().as_fd(), "stdout")?;
    let mut child = StdioTransport::spawn_with(command, true)?;
    let Some((stdin, stdout)) = child.take_pipes() else {
        return Err(UpstreamError::Protocol(
            "the child process has no piped stdio".into(),
        ));
    };
    let io = |source| UpstreamError::Io {
        context: "cannot read the server's stdio".into(),
        source,
    };
    let server_in = File::from(stdin.into_owned_fd().map_err(io)?);
    let server_out = File::from(stdout.into_inner().into_owned_fd().map_err(io)?);
    let guard: &'static Guard = &options.guard;
    let (events, mut heard) = mpsc::unbounded_channel();
    let shared = Arc::new(Shared {
        core: Mutex::new(Core {
            session: Session::new(rules, guard, session_config(options, HostSide::stream())),
            effects: Vec::new(),
            armed: None,
            stopped: false,
        }),
        keeper: Keeper::of(options),
        host: Mutex::new(host_out),
        server: Mutex::new(Some(server_in)),
        events,
    });
    let stop = Stop(shared.clone());
    let max = options.max_message_bytes;
    for (name, input, host) in [("host", host_in, true), ("server", server_out, false)] {
        let thread = shared.clone();
        std::thread::Builder::new()
            .name(format!("mcp-resolve {name}"))
            .spawn(move || {
                let _watch = Watch(thread.events.clone(), name);
                read(&thread, input, max, host);
            })
            .map_err(|source| UpstreamError::Io {
                context: "cannot start the proxy's threads".into(),
                source,
            })?;
    }
    let command = command_line(command);
    let outcome = keep_time(&shared, &mut heard, &mut child, &command).await;
    blocking(move || stop.close()).await?;
    child.close(GRACE).await?;
    outcome
}

/// The event loop's part: the session's deadlines, the server's end, and
/// what the threads say, until the session ends. It never waits for the
/// session's lock itself (a thread may hold it while it waits to write to
/// a side that does not read): the session's steps it takes run on
/// tokio's blocking pool, and an interrupt is heard meanwhile.
async fn keep_time(
    shared: &Arc<Shared>,
    heard: &mut mpsc::UnboundedReceiver<Event>,
    child: &mut StdioTransport,
    command: &str,
) -> Result<Ended, UpstreamError> {
    let timer = tokio::time::sleep_until(far_future());
    tokio::pin!(timer);
    let mut armed = false;
    loop {
        tokio::select! {
            event = heard.recv() => match event {
                Some(Event::Deadline(at)) => {
                    timer.as_mut().reset(tokio::time::Instant::from_std(at));
                    armed = true;
                }
                Some(Event::ServerEnded) => {
                    let why = child_ended(child, command).await;
                    let shared = shared.clone();
                    blocking(move || shared.step(Input::Ended(why), false)).await?;
                }
                Some(Event::Ended(ended)) => return Ok(ended),
                Some(Event::HostGone(source)) => {
                    return Err(UpstreamError::Io {
                        context: "cannot write to the host".into(),
                        source,
                    });
                }
                Some(Event::Lost(side)) => {
                    return Err(UpstreamError::Protocol(format!(
                        "the proxy's {side} thread stopped"
                    )));
                }
                // `shared` holds a sender, so this does not happen; were
                // it to, the session could not go on.
                None => {
                    return Err(UpstreamError::Protocol(
                        "the proxy's threads stopped".into(),
                    ));
                }
            },
            () = &mut timer, if armed => {
                armed = false;
                let shared = shared.clone();
                blocking(move || shared.tick()).await?;
            }
        }
    }
}

/// Runs `work` on tokio's blocking pool.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, UpstreamError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|_| UpstreamError::Protocol("the proxy's session step stopped".into()))
}

impl Shared {
    /// The clock reached the armed deadline.
    fn tick(&self) -> bool {
        let mut core = lock(&self.core);
        if core.stopped {
            return false;
        }
        core.armed = None;
        let Core {
            session, effects, ..
        } = &mut *core;
        session.tick(crate::machine::clock(), effects);
        self.apply(core)
    }
}

/// Stops the threads' work when the session is over, or when the proxy is
/// interrupted (this is dropped with the future): the session's audit
/// lines are kept, and the server's stdin is closed.
struct Stop(Arc<Shared>);

impl Stop {
    /// Stops the session: its audit lines for what is left, and the
    /// server's stdin closed. Neither lock is waited for long: a thread
    /// may hold it while it waits for a side that does not read, and the
    /// proxy must stop all the same (the server is then signalled).
    fn close(&self) {
        if let Some(mut core) = lock_within(&self.0.core)
            && !core.stopped
        {
            core.stopped = true;
            let Core {
                session, effects, ..
            } = &mut *core;
            abandon(session, self.0.keeper, effects);
        }
        if let Some(mut server) = lock_within(&self.0.server) {
            server.take();
        }
    }
}

impl Drop for Stop {
    fn drop(&mut self) {
        self.close();
    }
}

/// Locks `mutex` if it is free within a second.
fn lock_within<T>(mutex: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    let deadline = Instant::now() + std::time::Duration::from_secs(1);
    loop {
        match mutex.try_lock() {
            Ok(guard) => return Some(guard),
            Err(std::sync::TryLockError::Poisoned(poisoned)) => return Some(poisoned.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(std::sync::TryLockError::WouldBlock) => return None,
        }
    }
}
