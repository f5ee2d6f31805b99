//! The proxy inside real MCP hosts from npm — Claude Code, Codex CLI,
//! Gemini CLI and opencode — each driven by a scripted model endpoint
//! (`tests/fixtures/hosts/model_endpoint.py`) instead of a model: the host
//! starts `mcp-resolve proxy` in front of the example file server as its
//! configured MCP server, the endpoint asks for one tool call, and the test
//! reads what reached the model, the proxy's audit log and the sandbox.
//! Here, each host in its non-interactive mode; in [`tui`], in its terminal
//! interface under tmux. docs/hosts.md is what these tests show.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::common;

mod docs;
mod tui;

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

/// The hosts under test and how each is configured and run.
#[derive(Clone, Copy, Debug)]
enum Host {
    /// `claude -p` (Claude Code in print mode).
    ClaudeCode,
    /// `codex exec` (Codex CLI, non-interactive).
    Codex,
    /// `gemini -p` (Gemini CLI, non-interactive).
    Gemini,
    /// `opencode run` (opencode, non-interactive).
    Opencode,
}

/// One run: which host, the proxy's policy, the call the model asks for,
/// and what the host is told to allow.
struct Scenario {
    host: Host,
    /// A policy of docs/policies, or none.
    policy: Option<&'static str>,
    tool: &'static str,
    arguments: Value,
    /// The host connects to `mcp-resolve proxy --listen` over streamable
    /// HTTP instead of starting the proxy on stdio.
    listen: bool,
    /// A line the server writes to its stderr when it starts (the proxy
    /// passes it on to its own), and the host asked to show server logs.
    server_says: Option<&'static str>,
    /// Claude Code: `--allowedTools mcp__files`. Codex: the tool's
    /// `approval_mode = "approve"`. Gemini CLI: `--allowed-tools
    /// mcp_files_TOOL`.
    allow: bool,
}

impl Scenario {
    /// `host` asked for `tool` with `arguments`, allowed to call it, the
    /// proxy on stdio without a policy.
    fn new(host: Host, tool: &'static str, arguments: Value) -> Scenario {
        Scenario {
            host,
            policy: None,
            tool,
            arguments,
            listen: false,
            server_says: None,
            allow: true,
        }
    }

    fn policy(self, policy: &'static str) -> Scenario {
        self.policy_opt(Some(policy))
    }

    fn policy_opt(mut self, policy: Option<&'static str>) -> Scenario {
        self.policy = policy;
        self
    }

    fn listening(mut self) -> Scenario {
        self.listen = true;
        self
    }

    fn says(mut self, line: &'static str) -> Scenario {
        self.server_says = Some(line);
        self
    }

    fn allowed(mut self, allow: bool) -> Scenario {
        self.allow = allow;
        self
    }

    fn unallowed(self) -> Scenario {
        self.allowed(false)
    }
}

/// What a run left behind.
struct Ran {
    /// Every request the host sent the model endpoint.
    requests: Vec<Value>,
    /// The proxy's audit records.
    audit: Vec<Value>,
    /// The host's standard output (its JSON event stream).
    stdout: String,
    /// The host's standard error.
    stderr: String,
    /// The test's directory (the hosts' homes are in it).
    dir: PathBuf,
    sandbox: PathBuf,
}

impl Ran {
    /// The last tool result the model was sent: whether the host marked it
    /// an error (Claude Code marks them; Codex does not), and its text.
    fn result(&self) -> Option<(Option<bool>, String)> {
        // The latest request that carries one: a host may send others
        // after it (titles, summaries, memories) that carry none.
        self.requests
            .iter()
            .rev()
            .find_map(|request| Ran::result_in(&request["body"]))
    }

