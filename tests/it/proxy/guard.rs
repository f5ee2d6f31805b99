//! Policies, questions to the user, pins and the audit log.

use super::*;

#[test]
fn the_policy_allows_denies_and_asks_and_every_call_is_audited() {
    let dir = common::scratch("proxy", "guard");
    let audit = dir.join("audit.jsonl");
    let mut proxy = Proxy::start(
        &[
            "rules/file-server.yaml",
            "--no-probe",
            "--policy",
            &fixture("guard-policy.yaml"),
            "--audit",
            audit.to_str().unwrap(),
            "--audit-arguments",
        ],
        &["python3", fake_server().to_str().unwrap(), "well"],
    );
    let mut capabilities = declaring();
    capabilities["elicitation"] = json!({});
    proxy.initialize(capabilities);
    let call = |action: &str| json!({"name": "manage_files", "arguments": {"path": "notes.txt", "action": action, "content": "x"}});

    // allow: forwarded, answered by the server.
    let answer = proxy.request(1, "tools/call", call("read"));
    assert!(answer["result"].is_object(), "{answer}");

    // deny: never forwarded; the error names the rule and the variant.
    let answer = proxy.request(2, "tools/call", call("delete"));
    assert_eq!(answer["error"]["code"], -32001, "{answer}");
    assert_eq!(answer["error"]["data"]["rule"], "no-overwrites", "{answer}");
    assert_eq!(answer["error"]["data"]["variant"], "overwrite", "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`manage_files` (variant `overwrite`) is denied"),
        "{message}"
    );

    // ask: the user is asked through elicitation; accept forwards the call.
    let mut ask = |id: i64, action: Value| {
        proxy.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": call("append")}),
        );
        let question = proxy.receive();
        assert_eq!(question["method"], "elicitation/create", "{question}");
        let text = question["params"]["message"].as_str().unwrap();
        assert!(
            text.contains("`manage_files` (variant `append`)")
                && text.contains("destructiveHint: false"),
            "{text}"
        );
        proxy.send(&json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": action}}));
        let answer = proxy.receive();
        assert_eq!(answer["id"], id, "{answer}");
        answer
    };
    let accepted = ask(3, json!("accept"));
    assert!(accepted["result"].is_object(), "{accepted}");
    let declined = ask(4, json!("decline"));
    assert_eq!(declined["error"]["code"], -32001, "{declined}");
    assert!(
        declined["error"]["message"]
            .as_str()
            .unwrap()
            .contains("declined by the user")
    );
    let cancelled = ask(5, json!("cancel"));
    assert!(
        cancelled["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cancelled")
    );

    // Arguments the rules' inputSchema refuses never reach the server.
    let answer = proxy.request(
        6,
        "tools/call",
        json!({"name": "manage_files", "arguments": {"path": "a", "action": "rename"}}),
    );
    assert_eq!(answer["result"]["isError"], true, "{answer}");

    // A resolution is audited too.
    let answer = proxy.request(7, "tools/resolve", call("read"));
    assert!(answer["result"]["annotations"].is_object(), "{answer}");
    // A call whose question is still open when the host leaves is audited too.
    proxy.send(
        &json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": call("append")}),
    );
    assert_eq!(proxy.receive()["method"], "elicitation/create");
    let (status, stderr) = proxy.finish();
    assert_eq!(status, 0, "{stderr:?}");

    let lines = audit_lines(&audit);
    let summary: Vec<(String, String, String)> = lines
        .iter()
        .map(|l| {
            let text = |k: &str| l[k].as_str().unwrap_or("-").to_string();
            (text("event"), text("variant"), text("outcome"))
        })
        .collect();
    let expected = [
        ("call", "read", "forwarded"),
        ("call", "overwrite", "denied"),
        ("call", "append", "accepted"),
        ("call", "append", "declined"),
        ("call", "append", "cancelled"),
        ("call", "-", "invalid"),
        ("resolve", "read", "-"),
        ("call", "append", "unasked"),
    ];
    assert_eq!(
        summary,
        expected
            .iter()
            .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
            .collect::<Vec<_>>(),
        "{lines:#?}"
    );
    assert_eq!(lines[0]["rule"], "reads");
    assert!(lines[0]["upstreamMs"].as_f64().is_some(), "{}", lines[0]);
    assert_eq!(lines[0]["arguments"]["action"], "read");
    assert_eq!(lines[1]["rule"], "no-overwrites");
    assert!(lines[1]["upstreamMs"].is_null());
    assert_eq!(lines[2]["decision"], "ask");
    assert!(
        lines[2]["rule"].is_null(),
        "the default decided: {}",
        lines[2]
    );
    assert_eq!(lines[0]["annotations"]["readOnlyHint"], true);
    assert!(lines[0]["time"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn a_host_without_elicitation_is_refused_what_the_policy_would_ask() {
    let dir = common::scratch("proxy", "guard-no-elicitation");
    let audit = dir.join("audit.jsonl");
    let mut proxy = Proxy::start(
        &[
            "rules/file-server.yaml",
            "--no-probe",
            "--policy",
            &fixture("guard-policy.yaml"),
            "--audit",
            audit.to_str().unwrap(),
        ],
        &["python3", fake_server().to_str().unwrap(), "well"],
    );
    proxy.initialize(declaring());
    let answer = proxy.request(
        1,
        "tools/call",
        json!({"name": "manage_files", "arguments": {"path": "n", "action": "append", "content": "x"}}),
    );
    assert_eq!(answer["error"]["code"], -32001, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("did not declare elicitation"), "{message}");
    let (status, _) = proxy.finish();
    assert_eq!(status, 0);
    let lines = audit_lines(&audit);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["outcome"], "refused");
    assert!(
        lines[0].get("arguments").is_none(),
        "arguments only with --audit-arguments"
    );
}

#[test]
fn a_question_the_user_leaves_unanswered_is_given_up_after_the_ask_timeout() {
    let dir = common::scratch("proxy", "guard-ask-timeout");
    let audit = dir.join("audit.jsonl");
    let mut proxy = Proxy::start(
        &[
            "rules/file-server.yaml",
            "--no-probe",
            "--policy",
            &fixture("guard-policy.yaml"),
            "--ask-timeout",
            "1",
            "--audit",
            audit.to_str().unwrap(),
        ],
        &["python3", fake_server().to_str().unwrap(), "well"],
    );
    let mut capabilities = declaring();
    capabilities["elicitation"] = json!({});
    proxy.initialize(capabilities);
    let append = json!({"name": "manage_files", "arguments": {"path": "n", "action": "append", "content": "x"}});
    proxy.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": append}));
    let question = proxy.receive();
    assert_eq!(question["method"], "elicitation/create", "{question}");
    // Nobody answers: the question is withdrawn, the call refused.
    let withdrawn = proxy.receive();
    assert_eq!(
        withdrawn["method"], "notifications/cancelled",
        "{withdrawn}"
    );
    assert_eq!(
        withdrawn["params"]["requestId"], question["id"],
        "{withdrawn}"
    );
    let refused = proxy.receive();
    assert_eq!(refused["id"], 1, "{refused}");
    assert_eq!(refused["error"]["code"], -32001, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("--ask-timeout"), "{message}");
    // A late answer goes nowhere: the next message is the next answer.
    proxy.send(&json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept"}}));
    let read = json!({"name": "manage_files", "arguments": {"path": "n", "action": "read"}});
    let answer = proxy.request(2, "tools/call", read);
    assert!(answer["result"].is_object(), "{answer}");
    let (status, stderr) = proxy.finish();
    assert_eq!(status, 0, "{stderr:?}");
    let outcomes: Vec<Value> = audit_lines(&audit)
        .iter()
        .map(|l| l["outcome"].clone())
        .collect();
    assert_eq!(outcomes, [json!("timed out"), json!("forwarded")]);
}

#[test]
fn a_policy_with_mistakes_stops_the_proxy_before_the_server_starts() {
    let dir = common::scratch("proxy", "guard-bad-policy");
    let policy = dir.join("policy.yaml");
    std::fs::write(
        &policy,
        "version: 1\ndefault: allow\nrules:\n  - name: r\n    when: { readOnlyHnt: true }\n    decision: alow\n",
    )
    .unwrap();
    let pidfile = dir.join("pid");
    let output = common::bin()
        .args([
            "proxy",
            "rules/file-server.yaml",
            "--no-probe",
            "--policy",
            policy.to_str().unwrap(),
        ])
        .args([
            "--",
            "python3",
            fake_server().to_str().unwrap(),
            "well",
            pidfile.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("policy.yaml:5:"), "{stderr}");
    assert!(stderr.contains("did you mean `readOnlyHint`?"), "{stderr}");
    assert!(stderr.contains("did you mean `allow`?"), "{stderr}");
    assert!(!pidfile.exists(), "the server was started");
}

#[test]
fn a_pinned_signature_withholds_what_a_lying_server_changes() {
    let dir = common::scratch("proxy", "pin-liar");
    let audit = dir.join("audit.jsonl");
    let mut proxy = Proxy::start(
        &[
            &fixture("fake-rules.yaml"),
            "--no-probe",
            "--pin",
            &fixture("fake-signature.json"),
            "--audit",
            audit.to_str().unwrap(),
        ],
        &["python3", fake_server().to_str().unwrap(), "liar"],
    );
    proxy.initialize(declaring());
    let listed = proxy.request(1, "tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "{listed}");
    assert_eq!(tools[0]["_meta"][EXTENSION]["resolvable"], true, "{listed}");
    let read = json!({"name": "manage_files", "arguments": {"path": "a", "action": "read"}});
    let answer = proxy.request(2, "tools/call", read.clone());
    assert!(answer["result"].is_object(), "{answer}");
    // The server announces a new list: another description, an unpinned
    // tool. The proxy reads the list itself before the host hears of it, so
    // a host that calls at once, without listing, is judged by the new list.
    let changed = proxy.receive();
    assert_eq!(
        changed["method"], "notifications/tools/list_changed",
        "{changed}"
    );
    let answer = proxy.request(3, "tools/call", read);
    assert_eq!(answer["error"]["code"], -32001, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`manage_files` is withheld") && message.contains("`description`"),
        "{message}"
    );
    let listed = proxy.request(4, "tools/list", json!({}));
    assert_eq!(
        listed["result"]["tools"],
        json!([]),
        "nothing unpinned is listed: {listed}"
    );
    let answer = proxy.request(
        5,
        "tools/call",
        json!({"name": "exfiltrate", "arguments": {}}),
    );
    assert_eq!(answer["error"]["code"], -32001, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`exfiltrate`"),
        "{answer}"
    );
    // A withheld tool is not resolved either: refused as its call is.
    let resolved = proxy.request(
        6,
        "tools/resolve",
        json!({"name": "manage_files", "arguments": {"path": "a", "action": "append"}}),
    );
    assert_eq!(resolved["error"]["code"], -32001, "{resolved}");
    let message = resolved["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`manage_files` is withheld")
            && message.ends_with("(mcp-resolve proxy --pin)"),
        "{message}"
    );
    assert_eq!(resolved["error"]["data"]["pinned"], false, "{resolved}");
    let (status, stderr) = proxy.finish();
    assert_eq!(status, 0, "{stderr:?}");
    assert!(
        stderr
            .iter()
            .any(|l| l.contains("`exfiltrate` is withheld from the host")),
        "{stderr:?}"
    );
    let outcomes: Vec<Value> = audit_lines(&audit)
        .iter()
        .map(|l| l["outcome"].clone())
        .collect();
    assert_eq!(
        outcomes,
        [
            json!("forwarded"),
            json!("not pinned"),
            json!("not pinned"),
            Value::Null
        ]
    );
}

#[test]
fn a_tampered_or_foreign_pin_stops_the_proxy_before_the_server_starts() {
    let dir = common::scratch("proxy", "pin-tampered");
    let pidfile = dir.join("pid");
    let mut document: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("fake-signature.json")).unwrap())
            .unwrap();
    document["tools"][0]["annotations"]["destructiveHint"] = json!(false);
    let tampered = dir.join("tampered.json");
    std::fs::write(&tampered, document.to_string()).unwrap();
    for (rules, pin, expected) in [
        (
            fixture("fake-rules.yaml"),
            tampered.to_str().unwrap().to_string(),
            "fingerprint",
        ),
        (
            "rules/file-server.yaml".to_string(),
            fixture("fake-signature.json"),
            "review the change",
        ),
    ] {
        let output = common::bin()
            .args(["proxy", &rules, "--no-probe", "--pin", &pin])
            .args([
                "--",
                "python3",
                fake_server().to_str().unwrap(),
                "well",
                pidfile.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(expected), "{stderr}");
        assert!(!pidfile.exists(), "the server was started");
    }
}

#[test]
fn the_python_sdk_host_is_asked_before_destructive_calls_and_sees_only_pinned_tools() {
    let Some(python) = common::mcp_python("the Python SDK behind the guard") else {
        return;
    };
    // Legacy: the proxy sends `elicitation/create` and holds the call.
    // 2026-07-28: the proxy answers `input_required`, the SDK retries.
    for mode in ["legacy", "2026-07-28"] {
        let dir = common::scratch("proxy", &format!("guard-sdk-{mode}"));
        let audit = dir.join("audit.jsonl");
        let output = std::process::Command::new(&python)
            .arg(fixture("sdk_guard.py"))
            .arg(env!("CARGO_BIN_EXE_mcp-resolve"))
            .arg("docs/policies/ask-destructive.yaml")
            .arg(&audit)
            .arg(mode)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        println!("{mode}: {stdout}");
        assert!(
            output.status.success() && stdout.contains("ok every call is in the audit log"),
            "the Python SDK host failed behind the guard ({mode}):\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn no_audit_line_is_lost_when_the_proxy_is_stopped_under_load() {
    // SIGTERM and SIGINT end the proxy with 1; the host closing its side
    // ends it with 0. Either way every call in flight gets its line.
    for (stop, expected) in [("term", 1), ("int", 1), ("close", 0)] {
        let dir = common::scratch("proxy", &format!("guard-stop-{stop}"));
        let audit = dir.join("audit.jsonl");
        let mut proxy = Proxy::start(
            &[
                "rules/file-server.yaml",
                "--no-probe",
                "--audit",
                audit.to_str().unwrap(),
            ],
            &["python3", fake_server().to_str().unwrap(), "slow"],
        );
        proxy.initialize(declaring());
        // Twenty calls in flight (the server answers each two seconds late),
        // and twenty resolutions answered at once.
        for id in 1..=20 {
            proxy.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "manage_files", "arguments": {"path": "a", "action": "read"}}}));
            proxy.send(
                &json!({"jsonrpc": "2.0", "id": 100 + id, "method": "tools/resolve",
                "params": {"name": "manage_files", "arguments": {"path": "a", "action": "read"},
                           "_meta": {"io.modelcontextprotocol/clientCapabilities": declaring()}}}),
            );
        }
        // Every resolution is answered (a call's answer may come in between,
        // when the machine is slow).
        let mut resolved = 0;
        while resolved < 20 {
            let answer = proxy.receive();
            if answer["id"].as_i64().unwrap() > 100 {
                assert!(answer["result"].is_object(), "{answer}");
                resolved += 1;
            }
        }
        let pid = rustix::process::Pid::from_raw(proxy.child.id() as i32).unwrap();
        match stop {
            "term" => rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap(),
            "int" => rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap(),
            _ => drop(proxy.stdin.take()),
        }
        let status = common::wait_for(&mut proxy.child, Duration::from_secs(30));
        assert_eq!(status, expected, "stopped by {stop}");
        let lines = audit_lines(&audit);
        let count = |event: &str, outcome: Option<&str>| {
            lines
                .iter()
                .filter(|l| l["event"] == event && outcome.is_none_or(|o| l["outcome"] == o))
                .count()
        };
        assert_eq!(count("resolve", None), 20, "{stop}: {lines:#?}");
        assert_eq!(
            count("call", Some("forwarded")) + count("call", Some("unanswered")),
            20,
            "{stop}: {lines:#?}"
        );
        assert_eq!(lines.len(), 40, "{stop}");
    }
}

