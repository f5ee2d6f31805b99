//! Cedar policies in the proxy, checked against Cedar's own engine as the
//! Cedar team ships it prebuilt (`@cedar-policy/cedar-wasm`, the same 4.x
//! release line as the `cedar-policy` crate the proxy decides with; driven
//! by `tests/fixtures/proxy/cedar_wasm.mjs`): it validates the same policies
//! against the schema `mcp-resolve policy schema` writes, and authorizes the
//! same requests; its decisions and determining policies equal the proxy's.

use super::*;
use mcp_resolve_policy::cedar::{Engine, Source};
use mcp_resolve_policy::{Call, Decision, SessionFacts};

const BASE: &str = r#"// What reads and appends may do.
@id("reads")
permit(principal, action, resource) when { context.resolution.readOnlyHint };

@id("ask-appends")
@ask("appends to a file")
permit(principal, action == FileServer::Action::"manage_files", resource)
when { context.resolution has variant && context.resolution.variant == "append" };
"#;

const GUARD: &str = r#"@id("no-secrets")
forbid(principal, action, resource) when { context.input.path like "secrets/*" };

permit(principal == FileServer::User::"ci", action == FileServer::Action::"manage_files", resource)
when {
  context.resolution has variant && context.resolution.variant == "overwrite"
  && context.input.path like "tmp/*"
  && context.session has clientName && context.session.clientName == "proxy-test"
};
"#;

/// Cedar's engine from npm (`cedar_wasm.mjs` beside the TypeScript
/// client's packages), copied there once for every test of this binary.
fn cedar_engine(test: &str) -> Option<PathBuf> {
    static SCRIPT: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    let script = SCRIPT.get_or_init(|| ts_script("cedar_wasm.mjs")).clone()?;
    assert!(
        script
            .with_file_name("node_modules/@cedar-policy/cedar-wasm")
            .is_dir(),
        "{test}: {} has no @cedar-policy/cedar-wasm (scripts/install-ts-client.sh installs it)",
        script.display()
    );
    Some(script)
}

/// Cedar's validation of `policies` against `schema`.
fn cedar_validate(cedar: &Path, schema: &Path, policies: &Path) -> std::process::Output {
    std::process::Command::new("node")
        .arg(cedar)
        .arg("validate")
        .arg(schema)
        .arg(policies)
        .output()
        .unwrap()
}

/// Cedar's decision and its determining policies' ids for each call
/// (`{"request", "entities"}`), in one run of the engine.
fn cedar_authorize(cedar: &Path, dir: &Path, calls: &[Value]) -> Vec<(bool, Vec<String>)> {
    let calls_file = dir.join("calls.jsonl");
    let lines: Vec<String> = calls.iter().map(Value::to_string).collect();
    std::fs::write(&calls_file, lines.join("\n")).unwrap();
    let output = std::process::Command::new("node")
        .arg(cedar)
        .arg("authorize")
        .arg(dir.join("schema.cedarschema"))
        .arg(dir.join("all.cedar"))
        .arg(&calls_file)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "Cedar refused the calls: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .zip(calls)
        .map(|(line, call)| {
            let answer: Value = serde_json::from_str(line).unwrap();
            assert_eq!(answer["errors"], json!([]), "{call}");
            let reasons = answer["reasons"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_str().unwrap().to_string())
                .collect();
            (answer["decision"] == "allow", reasons)
        })
        .collect()
}

