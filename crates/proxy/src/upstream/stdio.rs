//! A server as a child process, spoken to over its stdin and stdout.
//!
//! The child runs in a process group of its own (Unix), so a server started
//! through a wrapper (`npx`, `uvx`, a shell script) is stopped with
//! everything it started. Dropping the transport without closing it kills
//! the group: no process outlives the session, whatever path ends it.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_resolve_runtime::framing::{Line, read_line_within};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::{MAX_MESSAGE_BYTES, Received, UpstreamError, command_line, excerpt};

/// How many of the server's last stderr lines an error quotes.
const STDERR_LINES: usize = 20;

/// A server child process.
pub struct StdioTransport {
    command: String,
    child: Child,
    /// The child's pid, which is also its process group's id.
    pid: Option<u32>,
    stdin: Option<ChildStdin>,
    stdout: Option<BufReader<ChildStdout>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// The task reading the child's stderr (done at its end of file).
    stderr_reader: Option<tokio::task::JoinHandle<()>>,
}

impl StdioTransport {
    /// Starts `command` (program and arguments) with piped stdio; its stderr
    /// is kept (the last lines, for messages about it) and not shown.
    pub fn spawn(command: &[OsString]) -> Result<Self, UpstreamError> {
        Self::spawn_with(command, false)
    }

