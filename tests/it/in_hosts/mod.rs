//! The proxy inside real MCP hosts from npm — Claude Code, Codex CLI,
//! Gemini CLI and opencode — each driven by a scripted model endpoint
//! (`tests/fixtures/hosts/model_endpoint.py`) instead of a model: the host
//! starts `mcp-resolve proxy` in front of the example file server as its
//! configured MCP server, the endpoint asks for one tool call, and the test
//! reads what reached the model, the proxy's audit log and the sandbox.
//! Here, each host in its non-interactive mode; in [`tui`], in its terminal
//! interface under tmux. docs/hosts.md is what these tests show.

use std::path::Path;

use serde_json::{Value, json};

use crate::common;

mod docs;
mod harness;
mod tui;

use harness::*;

const RULES: &str = "examples/file-server/rules/file-server.yaml";

/// How long a host waits for the proxy to start and for a call's answer,
/// in milliseconds; the test gives a host twice that to finish.
const HOST_WAITS_MS: u64 = 120_000;

/// The repository's root (the hosts run in other directories).
fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}
const NOTES: &str = "hello from the sandbox";

/// What the user asks the host.
const PROMPT: &str = "Use the file server's tool.";

/// The tools the rules describe, as the proxy lists them to any host: the
/// same names and descriptions the host put before the model.
fn listed_by_the_rules() -> Vec<(String, String)> {
    let project = mcp_resolve::load(&[repo().join(RULES)]).unwrap();
    let mut tools: Vec<(String, String)> = project.servers[0]
        .tools
        .iter()
        .map(|t| {
            (
                t.name.clone(),
                Value::from(t.description.clone()).to_string(),
            )
        })
        .collect();
    tools.sort();
    tools
}

fn one_record(ran: &Ran) -> &Value {
    assert_eq!(ran.audit.len(), 1, "{:?}", ran.audit);
    &ran.audit[0]
}

/// A read that reached the model: its result quotes the file, the host
/// did not mark it an error, and the proxy forwarded it as the `read`
/// variant.
fn assert_read_reached_the_model(ran: &Ran) {
    let (error, text) = ran.tool_result();
    assert_ne!(error, Some(true), "{text}");
    assert!(text.contains(NOTES), "{text}");
    let record = one_record(ran);
    assert_eq!(record["variant"], "read");
    assert_eq!(record["decision"], "allow");
    assert_eq!(record["outcome"], "forwarded");
}

/// A delete the read-only policy denied: the model got the proxy's
/// refusal, the file is still there, one audit record says `deny`. The
/// text the model got.
fn assert_denied(ran: &Ran) -> String {
    let (_, text) = ran.tool_result();
    assert!(
        text.contains("`manage_files` (variant `delete`) is denied (the policy's default)"),
        "{text}"
    );
    assert!(ran.sandbox.join("notes.txt").exists());
    let record = one_record(ran);
    assert_eq!(record["decision"], "deny");
    assert_eq!(record["variant"], "delete");
    text
}

fn read_call() -> Value {
    json!({"path": "notes.txt", "action": "read"})
}

fn delete_call() -> Value {
    json!({"path": "notes.txt", "action": "delete"})
}

#[test]
fn claude_code_lists_the_proxied_tools_and_a_read_reaches_the_model() {
    let Some(ran) = run(
        "claude-read",
        Scenario::new(Host::ClaudeCode, "manage_files", read_call()),
    ) else {
        return;
    };
    assert_eq!(ran.listed(), listed_by_the_rules());
    assert_read_reached_the_model(&ran);
    assert_eq!(one_record(&ran)["annotations"]["readOnlyHint"], true);
    assert!(
        ran.stdout.contains("\"subtype\":\"success\""),
        "{}",
        ran.stdout
    );
}

#[test]
fn claude_code_shows_the_model_a_policy_refusal_and_the_server_never_sees_the_call() {
    let Some(ran) = run(
        "claude-deny",
        Scenario::new(Host::ClaudeCode, "manage_files", delete_call()).policy("read-only.yaml"),
    ) else {
        return;
    };
    assert_denied(&ran);
    // Claude Code marks the result an error.
    assert_eq!(ran.tool_result().0, Some(true));
}

#[test]
fn claude_code_in_print_mode_asks_for_every_mcp_tool_whatever_its_annotations() {
    // `list_directory` is read-only in the listing; without `--allowedTools`
    // Claude Code still refuses it in print mode, so the proxy never sees it.
    let Some(ran) = run(
        "claude-unallowed",
        Scenario::new(Host::ClaudeCode, "list_directory", json!({"path": "."})).unallowed(),
    ) else {
        return;
    };
    let (error, text) = ran.tool_result();
    assert_eq!(error, Some(true), "{text}");
    assert!(
        text.contains("requested permissions to use mcp__files__list_directory"),
        "{text}"
    );
    assert!(ran.audit.is_empty(), "{:?}", ran.audit);
}