#[test]
fn the_proxy_decides_with_cedar_and_cedars_own_engine_agrees_on_every_call() {
    let Some(cedar) = cedar_engine("the Cedar cross-check") else {
        return;
    };
    let dir = common::scratch("proxy", "cedar");
    let policies = dir.join("policies");
    std::fs::create_dir_all(&policies).unwrap();
    std::fs::write(policies.join("a-base.cedar"), BASE).unwrap();
    std::fs::write(policies.join("b-guard.cedar"), GUARD).unwrap();
    // Cedar reads one text: the two in name order, numbered as the proxy
    // numbers them.
    std::fs::write(dir.join("all.cedar"), format!("{BASE}{GUARD}")).unwrap();

    // The schema, from the command, and Cedar validates the policies
    // against it.
    let schema = dir.join("schema.cedarschema");
    let status = common::bin()
        .args(["policy", "schema", "rules/file-server.yaml", "-o"])
        .arg(&schema)
        .status()
        .unwrap();
    assert!(status.success());
    let validated = cedar_validate(&cedar, &schema, &dir.join("all.cedar"));
    assert!(
        validated.status.success(),
        "{}{}",
        String::from_utf8_lossy(&validated.stdout),
        String::from_utf8_lossy(&validated.stderr)
    );

    let audit = dir.join("audit.jsonl");
    let mut proxy = Proxy::start(
        &[
            "rules/file-server.yaml",
            "--no-probe",
            "--policy",
            policies.to_str().unwrap(),
            "--principal",
            "User::\"ci\"",
            "--audit",
            audit.to_str().unwrap(),
            "--audit-arguments",
        ],
        &["python3", fake_server().to_str().unwrap(), "well"],
    );
    let mut capabilities = declaring();
    capabilities["elicitation"] = json!({});
    proxy.initialize(capabilities);
    let call = |action: &str, path: &str| json!({"name": "manage_files", "arguments": {"path": path, "action": action, "content": "x"}});
    // allow, by `reads`.
    let answer = proxy.request(1, "tools/call", call("read", "notes.txt"));
    assert!(answer["result"].is_object(), "{answer}");
    // deny, by a forbid that reads the arguments.
    let answer = proxy.request(2, "tools/call", call("read", "secrets/key"));
    assert_eq!(answer["error"]["code"], -32001, "{answer}");
    assert_eq!(answer["error"]["data"]["policies"], json!(["no-secrets"]));
    // ask, by `@ask`: accepted.
    proxy.send(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call("append", "notes.txt")}),
    );
    let question = proxy.receive();
    assert_eq!(question["method"], "elicitation/create", "{question}");
    proxy.send(&json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept"}}));
    assert!(proxy.receive()["result"].is_object());
    // allow, by a policy named by its place, for the principal and client.
    let answer = proxy.request(4, "tools/call", call("replace", "tmp/x"));
    assert!(answer["result"].is_object(), "{answer}");
    // deny: nothing permits.
    let answer = proxy.request(5, "tools/call", call("delete", "notes.txt"));
    assert_eq!(answer["error"]["code"], -32001, "{answer}");
    let (status, stderr) = proxy.finish();
    assert_eq!(status, 0, "{stderr:?}");

    let lines = audit_lines(&audit);
    // A policy without `@id` is named by its file, as given, and line.
    let base = policies.join("a-base.cedar").display().to_string();
    let guard = policies.join("b-guard.cedar").display().to_string();
    let decisions: Vec<(&str, Value)> = lines
        .iter()
        .map(|l| (l["decision"].as_str().unwrap(), l["policies"].clone()))
        .collect();
    assert_eq!(
        decisions,
        [
            ("allow", json!(["reads"])),
            ("deny", json!(["no-secrets"])),
            ("ask", json!(["ask-appends"])),
            ("allow", json!([format!("{guard}:4")])),
            ("deny", json!([])),
        ]
        .to_vec(),
        "{lines:#?}"
    );

    // Cedar decides each audited call, from the request the proxy made.
    let project = mcp_resolve::load(&["rules/file-server.yaml".into()]).unwrap();
    let server = project.single_server().unwrap();
    let sources = [
        Source {
            file: mcp_resolve::source::FileId(0),
            name: &base,
            text: BASE,
        },
        Source {
            file: mcp_resolve::source::FileId(1),
            name: &guard,
            text: GUARD,
        },
    ];
    let engine = Engine::load(server, &sources, Some("User::\"ci\"")).unwrap();
    let matcher =
        mcp_resolve::matcher::compile(server, mcp_resolve_runtime::Dialect::Extension).unwrap();
    let session = SessionFacts {
        protocol_version: Some("2025-11-25".into()),
        client_name: Some("proxy-test".into()),
    };
    let names: Vec<String> = engine.policies().iter().map(|n| n.name.clone()).collect();
    // The audited calls, then calls the proxy was not sent: every action
    // on paths each policy treats differently, for the configured
    // principal and for a token's.
    let mut cases: Vec<(Value, Option<&str>, Option<Value>)> = lines
        .iter()
        .map(|l| (l["arguments"].clone(), None, Some(l.clone())))
        .collect();
    for action in ["read", "append", "replace", "delete"] {
        for path in ["notes.txt", "secrets/key", "tmp/x", "tmp/secrets/y"] {
            for sub in [None, Some("ci"), Some("bob")] {
                cases.push((json!({"path": path, "action": action}), sub, None));
            }
        }
    }
    // Ours for each case, and the request Cedar is asked (all at once).
    let mut decided = Vec::new();
    for (arguments, sub, line) in &cases {
        let token = sub.map(|sub| mcp_resolve_policy::Principal {
            sub: Some(sub.into()),
            client_id: Some("host".into()),
            ..Default::default()
        });
        let outcome = matcher.outcome("manage_files", arguments).unwrap().unwrap();
        let resolution = outcome.resolution();
        let call = Call {
            tool: "manage_files",
            arguments: Some(arguments),
            variant: resolution.variant.as_deref(),
            annotations: &resolution.annotations,
            scopes: &resolution.required_scopes,
            described: true,
            principal: token.as_ref(),
            session: Some(&session),
        };
        let ours = engine.decide(&call);
        if let Some(line) = line {
            assert_eq!(ours.decision.as_str(), line["decision"], "{line}");
            assert_eq!(json!(ours.policies), line["policies"], "{line}");
        }
        let (request, entities) = engine.cli_request(&call).unwrap();
        decided.push((ours, json!({"request": request, "entities": entities})));
    }
    let calls: Vec<Value> = decided.iter().map(|(_, call)| call.clone()).collect();
    let answers = cedar_authorize(&cedar, &dir, &calls);
    assert_eq!(answers.len(), cases.len());
    for (((arguments, sub, _), (ours, call)), (allow, reasons)) in
        cases.iter().zip(decided).zip(answers)
    {
        let request = &call["request"];
        assert_eq!(
            allow,
            ours.decision != Decision::Deny,
            "{arguments} {sub:?}\n{request}"
        );
        // Cedar names the policies of one text `policyN`, in order.
        let mut reasons: Vec<String> = reasons
            .into_iter()
            .map(|r| {
                r.strip_prefix("policy")
                    .and_then(|n| n.parse::<usize>().ok())
                    .map_or(r.clone(), |n| names[n].clone())
            })
            .collect();
        reasons.sort();
        let mut ours = ours.policies;
        ours.sort();
        assert_eq!(reasons, ours, "{arguments} {sub:?}");
    }
    assert_eq!(cases.len(), 5 + 48);
}

