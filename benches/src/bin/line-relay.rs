//! The floor of a proxy built as this one is: a tokio current-thread
//! runtime that reads the host's and the server's lines where they are
//! awaited (the runtime's cancel-safe `LineBuf`, as `mcp-resolve proxy`
//! does) and writes each on unchanged — no parsing, no session, no policy.
//! `scripts/proxy_latency.py --line-relay` measures it beside the proxy and
//! the `cat` relay, so what the proxy costs above the asynchronous I/O
//! itself is read off one table.
//!
//! `line-relay COMMAND [ARGS…]`: the server is the child `COMMAND`.
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
    let command: Vec<String> = std::env::args().skip(1).collect();
    let Some((program, args)) = command.split_first() else {
        eprintln!("usage: line-relay COMMAND [ARGS…]");
        return ExitCode::from(2);
    };
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
    match runtime.block_on(relay(program, args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("line-relay: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn relay(program: &str, args: &[String]) -> std::io::Result<()> {
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let (Some(mut to_server), Some(server_out)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(std::io::Error::other("the child has no piped stdio"));
    };
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