    /// The tool result `body` ends with, in whichever API it is written.
    fn result_in(body: &Value) -> Option<(Option<bool>, String)> {
        if let Some(messages) = body["messages"].as_array() {
            let last = messages.last()?;
            if last["role"] == "tool" {
                // Chat Completions: the tool's message, unmarked.
                let text = match &last["content"] {
                    Value::String(s) => s.clone(),
                    Value::Array(parts) => {
                        parts.iter().filter_map(|p| p["text"].as_str()).collect()
                    }
                    other => other.to_string(),
                };
                return Some((None, text));
            }
            let content = last["content"].as_array()?;
            // The last: Claude Code sends the result of its own tool that
            // waits for MCP servers beside the script's in one message.
            let block = content.iter().rev().find(|b| b["type"] == "tool_result")?;
            let text = match &block["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
                other => other.to_string(),
            };
            return Some((block["is_error"].as_bool(), text));
        }
        if let Some(contents) = body["contents"].as_array() {
            let parts = contents.last()?["parts"].as_array()?;
            let response =
                parts.iter().find_map(|p| p.get("functionResponse"))?["response"].clone();
            let error = response.get("error").is_some();
            let text = match response.get("error").or(response.get("output")) {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => response.to_string(),
            };
            return Some((Some(error), text));
        }
        let output = body["input"]
            .as_array()?
            .iter()
            .rev()
            .find(|i| i["type"] == "function_call_output")?;
        let text = match &output["output"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
            other => other.to_string(),
        };
        Some((None, text))
    }

    /// [`Ran::result`], or the test fails with what the host printed and
    /// what it asked the model.
    fn tool_result(&self) -> (Option<bool>, String) {
        self.result().unwrap_or_else(|| {
            let asked: Vec<String> = self
                .requests
                .iter()
                .map(|r| format!("{} {}", r["path"], r["body"].to_string().len()))
                .collect();
            panic!(
                "no tool result reached the model\nrequests: {asked:?}\nstdout: {}\nstderr: {}",
                self.stdout, self.stderr
            )
        })
    }

    /// The tools of the file server the host listed to the model, by the
    /// names the server gave them, with their descriptions.
    fn listed(&self) -> Vec<(String, String)> {
        // The first request that offers tools (opencode asks for a title
        // first, offering none).
        let offers = |r: &&Value| r["body"]["tools"].as_array().is_some_and(|t| !t.is_empty());
        let Some(first) = self.requests.iter().find(offers) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let tools = first["body"]["tools"].as_array().into_iter().flatten();
        // Gemini's tools come in groups of function declarations.
        let declared = tools.clone().flat_map(|group| {
            group["functionDeclarations"]
                .as_array()
                .into_iter()
                .flatten()
        });
        for tool in declared {
            let name = tool["name"].as_str().unwrap_or_default();
            if let Some(bare) = name.strip_prefix("mcp_files_") {
                out.push((bare.to_string(), tool["description"].to_string()));
            }
        }
        for tool in tools {
            let name = tool["name"].as_str().unwrap_or_default();
            if let Some(bare) = name.strip_prefix("mcp__files__") {
                out.push((bare.to_string(), tool["description"].to_string()));
            }
            // Chat Completions: `{"type": "function", "function": {…}}`.
            let function = &tool["function"];
            if let Some(bare) = function["name"]
                .as_str()
                .and_then(|n| n.strip_prefix("files_"))
            {
                out.push((bare.to_string(), function["description"].to_string()));
            }
            if tool["type"] == "namespace" && name == "mcp__files" {
                for inner in tool["tools"].as_array().into_iter().flatten() {
                    out.push((
                        inner["name"].as_str().unwrap_or_default().to_string(),
                        inner["description"].to_string(),
                    ));
                }
            }
        }
        out.sort();
        out
    }
}

/// The scripted endpoint, killed when dropped.
struct Endpoint {
    child: Child,
    url: String,
    log: PathBuf,
}

