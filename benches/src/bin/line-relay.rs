//! The floor of a proxy built as this one is: a tokio current-thread
//! runtime that reads the host's and the server's lines where they are
//! awaited (the runtime's cancel-safe `LineBuf`, as `mcp-resolve proxy`
//! does) and writes each on unchanged — no parsing, no session, no policy.
//! `scripts/proxy_latency.py --line-relay` measures it beside the proxy and
//! the `cat` relay, so what the proxy costs above the asynchronous I/O
//! itself is read off one table.
//!
//! `line-relay --threads` is the same relay on two threads of blocking I/O
//! (one a direction, as `cat` each way is, in one process): the floor of a
//! design without an event loop, for comparison.
//!
//! `line-relay --http COMMAND [ARGS…]` is the floor of the HTTP route
//! (`--listen`) on the same terms: one thread of blocking I/O that takes
//! a host's `POST`s on a keep-alive connection, writes each body to the
//! server as a line and answers with the server's next line (an event
//! stream when the host accepts one; `202` for a body without an `"id"`) —
//! no HTTP library, no session. It says where it listens on stderr, as
//! `mcp-resolve proxy --listen` does. `scripts/listen_ab.py --floor`
//! measures both floors beside both routes.
//!
//! `line-relay [--threads | --http] COMMAND [ARGS…]`: the server is the
//! child `COMMAND`.
#![allow(clippy::print_stderr)]

use std::os::fd::AsFd;
use std::process::{ExitCode, Stdio};

