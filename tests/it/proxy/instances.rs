//! Several proxy instances, one service: a 2026-07-28 question asked by one
//! instance is checked by any other holding the same state key
//! (`--state-key-file`); a state sealed with another key, changed by the
//! host, or used already is refused with a clear error and an audit line;
//! with a shared Redis (`--redis`), "used already" holds across instances.

use super::*;

/// A 2026-07-28 `tools/call` of `manage_files` with `action`, from a host
/// that can be asked.
pub(super) fn stateless_call(action: &str, extra: Value) -> Value {
    let mut params = json!({"name": "manage_files", "arguments": {"path": "a", "action": action},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}});
    if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
        params.extend(extra);
    }
    params
}

/// A proxy in front of the test server in `mode`, with `args`.
fn start_with(args: &[String], mode: &str) -> Proxy {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Proxy::start(&args, &["python3", fake_server().to_str().unwrap(), mode])
}

/// The asking policy's arguments, then `more`.
fn asking(more: &[&str]) -> Vec<String> {
    [
        "rules/file-server.yaml",
        "--no-probe",
        "--policy",
        "docs/policies/ask-destructive.yaml",
    ]
    .iter()
    .chain(more)
    .map(ToString::to_string)
    .collect()
}

/// A proxy with the asking policy, `keys` as its state keys, and an audit
/// log at `audit`.
fn instance(keys: &[&Path], audit: &Path) -> Proxy {
    let mut args = asking(&["--audit", audit.to_str().unwrap()]);
    for key in keys {
        args.push("--state-key-file".into());
        args.push(key.display().to_string());
    }
    start_with(&args, "well")
}