#[test]
fn a_policy_that_does_not_validate_stops_the_proxy_and_cedar_refuses_it_too() {
    let dir = common::scratch("proxy", "cedar-invalid");
    let bad = dir.join("bad.cedar");
    std::fs::write(
        &bad,
        "@id(\"typo\")\npermit(principal, action, resource)\n  when { context.resolution.readOnlyHnt };\n",
    )
    .unwrap();
    let output = common::bin()
        .args(["proxy", "rules/file-server.yaml", "--no-probe", "--policy"])
        .arg(&bad)
        .args(["--", "python3", "-c", "import sys; sys.exit(3)"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("bad.cedar:3:10") && stderr.contains("did you mean `readOnlyHint`?"),
        "{stderr}"
    );
    // The same from `policy check`, for CI, and the good policy passes.
    let check = common::bin()
        .args(["policy", "check"])
        .arg(&bad)
        .arg("rules/file-server.yaml")
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(1));
    let good = dir.join("good.cedar");
    std::fs::write(&good, BASE).unwrap();
    let check = common::bin()
        .args(["policy", "check"])
        .arg(&good)
        .arg("rules/file-server.yaml")
        .output()
        .unwrap();
    assert!(check.status.success(), "{check:?}");
    assert!(String::from_utf8_lossy(&check.stderr).contains("ok: 2 policies valid"));
    // A principal outside the schema is a usage mistake too.
    let output = common::bin()
        .args(["policy", "check"])
        .arg(&good)
        .args(["rules/file-server.yaml", "--principal", "Admin::\"x\""])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));

    let Some(cedar) = cedar_engine("Cedar's validation") else {
        return;
    };
    let schema = dir.join("schema.cedarschema");
    assert!(
        common::bin()
            .args(["policy", "schema", "rules/file-server.yaml", "-o"])
            .arg(&schema)
            .status()
            .unwrap()
            .success()
    );
    let validate = |policies: &Path| cedar_validate(&cedar, &schema, policies);
    let refused = validate(&bad);
    assert!(!refused.status.success());
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&refused.stdout),
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(said.contains("readOnlyHnt"), "{said}");
    assert!(validate(&good).status.success());
}

#[test]
fn every_bundled_yaml_policy_translates_to_cedar_that_cedar_validates() {
    let Some(cedar) = cedar_engine("Cedar's validation of translated policies") else {
        return;
    };
    let dir = common::scratch("proxy", "cedar-translate");
    for rules in ["rules/file-server.yaml", "rules/coding-agent.yaml"] {
        let schema = dir.join("schema.cedarschema");
        assert!(
            common::bin()
                .args(["policy", "schema", rules, "-o"])
                .arg(&schema)
                .status()
                .unwrap()
                .success()
        );
        for policy in [
            "docs/policies/read-only.yaml",
            "docs/policies/ask-destructive.yaml",
            "docs/policies/no-open-world-writes.yaml",
        ] {
            let translated = common::bin()
                .args(["policy", "translate", policy, rules])
                .output()
                .unwrap();
            assert!(translated.status.success(), "{translated:?}");
            let file = dir.join("translated.cedar");
            std::fs::write(&file, &translated.stdout).unwrap();
            let validated = cedar_validate(&cedar, &schema, &file);
            assert!(
                validated.status.success(),
                "{policy} on {rules}: {}{}",
                String::from_utf8_lossy(&validated.stdout),
                String::from_utf8_lossy(&validated.stderr)
            );
        }
    }
}