#[test]
fn codex_lists_the_proxied_tools_and_runs_a_read_only_tool_without_approval() {
    let Some(ran) = run(
        "codex-read-only-tool",
        Scenario::new(Host::Codex, "list_directory", json!({"path": "."})).unallowed(),
    ) else {
        return;
    };
    assert_eq!(ran.listed(), listed_by_the_rules());
    let (_, text) = ran.tool_result();
    assert!(text.contains("notes.txt"), "{text}");
    let record = one_record(&ran);
    assert_eq!(record["tool"], "list_directory");
    assert_eq!(record["outcome"], "forwarded");
}

#[test]
fn codex_refuses_a_read_of_a_tool_listed_as_destructive_under_approval_never() {
    // `manage_files` is listed with its worst case (`destructiveHint: true`),
    // which is all Codex reads: it refuses even a read, before the proxy.
    let Some(ran) = run(
        "codex-worst-case",
        Scenario::new(Host::Codex, "manage_files", read_call()).unallowed(),
    ) else {
        return;
    };
    let (_, text) = ran.tool_result();
    assert!(
        text.contains("requires approval, but approval policy is never"),
        "{text}"
    );
    assert!(ran.audit.is_empty(), "{:?}", ran.audit);
}

#[test]
fn codex_with_the_tool_approved_reads_through_the_proxy() {
    let Some(ran) = run(
        "codex-read",
        Scenario::new(Host::Codex, "manage_files", read_call()),
    ) else {
        return;
    };
    assert_read_reached_the_model(&ran);
}

#[test]
fn codex_shows_the_model_a_policy_refusal_and_the_server_never_sees_the_call() {
    let Some(ran) = run(
        "codex-deny",
        Scenario::new(Host::Codex, "manage_files", delete_call()).policy("read-only.yaml"),
    ) else {
        return;
    };
    let text = assert_denied(&ran);
    // Codex shows the model the JSON-RPC error: code, message and data.
    assert!(text.contains("-32001"), "{text}");
}

fn gemini(name: &str, policy: Option<&'static str>, arguments: Value, allow: bool) -> Option<Ran> {
    run(
        name,
        Scenario::new(Host::Gemini, "manage_files", arguments)
            .policy_opt(policy)
            .allowed(allow),
    )
}

#[test]
fn gemini_cli_lists_the_proxied_tools_and_a_read_reaches_the_model() {
    let Some(ran) = gemini("gemini-read", None, read_call(), true) else {
        return;
    };
    // Only the allowed tool is offered, as the proxy lists it.
    let allowed: Vec<_> = listed_by_the_rules()
        .into_iter()
        .filter(|(name, _)| name == "manage_files")
        .collect();
    assert_eq!(ran.listed(), allowed);
    assert_read_reached_the_model(&ran);
}

#[test]
fn gemini_cli_offers_the_model_no_mcp_tool_it_was_not_told_to_allow() {
    // Non-interactive, Gemini CLI leaves out every tool that would need a
    // confirmation, whatever its annotations: the model is never offered
    // the file server's tools, so nothing is called.
    let Some(ran) = gemini("gemini-unallowed", None, read_call(), false) else {
        return;
    };
    assert_eq!(ran.listed(), Vec::<(String, String)>::new());
    assert!(ran.result().is_none());
    assert!(ran.audit.is_empty(), "{:?}", ran.audit);
}

#[test]
fn gemini_cli_shows_the_model_a_policy_refusal_and_the_server_never_sees_the_call() {
    let Some(ran) = gemini("gemini-deny", Some("read-only.yaml"), delete_call(), true) else {
        return;
    };
    assert_denied(&ran);
    assert_eq!(ran.tool_result().0, Some(true));
}

