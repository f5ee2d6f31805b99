//! JSON-RPC 2.0 framing for a stdio server, in front of rmcp (feature
//! `rmcp`): what rmcp's stdio transport leaves unanswered is answered here,
//! as JSON-RPC 2.0 requires, and only well-formed messages reach the server.
//!
//! The rules are the [`Screen`]'s (`mcp_resolve_protocol`): malformed requests
//! are answered with the JSON-RPC error they call for and never reach the
//! server, malformed notifications are dropped, and with [`stdio_for`] a
//! server in the extension dialect answers `-32021` to resolve requests of
//! the 2026-07-28 lifecycle that do not declare the extension (rmcp would
//! answer `-32602` for capabilities that do not decode, before any
//! handler). A line over [`MAX_LINE_BYTES`] is answered `-32600` with
//! `"id": null`, and the rest of the line is skipped.
//!
//! ```ignore
//! let running = server.serve(mcp_resolve_runtime::framing::stdio()).await?;
//! ```
//!
//! [`http`] (feature `http`) screens the bodies of streamable HTTP requests
//! the same way, in front of rmcp's `StreamableHttpService`.

#[cfg(feature = "http")]
pub mod http;

use serde_json::Value;

use crate::RpcError;
use mcp_resolve_protocol::error_response;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// The longest line read; longer ones are refused.
pub const MAX_LINE_BYTES: usize = 64 << 20;

pub use mcp_resolve_protocol::{Screen, Screened};

/// Screens `input` into the returned server side, and merges the server's
/// output with the answers of the screen into `output`, one line at a time.
/// Spawns two tasks on the current tokio runtime; both end when `input`
/// ends and the server has closed its output.
pub fn guard<R, W>(input: R, output: W, screen: Screen) -> (DuplexStream, DuplexStream)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (server_in, mut to_server) = tokio::io::duplex(1 << 16);
    let (from_server, server_out) = tokio::io::duplex(1 << 16);
    let (replies, mut replies_rx) = mpsc::unbounded_channel::<String>();

    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        let mut screen = screen;
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match read_line(&mut input, &mut buf).await {
                Ok(Line::Eof) | Err(_) => break,
                Ok(Line::TooLong) => {
                    let _ = replies.send(error_response(
                        &Value::Null,
                        &RpcError::new(
                            RpcError::INVALID_REQUEST,
                            "Invalid Request: the line is too long",
                            None,
                        ),
                    ));
                }
                Ok(Line::Complete) => {
                    // JSON text is UTF-8: anything else is a parse error,
                    // never forwarded with replacement characters.
                    let Ok(text) = std::str::from_utf8(&buf) else {
                        let _ = replies.send(error_response(
                            &Value::Null,
                            &RpcError::new(
                                RpcError::PARSE_ERROR,
                                "Parse error: the line is not UTF-8",
                                None,
                            ),
                        ));
                        continue;
                    };
                    let text = text.trim_end_matches(['\n', '\r']);
                    match screen.line(text) {
                        Screened::Forward => {
                            let mut bytes = text.as_bytes().to_vec();
                            bytes.push(b'\n');
                            if to_server.write_all(&bytes).await.is_err() {
                                break;
                            }
                        }
                        Screened::Reply(answer) => {
                            let _ = replies.send(line_of(&answer));
                        }
                        Screened::Drop(_) => {}
                    }
                }
            }
        }
        // End of input: the server sees it and finishes.
        let _ = to_server.shutdown().await;
    });

    tokio::spawn(async move {
        let mut output = output;
        let mut from_server = BufReader::new(from_server).lines();
        let mut replies_open = true;
        loop {
            tokio::select! {
                line = from_server.next_line() => match line {
                    Ok(Some(line)) => {
                        if write(&mut output, &line).await.is_err() {
                            break;
                        }
                    }
                    _ => break,
                },
                reply = replies_rx.recv(), if replies_open => match reply {
                    Some(reply) => {
                        if write(&mut output, &reply).await.is_err() {
                            break;
                        }
                    }
                    None => replies_open = false,
                },
            }
        }
        while let Ok(reply) = replies_rx.try_recv() {
            let _ = write(&mut output, &reply).await;
        }
        let _ = output.flush().await;
    });

    (server_in, server_out)
}

