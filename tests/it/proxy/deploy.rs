//! A real deployment: three proxy instances (`--listen`) behind HAProxy —
//! round robin for 2026-07-28 requests, stickiness on `Mcp-Session-Id` for
//! `initialize` sessions — sharing a state key and Redis, in front of the
//! example rmcp server; HAProxy and Redis from Debian's packages, started
//! and stopped by the test on loopback.

use super::*;

/// HAProxy in front of `backends`, on a free loopback port, stopped when
/// dropped.
struct Haproxy {
    child: Child,
    addr: String,
}

impl Haproxy {
    fn start(binary: &Path, dir: &Path, backends: &[String]) -> Haproxy {
        // A free port: bound, let go, and given to HAProxy; another process
        // taking it in between makes HAProxy exit at once, and another port
        // is tried.
        for _ in 0..5 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let config = dir.join("haproxy.cfg");
            std::fs::write(&config, config_text(port, backends)).unwrap();
            let mut child = std::process::Command::new(binary)
                .arg("-db")
                .arg("-f")
                .arg(&config)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::inherit())
                .spawn()
                .unwrap();
            let addr = format!("127.0.0.1:{port}");
            let start = std::time::Instant::now();
            while start.elapsed() < Duration::from_secs(30) {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                if std::net::TcpStream::connect(&addr).is_ok() {
                    return Haproxy { child, addr };
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("HAProxy did not start");
    }
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The configuration docs/deploy.md shows
/// (`tests/fixtures/deploy/haproxy.cfg`), on `port`, with `backends`.
fn config_text(port: u16, backends: &[String]) -> String {
    let servers: String = backends
        .iter()
        .enumerate()
        .map(|(i, backend)| {
            format!("    server proxy{i} {backend} check inter 300ms fall 1 rise 2\n")
        })
        .collect();
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/deploy/haproxy.cfg"),
    )
    .unwrap()
    .replace("@PORT@", &port.to_string())
    .replace("@SERVERS@\n", &servers)
}

/// One 2026-07-28 request's JSON-RPC answer through `addr` (`None`: a clean
/// HTTP failure, such as 502 from the load balancer).
fn post(addr: &str, id: i64, params: Value, session: Option<&str>) -> (u16, Option<Value>) {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    let modern = super::http::modern_headers(&body.to_string());
    let mut headers = vec![
        ("Accept", "application/json, text/event-stream"),
        ("Content-Type", "application/json"),
    ];
    headers.extend(modern.iter().map(|(n, v)| (*n, v.as_str())));
    if let Some(session) = session {
        headers.push(("Mcp-Session-Id", session));
    }
    let (status, _, text) = super::http::http_at(addr, "POST", "/mcp", &headers, &body.to_string());
    (status, json_or_event(&text))
}

/// The JSON-RPC message of a body: JSON, or the last `data:` of an event
/// stream.
fn json_or_event(text: &str) -> Option<Value> {
    serde_json::from_str(text.trim()).ok().or_else(|| {
        text.lines()
            .rev()
            .filter_map(|l| l.strip_prefix("data:"))
            .find_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
    })
}

fn call(action: &str, extra: Value) -> Value {
    super::instances::stateless_call(action, extra)
}

fn outcomes(audit: &Path) -> Vec<String> {
    super::instances::outcomes(audit)
}

#[test]
fn three_instances_behind_haproxy_share_questions_and_survive_a_lost_instance() {
    let Some(haproxy) = common::component("MCP_RESOLVE_HAPROXY", "the deployment test") else {
        return;
    };
    let Some(server) = super::example::file_server() else {
        return;
    };
    let Some((dir, key, mut redis)) = super::instances::with_redis("deploy") else {
        return;
    };
    let files = dir.join("files");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::write(files.join("a"), "hello").unwrap();
    let marker = files.to_str().unwrap().to_string();
    let audits: Vec<PathBuf> = (0..3)
        .map(|i| dir.join(format!("audit{i}.jsonl")))
        .collect();
    let mut instances: Vec<common::Listening> = audits
        .iter()
        .map(|audit| {
            common::Listening::start(
                &[
                    "rules/file-server.yaml",
                    "--policy",
                    "docs/policies/ask-destructive.yaml",
                    "--state-key-file",
                    key.to_str().unwrap(),
                    "--redis",
                    &redis.url(),
                    "--audit",
                    audit.to_str().unwrap(),
                ],
                &[server.to_str().unwrap(), "--root", &marker],
            )
        })
        .collect();
    let backends: Vec<String> = instances.iter().map(|p| p.addr.clone()).collect();
    let lb = Haproxy::start(&haproxy, &dir, &backends);
    let addr = lb.addr.clone();

    // An ask: the question from one instance, the answer through the next
    // (round robin), the replay refused by the third through Redis.
    let (status, asked) = post(&addr, 1, call("delete", json!({})), None);
    let asked = asked.unwrap_or_else(|| panic!("status {status}"));
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let retry = call(
        "delete",
        json!({"requestState": asked["result"]["requestState"],
               "inputResponses": {"mcp-resolve/confirm": {"action": "accept"}}}),
    );
    let (_, done) = post(&addr, 2, retry.clone(), None);
    let done = done.unwrap();
    assert!(done["result"]["content"].is_array(), "{done}");
    let (_, replayed) = post(&addr, 3, retry, None);
    let replayed = replayed.unwrap();
    assert!(
        replayed["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("used already"),
        "{replayed}"
    );
    let per_instance: Vec<Vec<String>> = audits.iter().map(|a| outcomes(a)).collect();
    assert_eq!(
        per_instance.iter().filter(|o| *o == &["asked"]).count()
            + per_instance.iter().filter(|o| *o == &["accepted"]).count()
            + per_instance.iter().filter(|o| *o == &["replayed"]).count(),
        3,
        "one step on each instance: {per_instance:?}"
    );

    // An `initialize` session sticks to its instance through the balancer.
    let (status, headers, body) = super::http::http_at(
        &addr,
        "POST",
        "/mcp",
        &[
            ("Accept", "application/json, text/event-stream"),
            ("Content-Type", "application/json"),
        ],
        &super::http::initialize_body(1),
    );
    assert_eq!(status, 200, "{body}");
    let session = headers
        .iter()
        .find(|(n, _)| n == "mcp-session-id")
        .map(|(_, v)| v.clone())
        .unwrap();
    for id in 2..8 {
        let (status, answer) = post(
            &addr,
            id,
            json!({"name": "manage_files", "arguments": {"path": "a", "action": "read"}}),
            Some(&session),
        );
        let answer = answer.unwrap_or_else(|| panic!("status {status}"));
        assert!(answer["result"]["content"].is_array(), "{answer}");
    }

    // Load from 8 hosts; one instance killed (SIGKILL) in the middle.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let hosts: Vec<_> = (0..8)
        .map(|h| {
            let (addr, stop) = (addr.clone(), std::sync::Arc::clone(&stop));
            std::thread::spawn(move || {
                let (mut answered, mut failed, mut last_ok) = (0u32, 0u32, false);
                let mut id = 1_000_000 * h;
                // Bounded by time after the stop, not by a count: how many
                // calls fit in the load phase depends on the machine.
                let mut deadline: Option<std::time::Instant> = None;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) || !last_ok {
                    id += 1;
                    let (status, answer) = post(&addr, id, call("read", json!({})), None);
                    match answer {
                        Some(answer) if answer["result"]["content"].is_array() => {
                            answered += 1;
                            last_ok = true;
                        }
                        // A clean failure: an HTTP error, the connection
                        // closed before the answer (the instance killed
                        // mid-request), or a JSON-RPC error; never a
                        // malformed answer.
                        other => {
                            assert!(
                                other.as_ref().is_none_or(|a| a["error"].is_object()),
                                "neither an answer nor a clean error ({status}): {other:?}"
                            );
                            failed += 1;
                            last_ok = false;
                        }
                    }
                    if stop.load(std::sync::atomic::Ordering::Relaxed) {
                        let at = *deadline.get_or_insert_with(|| {
                            std::time::Instant::now() + Duration::from_secs(60)
                        });
                        assert!(
                            std::time::Instant::now() < at,
                            "host {h} did not recover within 60 s of the stop"
                        );
                    }
                }
                (answered, failed)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let killed = instances.remove(1);
    let pid = killed.child.id();
    let _ = rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid as i32).unwrap(),
        rustix::process::Signal::KILL,
    );
    std::thread::sleep(Duration::from_millis(1500));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut answered = 0;
    for host in hosts {
        let (ok, _failed) = host.join().unwrap();
        answered += ok;
    }
    drop(killed);
    assert!(answered > 0);
    // Every answered call has its audit line (written before the answer).
    let forwarded: usize = audits
        .iter()
        .map(|a| outcomes(a).iter().filter(|o| *o == "forwarded").count())
        .sum();
    assert!(
        forwarded >= answered as usize + 6,
        "{forwarded} audit lines for {answered} answers"
    );

    // Redis stops: asks fail closed, the rest goes on.
    let (_, asked) = post(&addr, 9001, call("delete", json!({})), None);
    let asked = asked.unwrap();
    redis.stop();
    let (_, refused) = post(
        &addr,
        9002,
        call(
            "delete",
            json!({"requestState": asked["result"]["requestState"],
                   "inputResponses": {"mcp-resolve/confirm": {"action": "accept"}}}),
        ),
        None,
    );
    let refused = refused.unwrap();
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("did not answer"),
        "{refused}"
    );
    for id in 9003..9006 {
        let (status, answer) = post(&addr, id, call("read", json!({})), None);
        let answer = answer.unwrap_or_else(|| panic!("status {status}"));
        assert!(answer["result"]["content"].is_array(), "{answer}");
    }

    drop(lb);
    for instance in instances {
        let (status, stderr) = instance.stop();
        assert_eq!(status, 0, "{stderr:?}");
    }
    // No server outlives its instance, the killed one's included.
    assert_eq!(common::outlived(&marker), 0, "a server outlived its proxy");
}
