//! The machinery of the in-host tests: the hosts and how each is
//! configured and run, a run's stage (the test's directory, the model
//! endpoint, the proxy's command line), and what a run left.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

use serde_json::{Value, json};

use super::{HOST_WAITS_MS, NOTES, PROMPT, RULES, repo};
use crate::common;

/// The hosts under test and how each is configured and run.
#[derive(Clone, Copy, Debug)]
pub(super) enum Host {
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
pub(super) struct Scenario {
    pub(super) host: Host,
    /// A policy of docs/policies, or none.
    pub(super) policy: Option<&'static str>,
    pub(super) tool: &'static str,
    pub(super) arguments: Value,
    /// The host connects to `mcp-resolve proxy --listen` over streamable
    /// HTTP instead of starting the proxy on stdio.
    pub(super) listen: bool,
    /// A line the server writes to its stderr when it starts (the proxy
    /// passes it on to its own), and the host asked to show server logs.
    pub(super) server_says: Option<&'static str>,
    /// Claude Code: `--allowedTools mcp__files`. Codex: the tool's
    /// `approval_mode = "approve"`. Gemini CLI: `--allowed-tools
    /// mcp_files_TOOL`.
    pub(super) allow: bool,
}

impl Scenario {
    /// `host` asked for `tool` with `arguments`, allowed to call it, the
    /// proxy on stdio without a policy.
    pub(super) fn new(host: Host, tool: &'static str, arguments: Value) -> Scenario {
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

    pub(super) fn policy(self, policy: &'static str) -> Scenario {
        self.policy_opt(Some(policy))
    }

    pub(super) fn policy_opt(mut self, policy: Option<&'static str>) -> Scenario {
        self.policy = policy;
        self
    }

    pub(super) fn listening(mut self) -> Scenario {
        self.listen = true;
        self
    }

    pub(super) fn says(mut self, line: &'static str) -> Scenario {
        self.server_says = Some(line);
        self
    }

    pub(super) fn allowed(mut self, allow: bool) -> Scenario {
        self.allow = allow;
        self
    }

    pub(super) fn unallowed(self) -> Scenario {
        self.allowed(false)
    }
}

/// What a run left behind.
pub(super) struct Ran {
    /// Every request the host sent the model endpoint.
    pub(super) requests: Vec<Value>,
    /// The proxy's audit records.
    pub(super) audit: Vec<Value>,
    /// The host's standard output (its JSON event stream).
    pub(super) stdout: String,
    /// The host's standard error.
    pub(super) stderr: String,
    /// The test's directory (the hosts' homes are in it).
    pub(super) dir: PathBuf,
    pub(super) sandbox: PathBuf,
}

impl Ran {
    /// The last tool result the model was sent: whether the host marked it
    /// an error (Claude Code marks them; Codex does not), and its text.
    pub(super) fn result(&self) -> Option<(Option<bool>, String)> {
        // The latest request that carries one: a host may send others
        // after it (titles, summaries, memories) that carry none.
        self.requests
            .iter()
            .rev()
            .find_map(|request| Ran::result_in(&request["body"]))
    }