#[test]
fn committed_cedar_schemas_are_up_to_date_and_the_same_in_every_process() {
    for path in common::bundled_rules() {
        let stem = path.file_stem().unwrap().to_str().unwrap();
        let run = || {
            common::bin()
                .args(["policy", "schema"])
                .arg(&path)
                .output()
                .unwrap()
        };
        let (a, b) = (run(), run());
        assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
        assert_eq!(a.stdout, b.stdout, "{}", path.display());
        common::expect_file(
            &Path::new("generated").join(format!("{stem}.cedarschema")),
            &String::from_utf8(a.stdout).unwrap(),
        );
    }
}

#[test]
fn the_example_cedar_policies_validate_in_the_command_and_in_cedar() {
    let examples = [
        ("docs/policies/file-server.cedar", "rules/file-server.yaml"),
        (
            "docs/policies/coding-agent.cedar",
            "rules/coding-agent.yaml",
        ),
    ];
    for (policy, rules) in examples {
        let check = common::bin()
            .args(["policy", "check", policy, rules])
            .output()
            .unwrap();
        assert!(check.status.success(), "{policy}: {check:?}");
        let explain = common::bin()
            .args(["policy", "explain", policy, rules])
            .output()
            .unwrap();
        assert!(explain.status.success(), "{policy}: {explain:?}");
    }
    // The coding agent's decisions, variant by variant.
    let explain = common::bin()
        .args([
            "policy",
            "explain",
            "docs/policies/coding-agent.cedar",
            "rules/coding-agent.yaml",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(explain.stdout).unwrap();
    for line in [
        "start_coding_agent  dry-run        allow (reads)",
        "start_coding_agent  execute        depends on arguments: deny or ask (`destructive-only-as-dry-run` reads context.input.dryRun)",
        "agent_status        (static)       allow (reads)",
    ] {
        assert!(text.contains(line), "{line}\nnot in\n{text}");
    }
    let Some(cedar) = cedar_engine("Cedar's validation of the example policies") else {
        return;
    };
    for (policy, rules) in examples {
        let stem = Path::new(rules).file_stem().unwrap().to_str().unwrap();
        let validated = cedar_validate(
            &cedar,
            &Path::new("generated").join(format!("{stem}.cedarschema")),
            Path::new(policy),
        );
        assert!(
            validated.status.success(),
            "{policy}: {}{}",
            String::from_utf8_lossy(&validated.stdout),
            String::from_utf8_lossy(&validated.stderr)
        );
    }
}

#[test]
fn the_policy_commands_refuse_bad_input_with_a_clear_error() {
    let dir = common::scratch("proxy", "cedar-bad-input");
    let run = |args: &[&str]| {
        let output = common::bin().args(args).output().unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).to_string(),
        )
    };
    let rules = "rules/file-server.yaml";
    // A file that is not there, a directory without policies.
    let missing = dir.join("missing.cedar");
    let (code, stderr) = run(&["policy", "check", missing.to_str().unwrap(), rules]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("cannot read"), "{stderr}");
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, stderr) = run(&["policy", "check", empty.to_str().unwrap(), rules]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("holds no `.cedar` file"), "{stderr}");
    // Not UTF-8; not Cedar; a YAML policy with mistakes.
    let binary = dir.join("binary.cedar");
    std::fs::write(&binary, [0xff, 0xfe, 0x00, 0x80]).unwrap();
    let (code, stderr) = run(&["policy", "check", binary.to_str().unwrap(), rules]);
    assert!(matches!(code, Some(1 | 2)), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let garbage = dir.join("garbage.cedar");
    std::fs::write(
        &garbage,
        "permit(principal, action, resource) when { ((( };\n@@@",
    )
    .unwrap();
    let (code, stderr) = run(&["policy", "check", garbage.to_str().unwrap(), rules]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("error[syntax]"), "{stderr}");
    let yaml = dir.join("bad.yaml");
    std::fs::write(&yaml, "version: 1\ndefault: maybe\n").unwrap();
    for command in ["check", "translate", "explain"] {
        let (code, stderr) = run(&["policy", command, yaml.to_str().unwrap(), rules]);
        assert_eq!(code, Some(1), "{command}: {stderr}");
        assert!(stderr.contains("not `maybe`"), "{command}: {stderr}");
    }
    // Rules with errors: no schema.
    let (code, _) = run(&[
        "policy",
        "schema",
        "tests/fixtures/invalid/trust-labels.yaml",
    ]);
    assert_eq!(code, Some(1));
    // `--principal` belongs to `--policy`.
    let (code, stderr) = run(&["proxy", rules, "--principal", "User::\"a\"", "--", "true"]);
    assert_eq!(code, Some(2), "{stderr}");
}