/// A delete under `ask-destructive.yaml` in `host`'s non-interactive mode,
/// where nobody can answer the proxy's question (on stdio, or with
/// `listen` over streamable HTTP): the model is told what happened, the
/// file is still there, and every audit record says `ask`.
fn ask_without_a_user(name: &str, host: Host, listen: bool) {
    let mut s = Scenario::new(host, "manage_files", delete_call()).policy("ask-destructive.yaml");
    if listen {
        s = s.listening();
    }
    let Some(ran) = run(name, s) else {
        return;
    };
    let (error, text) = ran.tool_result();
    let said = match host {
        // Declares elicitation; in print mode it cancels the question.
        Host::ClaudeCode => "was cancelled by the user (policy rule `destructive`)",
        // Declares elicitation; in exec mode it declines.
        Host::Codex => "was declined by the user (policy rule `destructive`)",
        // Neither declares elicitation: refused, with what would allow it.
        Host::Gemini | Host::Opencode => {
            "the host did not declare elicitation to ask for it: use a host that answers \
             elicitation, or allow the call in the policy"
        }
    };
    assert!(text.contains(said), "{text}");
    if matches!(host, Host::ClaudeCode | Host::Gemini) {
        // Codex and opencode do not mark tool errors.
        assert_eq!(error, Some(true), "{text}");
    }
    assert!(ran.sandbox.join("notes.txt").exists());
    assert!(!ran.audit.is_empty());
    assert!(
        ran.audit.iter().all(|r| r["decision"] == "ask"),
        "{:?}",
        ran.audit
    );
    if matches!(host, Host::Gemini | Host::Opencode) {
        assert_eq!(one_record(&ran)["outcome"], "refused");
    }
}

#[test]
fn claude_code_in_print_mode_cancels_the_proxys_question_and_the_call_is_not_made() {
    ask_without_a_user("claude-ask", Host::ClaudeCode, false);
}

#[test]
fn codex_in_exec_mode_declines_the_proxys_question_and_the_call_is_not_made() {
    ask_without_a_user("codex-ask", Host::Codex, false);
}

#[test]
fn gemini_cli_cannot_be_asked_and_the_refusal_says_how_to_allow_the_call() {
    ask_without_a_user("gemini-ask", Host::Gemini, false);
}

#[test]
fn claude_code_over_http_cancels_the_proxys_question_in_print_mode() {
    ask_without_a_user("claude-http-ask", Host::ClaudeCode, true);
}

#[test]
fn codex_over_http_declines_the_proxys_question_in_exec_mode() {
    ask_without_a_user("codex-http-ask", Host::Codex, true);
}

#[test]
fn gemini_cli_over_http_cannot_be_asked_and_is_told_how_to_allow_the_call() {
    ask_without_a_user("gemini-http-ask", Host::Gemini, true);
}

/// A delete the read-only policy denies, the host connected over
/// streamable HTTP.
fn deny_over_http(name: &str, host: Host) {
    let s = Scenario::new(host, "manage_files", delete_call())
        .policy("read-only.yaml")
        .listening();
    if let Some(ran) = run(name, s) {
        assert_denied(&ran);
    }
}

#[test]
fn claude_code_over_http_shows_the_model_a_policy_refusal() {
    deny_over_http("claude-http-deny", Host::ClaudeCode);
}

#[test]
fn codex_over_http_shows_the_model_a_policy_refusal() {
    deny_over_http("codex-http-deny", Host::Codex);
}

#[test]
fn gemini_cli_over_http_shows_the_model_a_policy_refusal() {
    deny_over_http("gemini-http-deny", Host::Gemini);
}

/// A read through `mcp-resolve proxy --listen`, the host connecting over
/// streamable HTTP as to any remote server.
fn read_over_http(name: &str, host: Host) {
    let Some(ran) = run(
        name,
        Scenario::new(host, "manage_files", read_call()).listening(),
    ) else {
        return;
    };
    assert_read_reached_the_model(&ran);
}

#[test]
fn claude_code_reads_through_the_proxy_over_http() {
    read_over_http("claude-http", Host::ClaudeCode);
}

#[test]
fn codex_reads_through_the_proxy_over_http() {
    read_over_http("codex-http", Host::Codex);
}

#[test]
fn gemini_cli_reads_through_the_proxy_over_http() {
    read_over_http("gemini-http", Host::Gemini);
}

#[test]
fn a_call_in_claude_code_reaches_a_real_otlp_receiver_with_its_variant_and_decision() {
    let Some(python) = common::mcp_python("the OTLP receiver (opentelemetry-proto)") else {
        return;
    };
    let dir = common::scratch("in-hosts", "claude-otlp-receiver");
    let receiver = crate::proxy::telemetry::Receiver::start(&python, &dir);
    let otlp = vec![
        "--otlp".to_string(),
        format!("http://127.0.0.1:{}", receiver.port),
    ];
    let Some(ran) = run_with(
        "claude-otlp",
        Scenario::new(Host::ClaudeCode, "manage_files", read_call()),
        &otlp,
    ) else {
        return;
    };
    assert_eq!(one_record(&ran)["variant"], "read");
    // The proxy exported before it exited (its host closed its stdin).
    let records: Vec<serde_json::Map<String, Value>> = receiver
        .received("logs")
        .iter()
        .flat_map(|r| r["resourceLogs"].as_array().cloned().unwrap_or_default())
        .flat_map(|r| r["scopeLogs"].as_array().cloned().unwrap_or_default())
        .flat_map(|s| s["logRecords"].as_array().cloned().unwrap_or_default())
        .map(|record| crate::proxy::telemetry::attributes(&record))
        .filter(|a| a["mcp.method.name"] == "tools/call")
        .collect();
    assert_eq!(records.len(), 1, "{records:#?}");
    assert_eq!(records[0]["gen_ai.tool.name"], "manage_files");
    assert_eq!(records[0]["mcp_resolve.variant"], "read");
    assert_eq!(records[0]["mcp_resolve.decision"], "allow");
    assert_eq!(records[0]["mcp_resolve.outcome"], "forwarded");
}