pub(super) fn keygen(dir: &Path, name: &str) -> PathBuf {
    let output = common::bin()
        .args(["keygen", "--state", "-o"])
        .arg(dir.join(name))
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let path = dir.join(format!("{name}.key"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the key is private");
    }
    path
}

pub(super) fn outcomes(audit: &Path) -> Vec<String> {
    std::fs::read_to_string(audit)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["outcome"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

#[test]
fn a_question_asked_by_one_instance_is_answered_through_another() {
    let dir = common::scratch("proxy", "instances");
    let key = keygen(&dir, "shared");
    let other_key = keygen(&dir, "other");
    // `keygen` leaves an existing key alone.
    let again = common::bin()
        .args(["keygen", "--state", "-o"])
        .arg(dir.join("shared"))
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2), "{again:?}");

    let (audit_a, audit_b, audit_c) = (
        dir.join("a.jsonl"),
        dir.join("b.jsonl"),
        dir.join("c.jsonl"),
    );
    let mut a = instance(&[&key], &audit_a);
    // B reads with the shared key after a rotation to a new one.
    let mut b = instance(&[&other_key, &key], &audit_b);
    let mut c = instance(&[&other_key], &audit_c);

    // A asks; the state says nothing of the call in the clear.
    let asked = a.request(1, "tools/call", stateless_call("delete", json!({})));
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let state = asked["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        state.starts_with("mcp-resolve.v1.") && !state.contains("delete"),
        "{state}"
    );

    // The host's retry lands on B, which never saw the question: forwarded.
    let retry = stateless_call(
        "delete",
        json!({"requestState": state, "inputResponses": {"mcp-resolve/confirm": {"action": "accept"}}}),
    );
    let done = b.request(2, "tools/call", retry.clone());
    let text = done["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.starts_with("called "), "{done}");
    assert!(
        !text.contains("requestState") && !text.contains("mcp-resolve/confirm"),
        "{text}"
    );

    // Replayed to B: used already.
    let replayed = b.request(3, "tools/call", retry.clone());
    assert_eq!(replayed["error"]["code"], -32001, "{replayed}");
    assert!(
        replayed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("used already"),
        "{replayed}"
    );
    // C holds another key: foreign.
    let foreign = c.request(4, "tools/call", retry.clone());
    assert!(
        foreign["error"]["message"]
            .as_str()
            .unwrap()
            .contains("does not hold"),
        "{foreign}"
    );
    // Changed by the host: tampered.
    let mut changed = retry.clone();
    let flipped = if state.ends_with('A') { "B" } else { "A" };
    changed["requestState"] = json!(format!("{}{flipped}", &state[..state.len() - 1]));
    let tampered = a.request(5, "tools/call", changed);
    assert!(
        tampered["error"]["message"]
            .as_str()
            .unwrap()
            .contains("changed"),
        "{tampered}"
    );
    // Bound to its call: the same state with other arguments is refused.
    let fresh = a.request(6, "tools/call", stateless_call("delete", json!({})));
    let other_call = stateless_call(
        "replace",
        json!({"requestState": fresh["result"]["requestState"],
               "inputResponses": {"mcp-resolve/confirm": {"action": "accept"}}}),
    );
    let refused = b.request(7, "tools/call", other_call);
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("another call"),
        "{refused}"
    );

    for proxy in [a, b, c] {
        let (status, stderr) = proxy.finish();
        assert_eq!(status, 0, "{stderr:?}");
    }
    assert_eq!(outcomes(&audit_a), ["asked", "tampered", "asked"]);
    assert_eq!(outcomes(&audit_b), ["accepted", "replayed", "unconfirmed"]);
    assert_eq!(outcomes(&audit_c), ["foreign"]);
}

#[test]
fn a_bad_state_key_stops_the_proxy_before_the_server_starts() {
    let dir = common::scratch("proxy", "instances-bad-key");
    let bad = dir.join("bad.key");
    std::fs::write(&bad, "not a key\n").unwrap();
    for (key, expected) in [
        (
            bad.clone(),
            "is not 32 bytes written as 64 hexadecimal digits",
        ),
        (dir.join("missing.key"), "cannot read the state key"),
    ] {
        let output = common::bin()
            .args([
                "proxy",
                "rules/file-server.yaml",
                "--no-probe",
                "--state-key-file",
            ])
            .arg(&key)
            .args([
                "--",
                "python3",
                "-c",
                "raise SystemExit('the server was started')",
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(expected), "{stderr}");
        assert!(!stderr.contains("the server was started"), "{stderr}");
    }
}

/// A Redis of the test's own, on a Unix socket in `dir` (no TCP port, no
/// persistence); stopped when dropped.
pub(super) struct Redis {
    child: Child,
    socket: PathBuf,
}

impl Redis {
    pub(super) fn start(server: &Path, dir: &Path) -> Redis {
        let socket = dir.join("redis.sock");
        let _ = std::fs::remove_file(&socket);
        let child = std::process::Command::new(server)
            .args([
                "--port",
                "0",
                "--save",
                "",
                "--appendonly",
                "no",
                "--unixsocketperm",
                "700",
            ])
            .arg("--unixsocket")
            .arg(&socket)
            .arg("--dir")
            .arg(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let redis = Redis { child, socket };
        // Ready when it answers PING on its socket.
        let start = std::time::Instant::now();
        loop {
            if redis.ping() {
                return redis;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "redis-server did not answer on {}",
                redis.socket.display()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[cfg(unix)]
    fn ping(&self) -> bool {
        use std::io::Read;
        let Ok(mut stream) = std::os::unix::net::UnixStream::connect(&self.socket) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let mut answer = [0u8; 7];
        stream.write_all(b"PING\r\n").is_ok()
            && stream.read_exact(&mut answer).is_ok()
            && &answer == b"+PONG\r\n"
    }

    pub(super) fn url(&self) -> String {
        format!("redis+unix://{}", self.socket.display())
    }

    pub(super) fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A scratch directory for `test`, a state key in it, and a Redis of the
/// test's own (`None`: redis-server is not installed, outside CI).
pub(super) fn with_redis(test: &str) -> Option<(PathBuf, PathBuf, Redis)> {
    let server = common::component("MCP_RESOLVE_REDIS", test)?;
    let dir = common::scratch("proxy", test);
    let key = keygen(&dir, "shared");
    let redis = Redis::start(&server, &dir);
    Some((dir, key, redis))
}

/// With `--redis`, "used once" holds across instances: a retry replayed to
/// another instance is refused there; with Redis stopped, asks fail closed
/// and everything else goes on.
#[test]
fn with_redis_a_state_is_used_once_by_all_instances() {
    let Some((dir, key, mut redis)) = with_redis("instances-redis") else {
        return;
    };
    let start = |audit: &Path| {
        let args = asking(&[
            "--state-key-file",
            key.to_str().unwrap(),
            "--redis",
            &redis.url(),
            "--audit",
            audit.to_str().unwrap(),
        ]);
        start_with(&args, "well")
    };
    let (audit_a, audit_b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    let (mut a, mut b) = (start(&audit_a), start(&audit_b));
    let accept = |state: &Value| {
        stateless_call(
            "delete",
            json!({"requestState": state, "inputResponses": {"mcp-resolve/confirm": {"action": "accept"}}}),
        )
    };
    // Asked by A, answered through B.
    let asked = a.request(1, "tools/call", stateless_call("delete", json!({})));
    let retry = accept(&asked["result"]["requestState"]);
    let done = b.request(2, "tools/call", retry.clone());
    assert!(done["result"]["content"].is_array(), "{done}");
    // Replayed to A, which never saw it used: Redis says it was.
    let replayed = a.request(3, "tools/call", retry);
    assert!(
        replayed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("used already"),
        "{replayed}"
    );

    // Redis stops: a new question is still asked (nothing to check yet),
    // its retry is refused (fail closed), and a call the policy allows goes
    // on as before.
    let asked = a.request(4, "tools/call", stateless_call("delete", json!({})));
    redis.stop();
    let refused = b.request(5, "tools/call", accept(&asked["result"]["requestState"]));
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("did not answer"),
        "{refused}"
    );
    let read = b.request(6, "tools/call", stateless_call("read", json!({})));
    assert!(read["result"]["content"].is_array(), "{read}");

    let (status, stderr) = b.finish();
    assert_eq!(status, 0, "{stderr:?}");
    assert!(
        stderr
            .iter()
            .any(|l| l.contains("the shared store") && l.contains("did not answer")),
        "{stderr:#?}"
    );
    let (status, stderr) = a.finish();
    assert_eq!(status, 0, "{stderr:?}");
    assert_eq!(outcomes(&audit_a), ["asked", "replayed", "asked"]);
    assert_eq!(outcomes(&audit_b), ["accepted", "unavailable", "forwarded"]);
}

/// With a pin and Redis, each tool's first listing is the instances': a
/// server behind one instance that lists a tool changed from what another
/// instance's server listed first is caught; Redis gone, the pin withholds
/// what it cannot check (fail closed).
#[test]
fn with_redis_the_pin_compares_every_instance_with_the_first_listing() {
    let Some((_, key, mut redis)) = with_redis("instances-pin") else {
        return;
    };
    let start = |mode: &str| {
        let args = [
            &fixture("fake-rules.yaml"),
            "--no-probe",
            "--pin",
            &fixture("fake-signature.json"),
            "--state-key-file",
            key.to_str().unwrap(),
            "--redis",
            &redis.url(),
        ]
        .map(ToString::to_string);
        start_with(&args, mode)
    };
    let listed = |proxy: &mut Proxy, id: i64| {
        let answer = proxy.request(id, "tools/list", json!({}));
        answer["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let (mut first, mut changed) = (start("well"), start("changed"));
    first.initialize(declaring());
    changed.initialize(declaring());
    assert_eq!(listed(&mut first, 1), ["manage_files"]);
    // The second instance's server lists the tool with another description:
    // withheld, though this instance never saw the first listing itself.
    assert!(listed(&mut changed, 1).is_empty());
    let read = json!({"name": "manage_files", "arguments": {"path": "a", "action": "read"}});
    let answer = changed.request(2, "tools/call", read.clone());
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("withheld") && message.contains("`description`"),
        "{answer}"
    );
    // The first instance is unaffected.
    assert!(first.request(2, "tools/call", read).get("result").is_some());
    // Redis gone: what cannot be checked is withheld.
    redis.stop();
    assert!(listed(&mut first, 3).is_empty());
    for proxy in [first, changed] {
        let (status, stderr) = proxy.finish();
        assert_eq!(status, 0, "{stderr:?}");
    }
}