impl Endpoint {
    fn start(dir: &Path, tool: &str, arguments: &Value) -> Endpoint {
        let log = dir.join("model-requests.jsonl");
        let script = repo().join("tests/fixtures/hosts/model_endpoint.py");
        let mut child = Command::new("python3")
            .arg(script)
            .args(["--tool", tool, "--arguments", &arguments.to_string()])
            .arg("--log")
            .arg(&log)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        if let Some(out) = child.stdout.take() {
            let _ = BufReader::new(out).read_line(&mut line);
        }
        let Some(url) = line.trim().strip_prefix("listening on ") else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the model endpoint did not start: {line:?}");
        };
        Endpoint {
            url: url.to_string(),
            child,
            log,
        }
    }

    fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .filter(|r: &Value| r["body"].is_object())
            .collect()
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The hosts' install directory (scripts/install-hosts.sh) and the
/// example server, or `None` (a failure under CI).
fn setup(test: &str) -> Option<(PathBuf, PathBuf)> {
    let hosts = common::component("MCP_RESOLVE_HOSTS", test)?;
    let server = crate::ts_host::rust_server(test)?;
    Some((hosts, server))
}

/// What a host printed, and how it exited.
struct Exited {
    /// Its exit code; `None` when a signal ended it.
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// The host's output once it exits; killed, and the test failed with what
/// it printed, if it runs past twice [`HOST_WAITS_MS`].
fn finish(host: Host, mut child: Child) -> Exited {
    let stdout = common::lines_of(child.stdout.take().unwrap());
    let stderr = common::lines_of(child.stderr.take().unwrap());
    let limit = std::time::Duration::from_millis(2 * HOST_WAITS_MS);
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let collect = |lines: std::sync::mpsc::Receiver<String>| {
        let mut text = String::new();
        while let Ok(line) = lines.recv_timeout(std::time::Duration::from_secs(5)) {
            text.push_str(&line);
            text.push('\n');
        }
        text
    };
    let (stdout, stderr) = (collect(stdout), collect(stderr));
    let Some(status) = status else {
        panic!("{host:?} ran past {limit:?}\nstdout: {stdout}\nstderr: {stderr}");
    };
    Exited {
        code: status.code(),
        stdout,
        stderr,
    }
}

/// The proxy's command line as the host is configured to start it.
fn proxy_command(s: &Scenario, dir: &Path, sandbox: &Path, server: &Path) -> Vec<String> {
    let mut args = vec![
        env!("CARGO_BIN_EXE_mcp-resolve").to_string(),
        "proxy".into(),
        repo().join(RULES).display().to_string(),
    ];
    if let Some(policy) = s.policy {
        args.push("--policy".into());
        let path = repo().join("docs/policies").join(policy);
        args.push(path.display().to_string());
    }
    args.push("--audit".into());
    args.push(dir.join("audit.jsonl").display().to_string());
    if s.listen {
        args.extend(["--listen".into(), "127.0.0.1:0".into()]);
    }
    args.push("--".into());
    if let Some(line) = s.server_says {
        args.extend(["sh".into(), "-c".into()]);
        args.push(format!("echo '{line}' >&2; exec \"$0\" \"$@\""));
    }
    args.push(server.display().to_string());
    args.push("--root".into());
    args.push(sandbox.display().to_string());
    args
}

/// Claude Code's entry for the proxy (`mcpServers.files`): over stdio its
/// command line `proxy`, or over HTTP its `url`. docs/hosts.md shows the
/// same ([`docs`] holds it).
fn claude_code_server(proxy: &[String], url: Option<&str>) -> Value {
    match url {
        Some(url) => json!({"type": "http", "url": url}),
        None => json!({"type": "stdio", "command": proxy[0], "args": proxy[1..]}),
    }
}

/// Codex's `[mcp_servers.files]` table's keys, as TOML.
fn codex_server(proxy: &[String], url: Option<&str>) -> String {
    match url {
        Some(url) => format!("url = {}\n", Value::from(url)),
        None => format!(
            "command = {}\nargs = {}\n",
            Value::from(proxy[0].clone()),
            Value::from(proxy[1..].to_vec())
        ),
    }
}

/// Codex's table that approves `tool` of the server (Codex's own approval;
/// the proxy's policy still decides).
fn codex_approves(tool: &str) -> String {
    format!("[mcp_servers.files.tools.{tool}]\napproval_mode = \"approve\"\n")
}

/// Gemini CLI's entry (`mcpServers.files`).
fn gemini_server(proxy: &[String], url: Option<&str>) -> Value {
    match url {
        Some(url) => json!({"httpUrl": url}),
        None => json!({"command": proxy[0], "args": proxy[1..]}),
    }
}

/// opencode's entry (`mcp.files`), with how long it waits for the server's
/// answers (its default, 5 s, is short for a proxy starting on a loaded
/// machine).
fn opencode_server(proxy: &[String], url: Option<&str>) -> Value {
    match url {
        Some(url) => json!({"type": "remote", "url": url, "timeout": HOST_WAITS_MS}),
        None => json!({"type": "local", "command": proxy, "timeout": HOST_WAITS_MS}),
    }
}

fn run(name: &str, s: Scenario) -> Option<Ran> {
    run_with(name, s, &[])
}

/// [`run`] with more options for the proxy.
fn run_with(name: &str, s: Scenario, options: &[String]) -> Option<Ran> {
    let stage = Stage::set(name, &s, options)?;
    let output = finish(
        s.host,
        stage
            .host(&s, false)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let ran = stage.end(&s, output.stdout, output.stderr);
    assert_eq!(
        output.code,
        Some(0),
        "{:?}\nstdout: {}\nstderr: {}",
        s.host,
        ran.stdout,
        ran.stderr
    );
    Some(ran)
}

/// What a run sets up before its host starts: the test's directory and
/// sandbox, the model endpoint, the proxy's command line and, over HTTP,
/// the listening proxy.
struct Stage {
    hosts: PathBuf,
    dir: PathBuf,
    sandbox: PathBuf,
    endpoint: Endpoint,
    proxy: Vec<String>,
    listening: Option<common::Listening>,
}

impl Stage {
    fn set(name: &str, s: &Scenario, options: &[String]) -> Option<Stage> {
        let (hosts, server) = setup(name)?;
        let dir = common::scratch("in-hosts", name);
        let sandbox = dir.join("sandbox");
        std::fs::create_dir_all(&sandbox).unwrap();
        std::fs::write(sandbox.join("notes.txt"), format!("{NOTES}\n")).unwrap();
        let endpoint = Endpoint::start(&dir, s.tool, &s.arguments);
        let mut proxy = proxy_command(s, &dir, &sandbox, &server);
        // Options go before the server's command line.
        let at = proxy.iter().position(|a| a == "--").unwrap();
        proxy.splice(at..at, options.iter().cloned());
        // Over HTTP the test starts the proxy; on stdio the host does.
        let listening = s.listen.then(|| {
            let mut command = Command::new(&proxy[0]);
            command.args(&proxy[1..]);
            common::Listening::spawn(command)
        });
        Some(Stage {
            hosts,
            dir,
            sandbox,
            endpoint,
            proxy,
            listening,
        })
    }

    /// The host's command: its non-interactive mode, or with `interactive`
    /// its terminal interface (the prompt given on its command line).
    fn host(&self, s: &Scenario, interactive: bool) -> Command {
        let url = self.listening.as_ref().map(|l| l.url.clone());
        match s.host {
            Host::ClaudeCode => self.claude_code(s, url, interactive),
            Host::Codex => self.codex(s, url, interactive),
            Host::Gemini => self.gemini(s, url, interactive),
            Host::Opencode => self.opencode(url, interactive),
        }
    }

    fn bin(&self, name: &str) -> PathBuf {
        self.hosts.join("node_modules/.bin").join(name)
    }

    fn claude_code(&self, s: &Scenario, url: Option<String>, interactive: bool) -> Command {
        let config =
            json!({"mcpServers": {"files": claude_code_server(&self.proxy, url.as_deref())}});
        let path = self.dir.join("mcp.json");
        std::fs::write(&path, config.to_string()).unwrap();
        let home = self.dir.join("home");
        std::fs::create_dir_all(&home).unwrap();
        let mut command = Command::new(self.bin("claude"));
        if interactive {
            // A user who has been through the first run's screens, uses
            // this key, and trusts the sandbox.
            let sandbox = self.sandbox.display().to_string();
            let state = json!({
                "hasCompletedOnboarding": true,
                "theme": "dark",
                "customApiKeyResponses": {"approved": ["scripted"], "rejected": []},
                "projects": {sandbox: {"hasTrustDialogAccepted": true}},
            });
            std::fs::write(home.join(".claude.json"), state.to_string()).unwrap();
            command.current_dir(&self.sandbox);
        } else {
            command.args(["-p", PROMPT, "--output-format", "stream-json", "--verbose"]);
        }
        command
            .arg("--mcp-config")
            .arg(&path)
            .args(["--strict-mcp-config", "--model", "claude-sonnet-4-5"])
            .env("HOME", &home)
            .env("ANTHROPIC_BASE_URL", &self.endpoint.url)
            .env("ANTHROPIC_API_KEY", "scripted")
            // MCP tools offered to the model directly, not behind a
            // search tool; nothing sent beyond the endpoint.
            .env("ENABLE_TOOL_SEARCH", "false")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            // A debug proxy on a loaded machine may take seconds to
            // start: the host waits for it as long as the test does.
            .env("MCP_TIMEOUT", HOST_WAITS_MS.to_string())
            .env("MCP_TOOL_TIMEOUT", HOST_WAITS_MS.to_string());
        if s.allow {
            command.args(["--allowedTools", "mcp__files"]);
        }
        if interactive {
            command.arg(PROMPT);
        }
        command
    }

    fn codex(&self, s: &Scenario, url: Option<String>, interactive: bool) -> Command {
        let codex_home = self.dir.join("codex");
        std::fs::create_dir_all(&codex_home).unwrap();
        let server = codex_server(&self.proxy, url.as_deref());
        // Non-interactive, nobody can approve; in its terminal, Codex asks
        // as it would its user, in a directory the user trusts.
        let (approval, trust) = if interactive {
            let sandbox = Value::from(self.sandbox.display().to_string());
            let trust = format!("[projects.{sandbox}]\ntrust_level = \"trusted\"\n\n");
            (String::new(), trust)
        } else {
            ("approval_policy = \"never\"\n".to_string(), String::new())
        };
        let mut config = format!(
            "model = \"scripted\"\nmodel_provider = \"scripted\"\n\
             {approval}sandbox_mode = \"read-only\"\n\n\
             [model_providers.scripted]\nname = \"scripted\"\n\
             base_url = \"{}/v1\"\nwire_api = \"responses\"\n\n\
             {trust}[mcp_servers.files]\n{server}\
             startup_timeout_sec = {waits}\ntool_timeout_sec = {waits}\n",
            self.endpoint.url,
            waits = HOST_WAITS_MS / 1000,
        );
        if s.allow {
            config.push('\n');
            config.push_str(&codex_approves(s.tool));
        }
        std::fs::write(codex_home.join("config.toml"), config).unwrap();
        let mut command = Command::new(self.bin("codex"));
        if interactive {
            // The terminal interface runs the session itself, not in a
            // daemon that would outlive it with the proxy.
            command.args(["--disable", "daemon_auto_start"]);
        } else {
            command.args(["exec", "--skip-git-repo-check", "--json"]);
        }
        command
            .arg(PROMPT)
            .current_dir(&self.sandbox)
            .env("CODEX_HOME", &codex_home)
            // Tool errors as the host shows them, without a backtrace.
            .env_remove("RUST_BACKTRACE");
        command
    }

    fn gemini(&self, s: &Scenario, url: Option<String>, interactive: bool) -> Command {
        let home = self.dir.join("home");
        std::fs::create_dir_all(home.join(".gemini")).unwrap();
        let mut server = gemini_server(&self.proxy, url.as_deref());
        // Waits as long as the test does.
        server["timeout"] = HOST_WAITS_MS.into();
        let settings = json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "mcpServers": {"files": server},
        });
        std::fs::write(home.join(".gemini/settings.json"), settings.to_string()).unwrap();
        let mut command = Command::new(self.bin("gemini"));
        if interactive {
            command.args(["-i", PROMPT]);
        } else {
            command.args(["-p", PROMPT, "--output-format", "json"]);
        }
        command
            // A model named: no routing requests to classify the prompt.
            .args(["-m", "gemini-2.5-flash"])
            .current_dir(&self.sandbox)
            .env("HOME", &home)
            .env("GEMINI_API_KEY", "scripted")
            .env("GOOGLE_GEMINI_BASE_URL", &self.endpoint.url)
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true");
        if s.allow {
            command.args(["--allowed-tools", &format!("mcp_files_{}", s.tool)]);
        }
        if s.server_says.is_some() {
            // Gemini CLI shows its MCP servers' stderr in debug mode.
            command.arg("--debug");
        }
        command
    }