/// A read in `host` whose server writes `line` to its stderr at start.
fn server_stderr(name: &str, host: Host, line: &'static str) -> Option<Ran> {
    run(
        name,
        Scenario::new(host, "manage_files", read_call()).says(line),
    )
}

#[test]
fn claude_code_keeps_the_servers_stderr_in_its_mcp_log() {
    let line = "file server started (stderr, claude)";
    let Some(ran) = server_stderr("claude-stderr", Host::ClaudeCode, line) else {
        return;
    };
    assert_eq!(one_record(&ran)["variant"], "read");
    // ~/.cache/claude-cli-nodejs/<the directory>/mcp-logs-files/*.jsonl
    let cache = ran.dir.join("home/.cache/claude-cli-nodejs");
    let mut logs = Vec::new();
    for project in std::fs::read_dir(&cache).unwrap() {
        let dir = project.unwrap().path().join("mcp-logs-files");
        for log in std::fs::read_dir(&dir).into_iter().flatten() {
            logs.push(std::fs::read_to_string(log.unwrap().path()).unwrap());
        }
    }
    let said = logs
        .iter()
        .flat_map(|log| log.lines())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .any(|entry| entry["error"] == format!("Server stderr: {line}\n"));
    assert!(said, "{logs:?}");
}

#[test]
fn gemini_cli_shows_the_servers_stderr_in_debug_mode() {
    let line = "file server started (stderr, gemini)";
    let Some(ran) = server_stderr("gemini-stderr", Host::Gemini, line) else {
        return;
    };
    assert_eq!(one_record(&ran)["variant"], "read");
    assert!(
        ran.stderr
            .lines()
            .any(|l| l.contains("[MCP STDERR (files)]") && l.ends_with(line)),
        "{}",
        ran.stderr
    );
}

#[test]
fn opencode_lists_the_proxied_tools_and_a_read_reaches_the_model() {
    let Some(ran) = run(
        "opencode-read",
        Scenario::new(Host::Opencode, "manage_files", read_call()),
    ) else {
        return;
    };
    assert_eq!(ran.listed(), listed_by_the_rules());
    assert_read_reached_the_model(&ran);
}

#[test]
fn opencode_runs_a_tool_listed_destructive_without_asking() {
    // Whatever the annotations, opencode's default permission for an MCP
    // tool is `allow`: without a policy, the delete goes through.
    let Some(ran) = run(
        "opencode-no-policy",
        Scenario::new(Host::Opencode, "manage_files", delete_call()).unallowed(),
    ) else {
        return;
    };
    let (_, text) = ran.tool_result();
    assert!(text.contains("deleted notes.txt"), "{text}");
    assert!(!ran.sandbox.join("notes.txt").exists());
    let record = one_record(&ran);
    assert_eq!(record["annotations"]["destructiveHint"], true);
    assert_eq!(record["outcome"], "forwarded");
}

#[test]
fn opencode_shows_the_model_a_policy_refusal_and_the_server_never_sees_the_call() {
    let Some(ran) = run(
        "opencode-deny",
        Scenario::new(Host::Opencode, "manage_files", delete_call()).policy("read-only.yaml"),
    ) else {
        return;
    };
    let text = assert_denied(&ran);
    // opencode shows the model the JSON-RPC error's code and message.
    assert!(text.starts_with("MCP error -32001: "), "{text}");
}

#[test]
fn opencode_cannot_be_asked_and_the_refusal_says_how_to_allow_the_call() {
    ask_without_a_user("opencode-ask", Host::Opencode, false);
}

#[test]
fn opencode_reads_through_the_proxy_over_http() {
    read_over_http("opencode-http", Host::Opencode);
}

#[test]
fn opencode_over_http_shows_the_model_a_policy_refusal() {
    deny_over_http("opencode-http-deny", Host::Opencode);
}

#[test]
fn opencode_over_http_cannot_be_asked_and_is_told_how_to_allow_the_call() {
    ask_without_a_user("opencode-http-ask", Host::Opencode, true);
}
