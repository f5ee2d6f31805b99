//! `mcp-resolve proxy` under load, in front of a real server from npm
//! (`@modelcontextprotocol/server-filesystem`, installed by `.ci/run`):
//! eight hosts at once, each sending `MCP_RESOLVE_LOAD_REQUESTS` requests
//! (2,000 by default, in the test command's debug build) one after another — `tools/resolve`, `tools/call`
//! and `tools/list` in turn — over stdio sessions and over streamable HTTP.
//! Every answer must be the right one, and the proxy's memory must not grow
//! after warm-up. The same hosts talking to the server directly, in the
//! same run, are the baseline. Each test prints a table of latencies
//! (p50/p99), throughput and the proxy's resident memory; the figures in
//! docs/reliability.md come from `MCP_RESOLVE_LOAD_REQUESTS=10000 cargo test
//! --release --test it load:: -- --nocapture --test-threads 1`. The stdio
//! baseline runs only then, when `MCP_RESOLVE_LOAD_REQUESTS` is set: in the
//! test command's debug build its latencies say nothing, and it checks the
//! server, not the proxy.
//!
//! Then the server is killed mid-load: every request the proxy holds is
//! answered with an error, the proxy exits (stdio) or goes on serving
//! (HTTP) and no process is left behind.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const HOSTS: usize = 8;
const RULES: &str = "rules/real-server-filesystem.yaml";
const EXTENSION: &str = "io.modelcontextprotocol/tool-resolution";
/// How long one answer may take before the test fails (never a hang).
const PATIENCE: Duration = Duration::from_secs(60);

fn requests_per_host() -> usize {
    std::env::var("MCP_RESOLVE_LOAD_REQUESTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2_000)
}

/// Whether the figures are asked for (`MCP_RESOLVE_LOAD_REQUESTS` set), so
/// that the server alone runs too, as the baseline.
fn measuring() -> bool {
    std::env::var_os("MCP_RESOLVE_LOAD_REQUESTS").is_some()
}

/// What a host asks, in turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Resolve,
    Call,
    List,
}

const KINDS: [Kind; 3] = [Kind::Resolve, Kind::Call, Kind::List];

impl Kind {
    /// The kind of a host's `i`-th request; `with_resolve` false leaves
    /// `tools/resolve` out (a server without the proxy cannot answer it).
    fn of(i: usize, with_resolve: bool) -> Kind {
        if with_resolve {
            KINDS[i % 3]
        } else {
            KINDS[1 + i % 2]
        }
    }

    fn method(self) -> &'static str {
        match self {
            Kind::Resolve => "tools/resolve",
            Kind::Call => "tools/call",
            Kind::List => "tools/list",
        }
    }
}

/// The server's directory, with the file the calls read.
struct Setup {
    root: PathBuf,
    file: String,
    server: PathBuf,
}

impl Setup {
    fn new(name: &str) -> Option<Setup> {
        let dir = common::real_servers("the proxy under load")?;
        let root = common::scratch("load", name);
        std::fs::write(root.join("notes.txt"), "hello\n").unwrap();
        let root = root.canonicalize().unwrap();
        let file = root.join("notes.txt").to_str().unwrap().to_string();
        Some(Setup {
            root,
            file,
            server: dir.join("node/node_modules/.bin/mcp-server-filesystem"),
        })
    }

    /// A unique part of the server's command line.
    fn marker(&self) -> String {
        self.root.to_str().unwrap().to_string()
    }

    fn server_args(&self) -> Vec<String> {
        vec![self.server.to_str().unwrap().to_string(), self.marker()]
    }

    /// The `i`-th request of a host, with its id.
    fn request(&self, kind: Kind, id: u64, i: usize) -> Value {
        let params = match kind {
            Kind::Resolve => json!({"name": "edit_file", "arguments": {
                "path": self.file, "edits": [{"oldText": "hello", "newText": "bye"}],
                "dryRun": i.is_multiple_of(2)}}),
            Kind::Call => json!({"name": "read_text_file", "arguments": {"path": self.file}}),
            Kind::List => json!({}),
        };
        json!({"jsonrpc": "2.0", "id": id, "method": kind.method(), "params": params})
    }
}