    /// The tool result `body` ends with, in whichever API it is written.
    pub(super) fn result_in(body: &Value) -> Option<(Option<bool>, String)> {
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
    pub(super) fn tool_result(&self) -> (Option<bool>, String) {
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
    pub(super) fn listed(&self) -> Vec<(String, String)> {
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

/// The scripted endpoint, killed when dropped. It also ends when its stdin
/// closes, so that a test process that is itself killed leaves none behind.
pub(super) struct Endpoint {
    pub(super) child: Child,
    _stdin: Option<ChildStdin>,
    pub(super) url: String,
    pub(super) log: PathBuf,
}

impl Endpoint {
    pub(super) fn start(dir: &Path, tool: &str, arguments: &Value) -> Endpoint {
        let log = dir.join("model-requests.jsonl");
        let script = repo().join("tests/fixtures/hosts/model_endpoint.py");
        let mut child = Command::new("python3")
            .arg(script)
            .args(["--tool", tool, "--arguments", &arguments.to_string()])
            .arg("--log")
            .arg(&log)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
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
            _stdin: stdin,
            log,
        }
    }

    pub(super) fn requests(&self) -> Vec<Value> {
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
pub(super) fn setup(test: &str) -> Option<(PathBuf, PathBuf)> {
    let hosts = common::component("MCP_RESOLVE_HOSTS", test)?;
    let server = crate::ts_host::rust_server(test)?;
    Some((hosts, server))
}

/// What a host printed, and how it exited.
pub(super) struct Exited {
    /// Its exit code; `None` when a signal ended it.
    pub(super) code: Option<i32>,
    pub(super) stdout: String,
    pub(super) stderr: String,
}

/// The host's output once it exits; killed, and the test failed with what
/// it printed, if it runs past twice [`HOST_WAITS_MS`].
pub(super) fn finish(host: Host, mut child: Child) -> Exited {
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
pub(super) fn proxy_command(
    s: &Scenario,
    dir: &Path,
    sandbox: &Path,
    server: &Path,
) -> Vec<String> {
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
pub(super) fn claude_code_server(proxy: &[String], url: Option<&str>) -> Value {
    match url {
        Some(url) => json!({"type": "http", "url": url}),
        None => json!({"type": "stdio", "command": proxy[0], "args": proxy[1..]}),
    }
}

/// Codex's `[mcp_servers.files]` table's keys, as TOML.
pub(super) fn codex_server(proxy: &[String], url: Option<&str>) -> String {
    match url {
        Some(url) => format!("url = {}\n", Value::from(url)),
        None => format!(
            "command = {}\nargs = {}\n",
            Value::from(proxy[0].clone()),
            Value::from(proxy[1..].to_vec())
        ),
    }
}

/// What makes Codex wait for the proxy before its first turn (and fail if
/// it cannot start): without it, `codex exec` sends the first turn without
/// a server that is still starting.
pub(super) const CODEX_REQUIRED: &str = "required = true\n";

/// Codex's table that approves `tool` of the server (Codex's own approval;
/// the proxy's policy still decides).
pub(super) fn codex_approves(tool: &str) -> String {
    format!("[mcp_servers.files.tools.{tool}]\napproval_mode = \"approve\"\n")
}

/// Gemini CLI's entry (`mcpServers.files`).
pub(super) fn gemini_server(proxy: &[String], url: Option<&str>) -> Value {
    match url {
        Some(url) => json!({"httpUrl": url}),
        None => json!({"command": proxy[0], "args": proxy[1..]}),
    }
}

/// opencode's entry (`mcp.files`), with how long it waits for the server's
/// answers (its default, 5 s, is short for a proxy starting on a loaded
/// machine).
pub(super) fn opencode_server(proxy: &[String], url: Option<&str>) -> Value {
    match url {
        Some(url) => json!({"type": "remote", "url": url, "timeout": HOST_WAITS_MS}),
        None => json!({"type": "local", "command": proxy, "timeout": HOST_WAITS_MS}),
    }
}

pub(super) fn run(name: &str, s: Scenario) -> Option<Ran> {
    run_with(name, s, &[])
}

/// [`run`] with more options for the proxy.
pub(super) fn run_with(name: &str, s: Scenario, options: &[String]) -> Option<Ran> {
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
pub(super) struct Stage {
    pub(super) hosts: PathBuf,
    pub(super) dir: PathBuf,
    pub(super) sandbox: PathBuf,
    pub(super) endpoint: Endpoint,
    pub(super) proxy: Vec<String>,
    pub(super) listening: Option<common::Listening>,
}

impl Stage {
    pub(super) fn set(name: &str, s: &Scenario, options: &[String]) -> Option<Stage> {
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
    pub(super) fn host(&self, s: &Scenario, interactive: bool) -> Command {
        let url = self.listening.as_ref().map(|l| l.url.clone());
        match s.host {
            Host::ClaudeCode => self.claude_code(s, url, interactive),
            Host::Codex => self.codex(s, url, interactive),
            Host::Gemini => self.gemini(s, url, interactive),
            Host::Opencode => self.opencode(url, interactive),
        }
    }

    pub(super) fn bin(&self, name: &str) -> PathBuf {
        self.hosts.join("node_modules/.bin").join(name)
    }

    pub(super) fn claude_code(
        &self,
        s: &Scenario,
        url: Option<String>,
        interactive: bool,
    ) -> Command {
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

    pub(super) fn codex(&self, s: &Scenario, url: Option<String>, interactive: bool) -> Command {
        let codex_home = self.dir.join("codex");
        std::fs::create_dir_all(&codex_home).unwrap();
        let server = codex_server(&self.proxy, url.as_deref()) + CODEX_REQUIRED;
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

    pub(super) fn gemini(&self, s: &Scenario, url: Option<String>, interactive: bool) -> Command {
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

    pub(super) fn opencode(&self, url: Option<String>, interactive: bool) -> Command {
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
    pub(super) fn end(self, s: &Scenario, stdout: String, stderr: String) -> Ran {
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