use mcp_resolve_runtime::framing::{Line, LineBuf};
use tokio::io::{AsyncWrite, AsyncWriteExt, BufReader};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The largest line moved (as the proxy's default).
const MAX: usize = 16 << 20;

fn main() -> ExitCode {
    let mut command: Vec<String> = std::env::args().skip(1).collect();
    let mode = command
        .first()
        .filter(|a| matches!(a.as_str(), "--threads" | "--http" | "--axum"))
        .cloned();
    if mode.is_some() {
        command.remove(0);
    }
    let Some((program, args)) = command.split_first() else {
        eprintln!("usage: line-relay [--threads | --http | --axum] COMMAND [ARGS…]");
        return ExitCode::from(2);
    };
    if let Some(mode) = mode.as_deref().filter(|m| *m != "--axum") {
        let relayed = if mode == "--http" {
            http::relay(program, args)
        } else {
            threaded::relay(program, args)
        };
        return match relayed {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("line-relay: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("line-relay: {e}");
            return ExitCode::FAILURE;
        }
    };
    let relayed = if mode.is_some() {
        runtime.block_on(library::relay(program, args))
    } else {
        runtime.block_on(relay(program, args))
    };
    match relayed {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("line-relay: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn relay(program: &str, args: &[String]) -> std::io::Result<()> {
    let (_child, mut to_server, server_out) = spawn_async(program, args)?;
    let stdin = std::io::stdin().as_fd().try_clone_to_owned()?;
    let stdout = std::io::stdout().as_fd().try_clone_to_owned()?;
    let host_in = tokio::net::unix::pipe::Receiver::from_owned_fd(stdin)?;
    let mut host_out = tokio::net::unix::pipe::Sender::from_owned_fd(stdout)?;
    let (mut host, mut server) = (
        BufReader::with_capacity(64 << 10, host_in),
        BufReader::with_capacity(64 << 10, server_out),
    );
    let (mut from_host, mut from_server) = (LineBuf::new(MAX), LineBuf::new(MAX));
    loop {
        tokio::select! {
            line = from_host.next(&mut host) => {
                match line? {
                    Line::Eof => return Ok(()),
                    // Dropped, as the proxy drops a line over its bound.
                    Line::TooLong => {}
                    Line::Complete => write(&mut to_server, from_host.take_line()).await?,
                }
            }
            line = from_server.next(&mut server) => {
                match line? {
                    Line::Eof => return Ok(()),
                    // Dropped, as the proxy drops a line over its bound.
                    Line::TooLong => {}
                    Line::Complete => write(&mut host_out, from_server.take_line()).await?,
                }
            }
        }
    }
}

/// One line, written whole and flushed.
async fn write<W: AsyncWrite + Unpin>(out: &mut W, mut line: Vec<u8>) -> std::io::Result<()> {
    if line.last() != Some(&b'\n') {
        line.push(b'\n');
    }
    out.write_all(&line).await?;
    out.flush().await
}

/// The server `program` started with piped stdio for the event loop,
/// killed when its handle is dropped.
fn spawn_async(
    program: &str,
    args: &[String],
) -> std::io::Result<(
    tokio::process::Child,
    tokio::process::ChildStdin,
    tokio::process::ChildStdout,
)> {
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    match (child.stdin.take(), child.stdout.take()) {
        (Some(to_server), Some(server_out)) => Ok((child, to_server, server_out)),
        _ => Err(std::io::Error::other("the child has no piped stdio")),
    }
}

/// The server `program` started with piped stdio (blocking I/O).
fn spawn(
    program: &str,
    args: &[String],
) -> std::io::Result<(
    std::process::Child,
    std::process::ChildStdin,
    std::process::ChildStdout,
)> {
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    match (child.stdin.take(), child.stdout.take()) {
        (Some(to_server), Some(server_out)) => Ok((child, to_server, server_out)),
        _ => Err(std::io::Error::other("the child has no piped stdio")),
    }
}

/// The relay on two threads of blocking I/O.
mod threaded {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::os::fd::AsFd;

    use super::MAX;

    pub(super) fn relay(program: &str, args: &[String]) -> std::io::Result<()> {
        let (mut child, to_server, server_out) = super::spawn(program, args)?;
        // The descriptors themselves, unbuffered: a line is one write.
        let stdin = std::fs::File::from(std::io::stdin().as_fd().try_clone_to_owned()?);
        let stdout = std::fs::File::from(std::io::stdout().as_fd().try_clone_to_owned()?);
        let answers = std::thread::spawn(move || pump(server_out, stdout));
        let requests = pump(stdin, to_server);
        // The host is gone: the server's input closed (dropped in `pump`),
        // it ends, and so does its output.
        let waited = child.wait();
        let answered = answers
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the answer thread panicked")));
        requests.and(answered).and(waited.map(|_| ()))
    }

    /// Moves lines from `from` to `to` until `from` ends.
    fn pump<R: Read, W: Write>(from: R, mut to: W) -> std::io::Result<()> {
        let mut from = BufReader::with_capacity(64 << 10, from);
        let mut line = Vec::new();
        loop {
            line.clear();
            let read = (&mut from)
                .take(MAX as u64 + 1)
                .read_until(b'\n', &mut line)?;
            if read == 0 {
                return Ok(());
            }
            if line.len() > MAX {
                // Dropped, as the proxy drops a line over its bound: the
                // rest of it is skipped.
                if line.last() != Some(&b'\n') {
                    skip_line(&mut from)?;
                }
                continue;
            }
            if line.last() != Some(&b'\n') {
                line.push(b'\n');
            }
            match to.write_all(&line) {
                Ok(()) => {}
                // The other side is gone: nothing more to move.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads up to the end of the current line.
    fn skip_line<R: BufRead>(from: &mut R) -> std::io::Result<()> {
        loop {
            let buffer = from.fill_buf()?;
            if buffer.is_empty() {
                return Ok(());
            }
            match buffer.iter().position(|&b| b == b'\n') {
                Some(at) => {
                    from.consume(at + 1);
                    return Ok(());
                }
                None => {
                    let n = buffer.len();
                    from.consume(n);
                }
            }
        }
    }
}

/// The HTTP route's floor: blocking I/O on one thread, no HTTP library.
mod http {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::process::{ChildStdin, ChildStdout};

    pub(super) fn relay(program: &str, args: &[String]) -> std::io::Result<()> {
        let (mut child, mut to_server, server_out) = super::spawn(program, args)?;
        let mut server = BufReader::with_capacity(64 << 10, server_out);
        let listener = TcpListener::bind("127.0.0.1:0")?;
        eprintln!(
            "line-relay listening on http://{}/mcp",
            listener.local_addr()?
        );
        for host in listener.incoming() {
            let host = host?;
            host.set_nodelay(true)?;
            if let Err(e) = exchanges(host, &mut to_server, &mut server) {
                eprintln!("line-relay: {e}");
            }
        }
        drop(to_server);
        child.wait().map(|_| ())
    }

    /// The `POST`s of one keep-alive connection, until the host closes it.
    fn exchanges(
        host: TcpStream,
        to_server: &mut ChildStdin,
        server: &mut BufReader<ChildStdout>,
    ) -> std::io::Result<()> {
        let mut out = host.try_clone()?;
        let mut host = BufReader::with_capacity(64 << 10, host);
        let (mut head, mut body, mut answer) = (String::new(), Vec::new(), Vec::new());
        loop {
            head.clear();
            let (mut length, mut events) = (0usize, false);
            loop {
                let start = head.len();
                if host.read_line(&mut head)? == 0 {
                    return Ok(());
                }
                let line = head[start..].trim_end().to_ascii_lowercase();
                if line.is_empty() && start > 0 {
                    break;
                }
                if let Some(value) = line.strip_prefix("content-length:") {
                    length = value.trim().parse().map_err(std::io::Error::other)?;
                }
                if line.starts_with("accept:") && line.contains("text/event-stream") {
                    events = true;
                }
            }
            body.clear();
            body.resize(length, 0);
            host.read_exact(&mut body)?;
            body.push(b'\n');
            to_server.write_all(&body)?;
            if !body.windows(4).any(|w| w == b"\"id\"") {
                out.write_all(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n")?;
                continue;
            }
            answer.clear();
            if server.read_until(b'\n', &mut answer)? == 0 {
                return Err(std::io::Error::other("the server ended"));
            }
            let line = answer.strip_suffix(b"\n").unwrap_or(&answer);
            let (kind, before, after): (&str, &[u8], &[u8]) = if events {
                ("text/event-stream", b"event: message\ndata: ", b"\n\n")
            } else {
                ("application/json", b"", b"")
            };
            let mut response = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n",
                before.len() + line.len() + after.len()
            )
            .into_bytes();
            response.extend_from_slice(before);
            response.extend_from_slice(line);
            response.extend_from_slice(after);
            out.write_all(&response)?;
        }
    }
}

/// The HTTP route's floor on the proxy's own HTTP stack: axum on hyper, on
/// the current-thread runtime; one exchange at a time with the server.
mod library {
    use std::sync::Arc;

    use axum::body::Bytes;
    use axum::extract::State;
    use axum::http::{HeaderMap, StatusCode, header};
    use axum::response::{IntoResponse, Response};
    use axum::serve::ListenerExt;
    use mcp_resolve_runtime::framing::{Line, LineBuf};
    use tokio::io::{AsyncWriteExt, BufReader};
    use tokio::process::{ChildStdin, ChildStdout};
    use tokio::sync::Mutex;

    use super::MAX;

    /// The server's two ends, taken by one exchange at a time.
    struct Server {
        to: ChildStdin,
        from: BufReader<ChildStdout>,
        line: LineBuf,
    }

    pub(super) async fn relay(program: &str, args: &[String]) -> std::io::Result<()> {
        let (_child, to, from) = super::spawn_async(program, args)?;
        let server = Arc::new(Mutex::new(Server {
            to,
            from: BufReader::with_capacity(64 << 10, from),
            line: LineBuf::new(MAX),
        }));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        eprintln!(
            "line-relay listening on http://{}/mcp",
            listener.local_addr()?
        );
        let app = axum::Router::new()
            .route("/mcp", axum::routing::post(exchange))
            .with_state(server);
        // No Nagle, as the proxy's route: an answer is one small write.
        let listener = listener.tap_io(|stream| {
            let _ = stream.set_nodelay(true);
        });
        axum::serve(listener, app).await
    }

    /// One `POST`: its body to the server as a line, the server's next line
    /// as the answer (`202` for a body without an `"id"`).
    async fn exchange(
        State(server): State<Arc<Mutex<Server>>>,
        headers: HeaderMap,
        body: Bytes,
    ) -> Response {
        let mut server = server.lock().await;
        let mut line = body.to_vec();
        line.push(b'\n');
        if let Err(e) = server.to.write_all(&line).await {
            return (StatusCode::BAD_GATEWAY, e.to_string()).into_response();
        }
        if !body.windows(4).any(|w| w == b"\"id\"") {
            return StatusCode::ACCEPTED.into_response();
        }
        let Server { from, line, .. } = &mut *server;
        match line.next(from).await {
            Ok(Line::Complete) => {}
            Ok(_) => return (StatusCode::BAD_GATEWAY, "the server ended").into_response(),
            Err(e) => return (StatusCode::BAD_GATEWAY, e.to_string()).into_response(),
        }
        let mut answer = line.take_line();
        if answer.last() == Some(&b'\n') {
            answer.pop();
        }
        let events = headers
            .get(header::ACCEPT)
            .and_then(|a| a.to_str().ok())
            .is_some_and(|a| a.contains("text/event-stream"));
        if events {
            let mut framed = b"event: message\ndata: ".to_vec();
            framed.extend_from_slice(&answer);
            framed.extend_from_slice(b"\n\n");
            ([(header::CONTENT_TYPE, "text/event-stream")], framed).into_response()
        } else {
            ([(header::CONTENT_TYPE, "application/json")], answer).into_response()
        }
    }
}