/// Whether `answer` is the right answer to the `i`-th request.
fn check(kind: Kind, i: usize, answer: &Value) -> Result<(), String> {
    let result = answer
        .get("result")
        .ok_or_else(|| format!("{} got no result: {answer}", kind.method()))?;
    let right = match kind {
        // `dryRun: true` is the read-only `preview` variant.
        Kind::Resolve => result["annotations"]["readOnlyHint"] == json!(i.is_multiple_of(2)),
        Kind::Call => result["content"][0]["text"] == "hello\n",
        Kind::List => result["tools"].as_array().is_some_and(|t| t.len() == 14),
    };
    if right {
        Ok(())
    } else {
        Err(format!("wrong answer to {}: {answer}", kind.method()))
    }
}

fn initialize_request() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
           "params": {"protocolVersion": "2025-11-25",
                      "capabilities": {"extensions": {EXTENSION: {}}},
                      "clientInfo": {"name": "load", "version": "1"}}})
}

/// What the hosts of one run saw.
#[derive(Default)]
struct Tally {
    latencies: [Vec<Duration>; 3],
    errors: Vec<String>,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        for (mine, theirs) in self.latencies.iter_mut().zip(other.latencies) {
            mine.extend(theirs);
        }
        self.errors.extend(other.errors);
    }

    fn record(&mut self, kind: Kind, took: Duration) {
        self.latencies[KINDS.iter().position(|k| *k == kind).unwrap_or(0)].push(took);
    }

    fn requests(&self) -> usize {
        self.latencies.iter().map(Vec::len).sum()
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

/// Resident memory of process `pid`, in KiB (Linux), 0 once it is gone.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// The summed resident memory of `pids` over a run: when the load begins,
/// after warm-up (a tenth of the requests answered), at the end, and the
/// highest seen.
#[derive(Clone, Copy, Default)]
struct Memory {
    start: u64,
    warm: u64,
    end: u64,
    peak: u64,
}

/// Samples the memory of `pids` every 20 ms until `answered` (the run's
/// answers so far) reaches `total`, or until `done`.
fn watch_memory(
    pids: Vec<u32>,
    answered: Arc<AtomicUsize>,
    total: usize,
    done: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Memory> {
    std::thread::spawn(move || {
        let sum = || pids.iter().map(|&p| rss_kib(p)).sum::<u64>();
        let mut memory = Memory {
            start: sum(),
            ..Memory::default()
        };
        memory.peak = memory.start;
        // Until the last answer (the hosts wait for this to close their
        // sessions), or until the run gives up or stalls.
        let mut progress = (0, Instant::now());
        while answered.load(Ordering::SeqCst) < total && !done.load(Ordering::SeqCst) {
            let count = answered.load(Ordering::SeqCst);
            if count != progress.0 {
                progress = (count, Instant::now());
            } else if progress.1.elapsed() > PATIENCE {
                break;
            }
            let now = sum();
            memory.peak = memory.peak.max(now);
            if memory.warm == 0 && answered.load(Ordering::SeqCst) >= total / 10 {
                memory.warm = now;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        memory.end = sum();
        memory.peak = memory.peak.max(memory.end);
        if memory.warm == 0 {
            memory.warm = memory.end;
        }
        memory
    })
}

fn mib(kib: u64) -> String {
    format!("{:.1}", kib as f64 / 1024.0)
}

/// One row of the printed table.
fn report(transport: &str, path: &str, tally: &mut Tally, took: Duration, memory: Option<Memory>) {
    let mut cells = vec![
        transport.to_string(),
        path.to_string(),
        tally.requests().to_string(),
        tally.errors.len().to_string(),
    ];
    for latencies in &mut tally.latencies {
        latencies.sort();
        cells.push(if latencies.is_empty() {
            "—".into()
        } else {
            format!(
                "{} / {}",
                ms(percentile(latencies, 50.0)),
                ms(percentile(latencies, 99.0))
            )
        });
    }
    cells.push(format!(
        "{:.0}",
        tally.requests() as f64 / took.as_secs_f64()
    ));
    cells.push(match memory {
        Some(m) => format!(
            "{} → {} → {} ({})",
            mib(m.start),
            mib(m.warm),
            mib(m.end),
            mib(m.peak)
        ),
        None => "—".into(),
    });
    eprintln!(
        "| transport | path | requests | errors | resolve p50 / p99 ms | call p50 / p99 ms | list p50 / p99 ms | requests/s | proxy RSS MiB: start → warm → end (peak) |"
    );
    eprintln!("|---|---|---:|---:|---:|---:|---:|---:|---|");
    eprintln!("| {} |", cells.join(" | "));
}

/// The proxy's memory after warm-up must not grow with the requests: what a
/// leak of even a hundred bytes per request would add over the run is far
/// above what allocator noise does.
fn assert_flat(memory: Memory, processes: usize) {
    let allowance = 8 * 1024 * processes as u64;
    assert!(
        memory.end <= memory.warm + allowance,
        "the proxy's memory grew after warm-up: {} KiB → {} KiB",
        memory.warm,
        memory.end
    );
}

// ---------------------------------------------------------------------------
// stdio

/// A host on the stdio of a process (the proxy, or the server itself).
struct StdioHost {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl StdioHost {
    fn start(mut command: Command) -> StdioHost {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut host = StdioHost {
            child,
            stdin,
            stdout,
        };
        host.send(&initialize_request());
        let init = host.answer(0).expect("an answer to initialize");
        assert!(init.get("result").is_some(), "{init}");
        host.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        host
    }

    fn send(&mut self, message: &Value) -> bool {
        writeln!(self.stdin, "{message}").is_ok() && self.stdin.flush().is_ok()
    }

    /// The answer to request `id`, skipping notifications; `None` at the
    /// end of the stream.
    fn answer(&mut self, id: u64) -> Option<Value> {
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line).ok()? == 0 {
                return None;
            }
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("a line that is not JSON ({e}): {line}"));
            if message.get("method").is_none() {
                assert_eq!(message["id"], json!(id), "{message}");
                return Some(message);
            }
        }
    }
}

fn proxy_command(setup: &Setup) -> Command {
    let mut command = common::bin();
    command
        .args(["proxy", "--no-probe", RULES, "--"])
        .args(setup.server_args());
    command
}

fn server_command(setup: &Setup) -> Command {
    let args = setup.server_args();
    let mut command = Command::new(&args[0]);
    command.args(&args[1..]);
    command
}

/// Eight stdio hosts at once, each on a process of its own from `command`.
fn stdio_run(setup: &Arc<Setup>, proxied: bool, command: fn(&Setup) -> Command) {
    let n = requests_per_host();
    let hosts: Vec<StdioHost> = (0..HOSTS)
        .map(|_| StdioHost::start(command(setup)))
        .collect();
    let pids = hosts.iter().map(|h| h.child.id()).collect();
    let answered = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let memory = watch_memory(pids, Arc::clone(&answered), n * HOSTS, Arc::clone(&done));
    let began = Instant::now();
    let runs: Vec<_> = hosts
        .into_iter()
        .map(|mut host| {
            let setup = Arc::clone(setup);
            let answered = Arc::clone(&answered);
            let done = Arc::clone(&done);
            std::thread::spawn(move || {
                let mut tally = Tally::default();
                for i in 0..n {
                    let kind = Kind::of(i, proxied);
                    let id = i as u64 + 1;
                    let sent = Instant::now();
                    assert!(host.send(&setup.request(kind, id, i)), "the pipe closed");
                    let answer = host
                        .answer(id)
                        .expect("an answer, not the end of the stream");
                    tally.record(kind, sent.elapsed());
                    answered.fetch_add(1, Ordering::SeqCst);
                    if let Err(e) = check(kind, i, &answer) {
                        tally.errors.push(e);
                    }
                }
                // The last memory sample is taken with every process up.
                while !done.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                drop(host.stdin);
                assert_eq!(common::wait_for(&mut host.child, PATIENCE), 0);
                tally
            })
        })
        .collect();
    let memory = memory.join().unwrap();
    let took = began.elapsed();
    done.store(true, Ordering::SeqCst);
    let mut tally = Tally::default();
    for run in runs {
        tally.add(run.join().unwrap());
    }
    let path = if proxied {
        "proxy → server"
    } else {
        "server (baseline)"
    };
    report("stdio", path, &mut tally, took, proxied.then_some(memory));
    assert!(
        tally.errors.is_empty(),
        "{:?}",
        &tally.errors[..tally.errors.len().min(5)]
    );
    assert_eq!(tally.requests(), n * HOSTS);
    if proxied {
        assert_flat(memory, HOSTS);
    }
}

#[test]
fn eight_stdio_hosts_through_the_proxy_get_every_answer_right() {
    let Some(setup) = Setup::new("stdio") else {
        return;
    };
    let setup = Arc::new(setup);
    if measuring() {
        stdio_run(&setup, false, server_command);
    }
    stdio_run(&setup, true, proxy_command);
    assert_eq!(common::outlived(&setup.marker()), 0, "an orphan");
}

#[test]
fn a_server_killed_under_stdio_load_fails_what_is_pending_and_the_proxy_exits() {
    let Some(setup) = Setup::new("stdio-kill") else {
        return;
    };
    let setup = Arc::new(setup);
    let hosts: Vec<StdioHost> = (0..HOSTS)
        .map(|_| StdioHost::start(proxy_command(&setup)))
        .collect();
    let answered = Arc::new(AtomicUsize::new(0));
    let runs: Vec<_> = hosts
        .into_iter()
        .map(|mut host| {
            let setup = Arc::clone(&setup);
            let answered = Arc::clone(&answered);
            std::thread::spawn(move || {
                // Results until the kill, then an error for what was
                // pending, then the end of the stream.
                let (mut results, mut errors) = (0, Vec::new());
                for i in 0.. {
                    let kind = Kind::of(i, true);
                    let id = i as u64 + 1;
                    if !host.send(&setup.request(kind, id, i)) {
                        break;
                    }
                    let Some(answer) = host.answer(id) else { break };
                    answered.fetch_add(1, Ordering::SeqCst);
                    match answer.get("error") {
                        None => {
                            check(kind, i, &answer).unwrap();
                            results += 1;
                        }
                        Some(error) => errors.push(error.clone()),
                    }
                }
                let status = common::wait_for(&mut host.child, PATIENCE);
                (results, errors, status)
            })
        })
        .collect();
    // Mid-load: every host has had answers.
    while answered.load(Ordering::SeqCst) < HOSTS * 200 {
        std::thread::sleep(Duration::from_millis(5));
    }
    let killed = common::kill_processes_with(&setup.marker());
    assert_eq!(killed, HOSTS, "one server per proxy");
    let mut pending_failed = 0;
    for run in runs {
        let (results, errors, status) = run.join().unwrap();
        assert!(results > 0);
        assert_ne!(status, 0, "the proxy says its server is gone");
        // At most the one request in flight, answered with an error
        // naming what happened.
        assert!(errors.len() <= 1, "{errors:?}");
        for error in &errors {
            let message = error["message"].as_str().unwrap_or_default();
            assert!(message.contains("before answering"), "{error}");
        }
        pending_failed += errors.len();
    }
    // Eight hosts waiting on a busy server: the kill finds requests pending.
    assert!(pending_failed > 0, "no request was pending at the kill");
    eprintln!(
        "killed {killed} servers under load: {pending_failed} pending requests answered with an error"
    );
    assert_eq!(common::outlived(&setup.marker()), 0, "an orphan");
}

// ---------------------------------------------------------------------------
// streamable HTTP

/// A host's session over HTTP.
struct HttpHost {
    client: reqwest::Client,
    url: String,
    session: String,
}

impl HttpHost {
    async fn start(url: &str) -> HttpHost {
        let client = reqwest::Client::builder()
            .timeout(PATIENCE)
            .build()
            .unwrap();
        let response = client
            .post(url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .body(initialize_request().to_string())
            .send()
            .await
            .unwrap();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .expect("a session id")
            .to_string();
        let mut host = HttpHost {
            client,
            url: url.to_string(),
            session,
        };
        let init = host.read(response, 0).await.unwrap();
        assert!(init.get("result").is_some(), "{init}");
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let status = host.post(&note).await.unwrap().status();
        assert_eq!(status.as_u16(), 202);
        host
    }

    async fn post(&mut self, message: &Value) -> Result<reqwest::Response, String> {
        self.client
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", "2025-11-25")
            .header("Mcp-Session-Id", &self.session)
            .body(message.to_string())
            .send()
            .await
            .map_err(|e| format!("no response: {e}"))
    }

    /// The answer to `id` in `response`: a JSON body, or the event of an
    /// event stream that carries it.
    async fn read(&mut self, response: reqwest::Response, id: u64) -> Result<Value, String> {
        let events = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream"));
        let status = response.status();
        let body = response
            .text()
            .await
            .map_err(|e| format!("the body broke off: {e}"))?;
        let message = if events {
            body.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
                .find(|m| m["id"] == json!(id))
                .ok_or_else(|| format!("no answer to {id} in the stream: {body}"))?
        } else {
            serde_json::from_str(&body).map_err(|e| format!("HTTP {status}: {e}: {body}"))?
        };
        if message["id"] != json!(id) {
            return Err(format!("the answer to another request: {message}"));
        }
        Ok(message)
    }

    async fn request(&mut self, message: &Value, id: u64) -> Result<Value, String> {
        let response = self.post(message).await?;
        self.read(response, id).await
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn eight_http_hosts_through_the_listening_proxy_get_every_answer_right() {
    let Some(setup) = Setup::new("http") else {
        return;
    };
    let setup = Arc::new(setup);
    let n = requests_per_host();
    let server = setup.server_args();
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    let proxy = common::Listening::start(&[RULES], &server);
    let answered = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let (mut tally, took, memory) = runtime().block_on(async {
        let mut hosts = Vec::new();
        for _ in 0..HOSTS {
            hosts.push(HttpHost::start(&proxy.url).await);
        }
        let memory = watch_memory(
            vec![proxy.child.id()],
            Arc::clone(&answered),
            n * HOSTS,
            Arc::clone(&done),
        );
        let began = Instant::now();
        let runs = hosts.into_iter().map(|mut host| {
            let setup = Arc::clone(&setup);
            let answered = Arc::clone(&answered);
            async move {
                let mut tally = Tally::default();
                for i in 0..n {
                    let kind = Kind::of(i, true);
                    let id = i as u64 + 1;
                    let sent = Instant::now();
                    let answer = host.request(&setup.request(kind, id, i), id).await;
                    tally.record(kind, sent.elapsed());
                    answered.fetch_add(1, Ordering::SeqCst);
                    if let Err(e) = answer.and_then(|a| check(kind, i, &a)) {
                        tally.errors.push(e);
                    }
                }
                tally
            }
        });
        let mut tally = Tally::default();
        for one in futures_util::future::join_all(runs).await {
            tally.add(one);
        }
        let took = began.elapsed();
        done.store(true, Ordering::SeqCst);
        (tally, took, memory.join().unwrap())
    });
    report("HTTP", "proxy → server", &mut tally, took, Some(memory));
    assert!(
        tally.errors.is_empty(),
        "{:?}",
        &tally.errors[..tally.errors.len().min(5)]
    );
    assert_eq!(tally.requests(), n * HOSTS);
    assert_flat(memory, 1);
    assert_eq!(proxy.stop().0, 0);
    assert_eq!(common::outlived(&setup.marker()), 0, "an orphan");
}

#[test]
fn servers_killed_under_http_load_fail_what_is_pending_and_the_proxy_goes_on() {
    let Some(setup) = Setup::new("http-kill") else {
        return;
    };
    let setup = Arc::new(setup);
    let server = setup.server_args();
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    let proxy = common::Listening::start(&[RULES], &server);
    let answered = Arc::new(AtomicUsize::new(0));
    let outcomes = runtime().block_on(async {
        let mut hosts = Vec::new();
        for _ in 0..HOSTS {
            hosts.push(HttpHost::start(&proxy.url).await);
        }
        let killer = {
            let answered = Arc::clone(&answered);
            let marker = setup.marker();
            tokio::task::spawn_blocking(move || {
                while answered.load(Ordering::SeqCst) < HOSTS * 200 {
                    std::thread::sleep(Duration::from_millis(5));
                }
                common::kill_processes_with(&marker)
            })
        };
        let runs = hosts.into_iter().map(|mut host| {
            let setup = Arc::clone(&setup);
            let answered = Arc::clone(&answered);
            async move {
                // Results until the kill; then the session's first error.
                let mut results = 0;
                for i in 0.. {
                    let kind = Kind::of(i, true);
                    let id = i as u64 + 1;
                    let answer = host.request(&setup.request(kind, id, i), id).await;
                    answered.fetch_add(1, Ordering::SeqCst);
                    match answer {
                        Ok(a) if a.get("error").is_none() => {
                            check(kind, i, &a).unwrap();
                            results += 1;
                        }
                        other => return (results, other),
                    }
                }
                unreachable!()
            }
        });
        let outcomes = futures_util::future::join_all(runs).await;
        assert_eq!(killer.await.unwrap(), HOSTS, "one server per session");
        outcomes
    });
    for (results, end) in &outcomes {
        assert!(*results > 0);
        // A JSON-RPC error, never a broken connection or a hang.
        let error = end.as_ref().expect("an answer")["error"].clone();
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("before answering")
                || message.contains("exited")
                || message.contains("Session not found")
                || message.contains("ended"),
            "{error}"
        );
    }
    // The proxy goes on: a new session gets a new server and answers.
    let answer = runtime().block_on(async {
        let mut host = HttpHost::start(&proxy.url).await;
        host.request(&setup.request(Kind::Call, 1, 0), 1).await
    });
    check(Kind::Call, 0, &answer.unwrap()).unwrap();
    assert_eq!(proxy.stop().0, 0);
    assert_eq!(common::outlived(&setup.marker()), 0, "an orphan");
}