    fn opencode(&self, url: Option<String>, interactive: bool) -> Command {
        assert!(!interactive, "opencode runs here non-interactively");
        let server = opencode_server(&self.proxy, url.as_deref());
        let config = json!({
            "provider": {"scripted": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "scripted",
                "options": {"baseURL": format!("{}/v1", self.endpoint.url), "apiKey": "scripted"},
                "models": {"scripted": {"name": "scripted", "tool_call": true}},
            }},
            "model": "scripted/scripted",
            "autoupdate": false,
            "share": "disabled",
            "mcp": {"files": server},
        });
        let path = self.dir.join("opencode.json");
        std::fs::write(&path, config.to_string()).unwrap();
        let home = self.dir.join("home");
        // The binary `opencode-ai`'s launcher runs on linux x64 without
        // AVX2 (so on any x86-64 CPU).
        let binary = self
            .hosts
            .join("node_modules/opencode-linux-x64-baseline/bin/opencode");
        let mut command = Command::new(binary);
        command
            // `--pure`: no plugins, which it would otherwise fetch.
            .args(["run", "--pure", "--format", "json", PROMPT])
            .current_dir(&self.sandbox)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("XDG_STATE_HOME", home.join(".local/state"))
            .env("OPENCODE_CONFIG", &path)
            // Nothing fetched beyond the endpoint.
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1");
        command
    }

    /// What the run left once its host exited (having printed `stdout` and
    /// `stderr`): the listening proxy stopped, no proxy or server left
    /// running, the audit log read.
    fn end(self, s: &Scenario, stdout: String, stderr: String) -> Ran {
        if let Some(listening) = self.listening {
            let (status, stderr) = listening.stop();
            assert_eq!(status, 0, "the listening proxy: {stderr:?}");
        }
        // The host stopped the proxy it started (or the test did), and the
        // proxy its server (both name the sandbox on their command lines).
        let marker = self.sandbox.display().to_string();
        let left = common::outlived(&marker);
        if left > 0 {
            common::kill_processes_with(&marker);
        }
        assert_eq!(left, 0, "{:?} left the proxy or its server running", s.host);
        let audit = std::fs::read_to_string(self.dir.join("audit.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        Ran {
            requests: self.endpoint.requests(),
            audit,
            stdout,
            stderr,
            dir: self.dir,
            sandbox: self.sandbox,
        }
    }
}

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