/// [`guard`] over the process's stdin and stdout: pass the result to rmcp's
/// `serve`.
pub fn stdio() -> (DuplexStream, DuplexStream) {
    guard(tokio::io::stdin(), tokio::io::stdout(), Screen::default())
}

/// [`stdio`] for a server answering `resolution`'s requests (feature `rmcp`): in the
/// extension dialect, resolve requests whose capability metadata does not
/// declare the extension get `-32021` here (see the module documentation).
#[cfg(feature = "rmcp")]
pub fn stdio_for(resolution: &crate::rmcp::ToolResolution) -> (DuplexStream, DuplexStream) {
    guard(
        tokio::io::stdin(),
        tokio::io::stdout(),
        crate::serve::screen(resolution.dialect()),
    )
}

fn line_of(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

async fn write<W: AsyncWrite + Unpin>(output: &mut W, line: &str) -> std::io::Result<()> {
    output.write_all(line.as_bytes()).await?;
    output.write_all(b"\n").await?;
    output.flush().await
}

/// What [`read_line`] read.
#[derive(Debug)]
pub enum Line {
    /// A line, in the buffer (with its newline, if it had one).
    Complete,
    /// A line longer than the limit, read to its end and discarded.
    TooLong,
    /// The end of the input.
    Eof,
}

/// Reads one line into `buf`, at most [`MAX_LINE_BYTES`]; a longer line is
/// read to its end and discarded.
pub async fn read_line<R: AsyncBufReadExt + Unpin>(
    input: &mut R,
    buf: &mut Vec<u8>,
) -> std::io::Result<Line> {
    read_line_within(input, buf, MAX_LINE_BYTES).await
}

/// [`read_line`] with a limit of `max` bytes; memory stays bounded by
/// `max` plus the reader's buffer, however long the line.
pub async fn read_line_within<R: AsyncBufReadExt + Unpin>(
    input: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    let mut lines = LineBuf::new(max);
    lines.buf = std::mem::take(buf);
    let line = lines.next(input).await;
    *buf = lines.buf;
    line
}

/// A bounded line reader whose state lives between calls: [`LineBuf::next`]
/// is cancel-safe, so it can be one branch of a `select!` that reads
/// straight from a pipe (no task and channel in between): a read cancelled
/// half-way loses nothing.
#[derive(Debug)]
pub struct LineBuf {
    buf: Vec<u8>,
    too_long: bool,
    max: usize,
    /// The last line was returned: the next call starts a new one.
    taken: bool,
    /// [`LineBuf::next_filling`]'s own buffer: what was read and is not
    /// yet returned starts at `start`; no newline up to `scanned`.
    ahead: Vec<u8>,
    start: usize,
    scanned: usize,
}

/// Room [`LineBuf::next_filling`] makes for a read when less is left.
const READ_ROOM: usize = 16 << 10;
/// What it reserves then: a read of a pipe's default capacity fits.
const READ_SIZE: usize = 64 << 10;

impl LineBuf {
    /// Lines of at most `max` bytes.
    pub fn new(max: usize) -> Self {
        LineBuf {
            buf: Vec::new(),
            too_long: false,
            max,
            taken: false,
            ahead: Vec::new(),
            start: 0,
            scanned: 0,
        }
    }

    /// The line [`LineBuf::next`] last returned as [`Line::Complete`], with
    /// its newline if it had one.
    pub fn line(&self) -> &[u8] {
        &self.buf
    }

    /// [`LineBuf::line`], taken out (no copy): the next line is read into a
    /// buffer of its own.
    pub fn take_line(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }

    /// Reads the next line from `input`, at most `max` bytes; a longer line
    /// is read to its end and discarded. Cancel-safe, when `input`'s
    /// `fill_buf` is (tokio's `BufReader`'s is).
    pub async fn next<R: AsyncBufReadExt + Unpin>(
        &mut self,
        input: &mut R,
    ) -> std::io::Result<Line> {
        self.start();
        loop {
            let chunk = input.fill_buf().await?;
            let (take, line) = self.take(chunk);
            input.consume(take);
            if let Some(line) = line {
                return Ok(line);
            }
        }
    }

    /// [`LineBuf::next`] from a blocking source that reads into a buffer
    /// of this reader's: `fill` appends what it reads to the vector it is
    /// given (into its spare capacity, which is never less than 16 KiB)
    /// and says how many bytes; 0 is the end of the input. A large line
    /// (an eighth of the buffer or more) that one or more reads deliver
    /// whole is returned in the buffer it was read into, not copied: a
    /// thread that reads a pipe with `read(2)` (as the stdio transport's
    /// do) touches its bytes once, where a `BufRead` copies each line out
    /// of its own buffer. A smaller line is copied out and the buffer kept
    /// for the next read, so a message kept holds at most eight times
    /// its size.
    pub fn next_filling<F>(&mut self, mut fill: F) -> std::io::Result<Line>
    where
        F: FnMut(&mut Vec<u8>) -> std::io::Result<usize>,
    {
        self.start();
        loop {
            if let Some(line) = self.line_ahead() {
                return Ok(line);
            }
            // Only a line that is not whole is left: it moves to the front.
            if self.start > 0 {
                self.ahead.drain(..self.start);
                self.scanned -= self.start;
                self.start = 0;
            }
            if self.ahead.capacity() - self.ahead.len() < READ_ROOM {
                self.ahead.reserve(READ_SIZE.max(self.ahead.len()));
            }
            match fill(&mut self.ahead) {
                Ok(0) => return Ok(self.end_of_input()),
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The next line of what [`LineBuf::next_filling`] read, if it holds
    /// one whole; what does not fit the limit is let go as it is read.
    fn line_ahead(&mut self) -> Option<Line> {
        let found = memchr::memchr(b'\n', &self.ahead[self.scanned..]);
        let Some(at) = found else {
            self.scanned = self.ahead.len();
            if self.too_long || self.scanned - self.start > self.max {
                // (Everything from `start` on is the one overlong line.)
                self.too_long = true;
                self.ahead.truncate(self.start);
                self.scanned = self.start;
            }
            return None;
        };
        let end = self.scanned + at + 1;
        self.taken = true;
        if self.too_long || end - self.start > self.max {
            self.too_long = true;
            self.consumed(end);
            return Some(Line::TooLong);
        }
        // A large line that fills the buffer alone is the buffer; a small
        // one is copied (the buffer stays for the next read): a message
        // kept holds at most eight times its size.
        if self.start == 0 && end == self.ahead.len() && end >= self.ahead.capacity() / 8 {
            self.buf = std::mem::take(&mut self.ahead);
        } else {
            self.buf.extend_from_slice(&self.ahead[self.start..end]);
        }
        self.consumed(end);
        Some(Line::Complete)
    }

    /// What [`LineBuf::next_filling`] read up to `end` is returned.
    fn consumed(&mut self, end: usize) {
        if end >= self.ahead.len() {
            self.ahead.clear();
            self.start = 0;
        } else {
            self.start = end;
        }
        self.scanned = self.start;
    }

    /// What [`LineBuf::next_filling`] returns at the end of the input: the
    /// last line (without a newline), or the end.
    fn end_of_input(&mut self) -> Line {
        self.taken = true;
        if self.too_long {
            return Line::TooLong;
        }
        if self.start == self.ahead.len() {
            return Line::Eof;
        }
        self.buf.extend_from_slice(&self.ahead[self.start..]);
        self.consumed(self.ahead.len());
        Line::Complete
    }

    /// Starts a new line after one was returned.
    fn start(&mut self) {
        if self.taken {
            self.buf.clear();
            self.too_long = false;
            self.taken = false;
        }
    }

    /// Takes what `chunk` (what the reader has; empty at the end of the
    /// input) holds of the line: how many bytes it consumed, and the line
    /// when it ends there.
    fn take(&mut self, chunk: &[u8]) -> (usize, Option<Line>) {
        if chunk.is_empty() {
            self.taken = true;
            let line = if self.too_long {
                Line::TooLong
            } else if self.buf.is_empty() {
                Line::Eof
            } else {
                Line::Complete
            };
            return (0, Some(line));
        }
        let (take, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if !self.too_long {
            if self.buf.len() + take > self.max {
                self.too_long = true;
                self.buf.clear();
            } else {
                self.buf.extend_from_slice(&chunk[..take]);
            }
        }
        if !done {
            return (take, None);
        }
        self.taken = true;
        let line = if self.too_long {
            Line::TooLong
        } else {
            Line::Complete
        };
        (take, Some(line))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use proptest::prelude::{Just, any};
    use serde_json::json;

    #[tokio::test]
    async fn answers_and_server_output_share_the_output_line_by_line() {
        let input: &[u8] =
            b"garbage\n\"\xff\xfe\"\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\n";
        let (out_w, out_r) = tokio::io::duplex(1 << 16);
        let (server_in, mut server_out) = guard(input, out_w, Screen::default());
        // The server echoes what it gets as a result.
        let mut lines = BufReader::new(server_in).lines();
        let got = lines.next_line().await.unwrap().unwrap();
        assert_eq!(got, r#"{"jsonrpc":"2.0","id":1,"method":"m"}"#);
        assert!(lines.next_line().await.unwrap().is_none(), "input ended");
        server_out
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n")
            .await
            .unwrap();
        drop(server_out);
        let mut out = BufReader::new(out_r).lines();
        let mut seen = Vec::new();
        while let Some(line) = out.next_line().await.unwrap() {
            seen.push(serde_json::from_str::<Value>(&line).unwrap());
        }
        assert_eq!(seen.len(), 3, "{seen:?}");
        let parse_errors = seen
            .iter()
            .filter(|v| v["error"]["code"] == json!(-32700) && v["id"].is_null())
            .count();
        assert_eq!(parse_errors, 2, "not JSON, and not UTF-8: {seen:?}");
        assert!(seen.iter().any(|v| v["result"] == json!({})));
    }

    #[tokio::test]
    async fn an_overlong_line_is_refused_and_skipped() {
        let mut input = vec![b'x'; MAX_LINE_BYTES + 10];
        input.push(b'\n');
        input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\n");
        let mut reader = BufReader::new(&input[..]);
        let mut buf = Vec::new();
        assert!(matches!(
            read_line(&mut reader, &mut buf).await.unwrap(),
            Line::TooLong
        ));
        buf.clear();
        assert!(matches!(
            read_line(&mut reader, &mut buf).await.unwrap(),
            Line::Complete
        ));
        assert!(buf.starts_with(b"{\"jsonrpc\""));
    }

    /// `input` read `size` bytes at a time into the reader's buffer, as
    /// `read(2)` of a pipe does when the writer writes so.
    fn filling(input: &[u8], size: usize) -> impl FnMut(&mut Vec<u8>) -> std::io::Result<usize> {
        let mut at = 0;
        move |buf: &mut Vec<u8>| {
            assert!(buf.capacity() - buf.len() >= READ_ROOM, "room for a read");
            let n = size.min(input.len() - at);
            buf.extend_from_slice(&input[at..at + n]);
            at += n;
            Ok(n)
        }
    }

    /// Reads `input` to its end with both readers, `size` bytes a read,
    /// lines of at most `max`; what each returned, in order.
    async fn both_ways(input: &[u8], size: usize, max: usize) -> Vec<String> {
        let mut lines = LineBuf::new(max);
        let mut reader = BufReader::with_capacity(size, input);
        let mut filled = LineBuf::new(max);
        let mut fill = filling(input, size);
        let mut seen = Vec::new();
        loop {
            let a = lines.next(&mut reader).await.unwrap();
            let b = filled.next_filling(&mut fill).unwrap();
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "at {size} a read");
            assert_eq!(lines.line(), filled.line(), "at {size} a read");
            seen.push(format!("{a:?} {:?}", String::from_utf8_lossy(lines.line())));
            // Every other line is taken out, as the proxy's threads do.
            if seen.len() % 2 == 0 {
                assert_eq!(lines.take_line(), filled.take_line());
            }
            if matches!(a, Line::Eof) {
                return seen;
            }
        }
    }

    proptest::proptest! {
        /// Any input, read any number of bytes at a time: the filling
        /// reader returns what the async one returns.
        #[test]
        fn the_filling_reader_reads_what_the_async_one_reads(
            input in proptest::collection::vec(
                proptest::prop_oneof![Just(b'\n'), Just(b'x'), Just(b'\r'), any::<u8>()], 0..400),
            size in 1usize..70,
            max in 1usize..40,
        ) {
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            runtime.block_on(both_ways(&input, size, max));
        }
    }

    /// A large line one read or several deliver whole is returned in the
    /// buffer it was read into; a small one is copied out, and the buffer
    /// is kept for the next read.
    #[test]
    fn a_large_line_read_whole_is_not_copied() {
        let mut input = vec![b'x'; 20 << 10];
        input.push(b'\n');
        input.extend_from_slice(b"{}\n");
        for size in [input.len() - 3, 4096] {
            let mut lines = LineBuf::new(MAX_LINE_BYTES);
            let mut fill = filling(&input[..input.len() - 3], size);
            assert!(matches!(
                lines.next_filling(&mut fill).unwrap(),
                Line::Complete
            ));
            let line = lines.take_line();
            assert_eq!(line, &input[..input.len() - 3], "{size} a read");
            assert!(
                line.capacity() >= READ_SIZE,
                "read into, not copied: {size} a read"
            );
        }
        let mut lines = LineBuf::new(MAX_LINE_BYTES);
        let mut fill = filling(b"{}\n{\"a\":1}\n", 3);
        for expected in [&b"{}\n"[..], b"{\"a\":1}\n"] {
            assert!(matches!(
                lines.next_filling(&mut fill).unwrap(),
                Line::Complete
            ));
            let line = lines.take_line();
            assert_eq!(line, expected);
            assert!(line.capacity() < READ_SIZE, "a small line is copied out");
        }
        assert!(lines.ahead.capacity() >= READ_SIZE, "the buffer is kept");
    }

    /// What the filling reader makes of an input is what the async one
    /// makes of it, whatever the reads' sizes: lines, an overlong line
    /// skipped, a last line without a newline, the end.
    #[tokio::test]
    async fn both_readers_read_the_same_lines() {
        let mut input = b"{\"a\":1}\n".to_vec();
        input.extend(vec![b'x'; 40]);
        input.extend_from_slice(b"\n\nshort\r\n");
        input.extend(vec![b'y'; 31]);
        input.extend_from_slice(b"\nlast");
        for capacity in [1, 3, 8, 64] {
            let seen = both_ways(&input, capacity, 32).await;
            assert_eq!(
                seen,
                [
                    "Complete \"{\\\"a\\\":1}\\n\"",
                    "TooLong \"\"",
                    "Complete \"\\n\"",
                    "Complete \"short\\r\\n\"",
                    "Complete \"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\\n\"",
                    "Complete \"last\"",
                    "Eof \"\"",
                ],
                "at capacity {capacity}"
            );
        }
    }
}