    /// [`StdioTransport::spawn`], with the child's stderr also passed on to
    /// this process's stderr as it comes, byte for byte (`forward`): the
    /// proxy's host keeps a server's stderr as its log.
    pub fn spawn_with(command: &[OsString], forward: bool) -> Result<Self, UpstreamError> {
        let line = command_line(command);
        let Some((program, args)) = command.split_first() else {
            return Err(UpstreamError::Protocol("no server command given".into()));
        };
        let mut builder = Command::new(program);
        builder
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        builder.process_group(0);
        let mut child = builder.spawn().map_err(|source| UpstreamError::Spawn {
            command: line.clone(),
            source,
        })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(UpstreamError::Protocol(
                "the child process has no piped stdio".into(),
            ));
        };
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let sink = Arc::clone(&tail);
        let reader = tokio::spawn(async move {
            let mut lines = BufReader::new(stderr);
            let mut line = Vec::new();
            let mut shown = forward.then(tokio::io::stderr);
            loop {
                line.clear();
                match lines.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        // As the server wrote it, one write per line; a
                        // stderr that cannot be written stops the passing on,
                        // never the server.
                        if let Some(out) = shown.as_mut()
                            && (out.write_all(&line).await.is_err() || out.flush().await.is_err())
                        {
                            shown = None;
                        }
                        let text = String::from_utf8_lossy(&line);
                        if let Ok(mut tail) = sink.lock() {
                            if tail.len() == STDERR_LINES {
                                tail.pop_front();
                            }
                            tail.push_back(excerpt(text.trim_end()));
                        }
                    }
                }
            }
        });
        Ok(StdioTransport {
            command: line,
            pid: child.id(),
            child,
            stdin: Some(stdin),
            stdout: Some(BufReader::new(stdout)),
            stderr: tail,
            stderr_reader: Some(reader),
        })
    }

    pub(crate) async fn send(&mut self, message: &Value) -> Result<(), UpstreamError> {
        let mut line = message.to_string();
        line.push('\n');
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(UpstreamError::Protocol(
                "the server's stdin is closed".into(),
            ));
        };
        let written = async {
            stdin.write_all(line.as_bytes()).await?;
            stdin.flush().await
        };
        written.await.map_err(|source| UpstreamError::Io {
            context: format!("cannot write to `{}`", self.command),
            source,
        })
    }

    pub(crate) async fn recv(&mut self) -> Result<Option<Received>, UpstreamError> {
        loop {
            let Some(line) = self.read_line().await? else {
                return Ok(None);
            };
            let text = String::from_utf8_lossy(&line);
            let text = text.trim();
            if text.is_empty() {
                continue;
            }
            return Ok(Some(
                match mcp_resolve_protocol::json::from_str::<Value>(text) {
                    Ok(message) if message.is_object() => Received::Message(message),
                    _ => Received::Garbage(excerpt(text)),
                },
            ));
        }
    }

    /// One line of stdout, at most [`MAX_MESSAGE_BYTES`] long (the
    /// runtime's bounded line reader); `None` at the end of the stream.
    async fn read_line(&mut self) -> Result<Option<Vec<u8>>, UpstreamError> {
        let Some(stdout) = self.stdout.as_mut() else {
            return Ok(None);
        };
        let mut line = Vec::new();
        let read = read_line_within(stdout, &mut line, MAX_MESSAGE_BYTES)
            .await
            .map_err(|source| UpstreamError::Io {
                context: format!("cannot read from `{}`", self.command),
                source,
            })?;
        match read {
            Line::Complete => Ok(Some(line)),
            Line::Eof => Ok(None),
            Line::TooLong => Err(UpstreamError::Protocol(format!(
                "the server wrote a line over {} MiB",
                MAX_MESSAGE_BYTES >> 20
            ))),
        }
    }

    /// Hands the child's stdin and stdout to a caller that pumps them
    /// itself (the proxy); the transport keeps the process, so closing or
    /// dropping it still stops the child's process group. `None` when
    /// already taken.
    pub(crate) fn take_pipes(&mut self) -> Option<(ChildStdin, BufReader<ChildStdout>)> {
        Some((self.stdin.take()?, self.stdout.take()?))
    }

    /// Waits up to `grace` for the child to end; its exit status.
    pub(crate) async fn wait_exit(&mut self, grace: Duration) -> Option<String> {
        match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(Ok(status)) => Some(status.to_string()),
            _ => None,
        }
    }

    /// The error for a server whose stdout ended while `method` waited.
    pub(crate) async fn ended(&mut self, method: &str) -> UpstreamError {
        let status = match tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await {
            Ok(Ok(status)) => {
                // Reaped: stop what it left in its group at once.
                self.signal_group(Signal::Kill);
                status.to_string()
            }
            _ => "its stdout closed".into(),
        };
        // Give the stderr reader a moment to take the last lines.
        tokio::time::sleep(Duration::from_millis(50)).await;
        UpstreamError::Exited {
            method: method.into(),
            status,
            stderr: self.stderr(),
        }
    }

    /// Waits, at most `limit`, for the child's stderr to be read to its
    /// end: after the child exited, its last lines (written just before)
    /// may still be in the pipe. A grandchild that keeps the pipe open is
    /// not waited for past `limit`.
    pub(crate) async fn stderr_read(&mut self, limit: Duration) {
        if let Some(reader) = self.stderr_reader.as_mut()
            && tokio::time::timeout(limit, reader).await.is_ok()
        {
            self.stderr_reader = None;
        }
    }

    pub(crate) fn stderr(&self) -> Vec<String> {
        self.stderr
            .lock()
            .map(|tail| tail.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Closes stdin and waits up to `grace` for the server to exit, then
    /// signals its process group: `SIGTERM`, and after another `grace`,
    /// `SIGKILL`. Whatever else the server started in its group is stopped
    /// too.
    pub(crate) async fn close(mut self, grace: Duration) -> Result<(), UpstreamError> {
        drop(self.stdin.take());
        let exited = tokio::time::timeout(grace, self.child.wait()).await;
        if exited.is_err() {
            self.signal_group(Signal::Term);
            if tokio::time::timeout(grace, self.child.wait())
                .await
                .is_err()
            {
                self.signal_group(Signal::Kill);
                let _ = self.child.kill().await;
            }
        }
        // The server is gone; stop anything it left behind in its group.
        self.signal_group(Signal::Kill);
        Ok(())
    }

    #[cfg(unix)]
    fn signal_group(&self, signal: Signal) {
        let Some(pid) = self
            .pid
            .and_then(|id| i32::try_from(id).ok())
            .and_then(rustix::process::Pid::from_raw)
        else {
            return;
        };
        let signal = match signal {
            Signal::Term => rustix::process::Signal::TERM,
            Signal::Kill => rustix::process::Signal::KILL,
        };
        // ESRCH (nothing left in the group) is the expected outcome.
        let _ = rustix::process::kill_process_group(pid, signal);
    }

    #[cfg(not(unix))]
    fn signal_group(&mut self, _signal: Signal) {
        let _ = self.child.start_kill();
    }
}

#[derive(Clone, Copy)]
enum Signal {
    Term,
    Kill,
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        // Only while the child is not reaped: a reaped child's id may name
        // another process by now (`close` and `ended` signal right after
        // reaping instead).
        if self.child.id().is_some() {
            self.signal_group(Signal::Kill);
        }
    }
}