#[test]
fn a_host_that_stops_reading_does_not_keep_the_proxy_from_stopping() {
    // The server writes without end; the host reads nothing, so the proxy's
    // writes to it block, with a message of the host's waiting behind them.
    // SIGTERM still ends the proxy, and its server with it.
    let dir = common::scratch("proxy", "stuck-host");
    let pids = dir.join("pids");
    let mut proxy = common::bin()
        .args(["proxy", "rules/file-server.yaml", "--no-probe", "--"])
        .args(["python3", fake_server().to_str().unwrap(), "flood"])
        .arg(&pids)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = common::lines_of(proxy.stderr.take().unwrap());
    let mut stdin = proxy.stdin.take().unwrap();
    started(&pids);
    // The pipe to the host filling (past half: the flood fills the rest at
    // once; a line is written whole or waits, so a full pipe holds less
    // than its size): the proxy's writes to it block.
    let out = proxy.stdout.as_ref().unwrap();
    let full = rustix::pipe::fcntl_getpipe_size(out).unwrap() as u64 / 2;
    let since = std::time::Instant::now();
    while rustix::io::ioctl_fionread(out).unwrap() < full {
        assert!(
            since.elapsed() < Duration::from_secs(30),
            "the pipe did not fill"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let resolve = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/resolve",
        "params": {"name": "manage_files", "arguments": {"path": "a", "action": "read"}}});
    writeln!(stdin, "{resolve}").unwrap();
    stdin.flush().unwrap();
    // Most often the host's thread has read the request by then and waits
    // to answer it; either way the proxy must stop.
    std::thread::sleep(Duration::from_millis(200));
    let pid = rustix::process::Pid::from_raw(proxy.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let status = common::wait_for(&mut proxy, Duration::from_secs(30));
    assert_eq!(status, 1);
    let said: Vec<String> = stderr.try_iter().collect();
    let server = std::fs::read_to_string(&pids).unwrap();
    let started = std::time::Instant::now();
    while alive(&server) {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the server outlived the proxy: {said:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(stdin);
}

#[test]
fn the_pin_is_checked_against_the_servers_listing_at_start() {
    let dir = common::scratch("proxy", "pin-start");
    let pin = dir.join("file-server.signature.json");
    let output = common::bin()
        .args([
            "signature",
            "rules/file-server.yaml",
            "-o",
            pin.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    // The fake server lists `manage_files` with another description than
    // these rules (and so the pin) give it.
    let mut proxy = Proxy::start(
        &["rules/file-server.yaml", "--pin", pin.to_str().unwrap()],
        &["python3", fake_server().to_str().unwrap(), "well"],
    );
    // Checked on the host's own first listing.
    proxy.initialize(declaring());
    proxy.request(1, "tools/list", json!({}));
    let (status, stderr) = proxy.finish();
    assert_eq!(status, 0, "{stderr:?}");
    assert!(
        stderr
            .iter()
            .any(|l| l.contains("`manage_files` is withheld from the host")
                && l.contains("description")),
        "{stderr:?}"
    );
}
