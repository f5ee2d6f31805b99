//! The hosts' terminal interfaces, driven through tmux as a user would
//! drive them: whether a host asks before a call given the annotations the
//! proxy listed, and the proxy's question (elicitation) as the host shows
//! it, accepted and declined. The model endpoint plays the same script as
//! in non-interactive mode; the test waits for what the screen shows and
//! presses keys.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{HOST_WAITS_MS, Host, Ran, Scenario, Stage, delete_call};
use crate::common;

/// A tmux server of the test's own (its socket named after the test and
/// this process) running one session, the host; killed, with whatever
/// still runs in it, when dropped.
struct Terminal {
    tmux: PathBuf,
    socket: PathBuf,
}

impl Terminal {
    /// `command` (its environment and directory too) in a new 200×50
    /// terminal.
    fn start(tmux: &Path, name: &str, command: &Command) -> Terminal {
        let socket =
            std::env::temp_dir().join(format!("mcp-resolve-{}-{name}.tmux", std::process::id()));
        let _ = std::fs::remove_file(&socket);
        // `env -u NAME… NAME=VALUE… PROGRAM ARGS…`: what `command` would
        // run, as tmux's own arguments (no shell in between).
        let mut unset = Vec::new();
        let mut set = Vec::new();
        for (key, value) in command.get_envs() {
            let key = key.to_string_lossy().into_owned();
            match value {
                Some(value) => set.push(format!("{key}={}", value.to_string_lossy())),
                None => unset.extend(["-u".to_string(), key]),
            }
        }
        let terminal = Terminal {
            tmux: tmux.to_path_buf(),
            socket,
        };
        let mut start = terminal.tmux();
        start
            .args(["-f", "/dev/null", "new-session", "-d", "-s", "host"])
            .args(["-x", "200", "-y", "50", "-c"])
            .arg(command.get_current_dir().expect("the host's directory"))
            .arg("env")
            .args(unset)
            .args(set)
            .arg(command.get_program())
            .args(command.get_args());
        let status = start.status().unwrap();
        assert!(status.success(), "tmux did not start the host: {status}");
        terminal
    }

    fn tmux(&self) -> Command {
        let mut command = Command::new(&self.tmux);
        command.arg("-S").arg(&self.socket);
        command
    }

    /// The screen, with what scrolled off it if `all`, wrapped lines
    /// joined; `None` once the host has exited (its session with it).
    fn screen(&self, all: bool) -> Option<String> {
        let mut capture = self.tmux();
        capture.args(["capture-pane", "-p", "-J", "-t", "host"]);
        if all {
            capture.args(["-S", "-"]);
        }
        let out = capture
            .stderr(std::process::Stdio::null())
            .output()
            .unwrap();
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The screen (with what scrolled off it) once it shows `text`
    /// (spaces and line breaks compared as one space: hosts wrap long
    /// lines themselves); the test fails with the screen if it does not
    /// within [`HOST_WAITS_MS`].
    fn wait_for(&self, text: &str) -> String {
        let start = Instant::now();
        let mut last = String::new();
        while start.elapsed() < Duration::from_millis(HOST_WAITS_MS) {
            let Some(screen) = self.screen(true) else {
                panic!("the host exited before showing {text:?}:\n{last}");
            };
            if shows(&screen, text) {
                return screen;
            }
            last = screen;
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("the host did not show {text:?}:\n{last}");
    }

    /// Presses `keys` (tmux's key names: `Enter`, `Down`, `C-c`).
    fn press(&self, keys: &[&str]) {
        let status = self.send(keys);
        assert!(status.success(), "tmux send-keys {keys:?}: {status}");
    }

    /// Sends `keys` to the host's pane, and how tmux exited (not success
    /// once the host has exited: its session, and tmux's server, with it).
    fn send(&self, keys: &[&str]) -> std::process::ExitStatus {
        self.tmux()
            .args(["send-keys", "-t", "host"])
            .args(keys)
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap()
    }

    /// Presses `keys` until the screen has changed as `step` says it
    /// will. A host ignores keys for a moment after it shows a question
    /// (so that typing ahead does not answer it): the first press waits a
    /// second, and a press that changed nothing in five is made again.
    fn answer(&self, step: &Step) {
        let done = |screen: &str| match step.then {
            Then::Gone => !shows(screen, step.shows),
            Then::Shows(text) => shows(screen, text),
        };
        for _ in 0..10 {
            std::thread::sleep(Duration::from_secs(1));
            self.press(step.keys);
            let pressed = Instant::now();
            while pressed.elapsed() < Duration::from_secs(5) {
                match self.screen(false) {
                    Some(screen) if !done(&screen) => {}
                    _ => return,
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        panic!(
            "{:?} after {:?} changed nothing:\n{}",
            step.keys,
            step.shows,
            self.screen(true).unwrap_or_default()
        );
    }

    /// Quits the host as a user does (Ctrl-C until it exits); the test
    /// fails if it is still running after a minute.
    fn quit(&self) {
        let start = Instant::now();
        while self.screen(false).is_some() {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the host did not exit on Ctrl-C:\n{}",
                self.screen(true).unwrap_or_default()
            );
            // The host may exit between the look and the key (on the
            // Ctrl-C before, after a moment): the key then finds no pane,
            // which is the exit awaited, not a failure.
            let status = self.send(&["C-c"]);
            assert!(
                status.success() || self.screen(false).is_none(),
                "tmux send-keys C-c while the host runs: {status}"
            );
            std::thread::sleep(Duration::from_millis(400));
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self
            .tmux()
            .arg("kill-server")
            .stderr(std::process::Stdio::null())
            .status();
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// `text` with every run of whitespace one space.
fn spaced(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `screen` shows `text`, whitespace aside.
fn shows(screen: &str, text: &str) -> bool {
    spaced(screen).contains(&spaced(text))
}

/// A step of a conversation: once the screen shows `shows`, the user
/// presses `keys`, after which the screen [`Then`]s.
#[derive(Clone, Copy)]
struct Step {
    shows: &'static str,
    keys: &'static [&'static str],
    then: Then,
}

/// How the screen changes once a [`Step`]'s keys are taken.
#[derive(Clone, Copy)]
enum Then {
    /// What the step waited for is no longer on the screen.
    Gone,
    /// The screen shows this.
    Shows(&'static str),
}

/// Waits for `shows`, then presses `keys` until it is gone.
const fn step(shows: &'static str, keys: &'static [&'static str]) -> Step {
    Step {
        shows,
        keys,
        then: Then::Gone,
    }
}

/// A run of `s` in the host's terminal interface through `steps`, then
/// until the model's answer quoting the tool's result is on the screen;
/// what it left, with every screen a step waited for and the last one as
/// [`Ran::stdout`].
fn converse(name: &str, s: &Scenario, steps: &[Step]) -> Option<(Ran, Vec<String>)> {
    let tmux = common::component("MCP_RESOLVE_TMUX", name)?;
    let stage = Stage::set(name, s, &[])?;
    let terminal = Terminal::start(&tmux, name, &stage.host(s, true));
    let mut screens = Vec::new();
    for step in steps {
        screens.push(terminal.wait_for(step.shows));
        terminal.answer(step);
    }
    let last = terminal.wait_for("The tool answered:");
    terminal.quit();
    drop(terminal);
    Some((stage.end(s, last, String::new()), screens))
}

/// The proxy's question, as the host shows it.
const QUESTION: &str = "Allow the call to `manage_files` (variant `delete`)? \
     Its annotations: readOnlyHint: false, destructiveHint: true, idempotentHint: true, \
     openWorldHint: false, agencyHint: false. It needs the scopes files:write. \
     (policy rule `destructive` asks before calls like this.)";

/// Claude Code's own question before an MCP tool runs.
const CLAUDE_ASKS: &str = "Do you want to proceed?";

/// Codex's own question before an MCP tool runs.
const CODEX_ASKS: &str = "Allow the files MCP server to run tool";

/// A delete under `ask-destructive.yaml` (with `listen`, the host connected
/// over streamable HTTP), the user answering the host's own question with
/// `Enter` and then the proxy's as `answer` says.
fn asked(name: &str, host: Host, listen: bool, answer: &[Step]) -> Option<Ran> {
    let host_asks = match host {
        Host::ClaudeCode => CLAUDE_ASKS,
        Host::Codex => CODEX_ASKS,
        Host::Gemini | Host::Opencode => unreachable!("{host:?} does not answer elicitation"),
    };
    let mut s = Scenario::new(host, "manage_files", delete_call())
        .policy("ask-destructive.yaml")
        .unallowed();
    if listen {
        s = s.listening();
    }
    let mut steps = vec![step(host_asks, &["Enter"])];
    steps.extend_from_slice(answer);
    let (ran, screens) = converse(name, &s, &steps)?;
    // The question was on the screen, whole.
    assert!(shows(&screens[1], QUESTION), "{}", screens[1]);
    let last = ran.audit.last().expect("an audit record");
    assert_eq!(last["decision"], "ask");
    assert_eq!(last["rule"], "destructive");
    Some(ran)
}

/// Accepting the proxy's question: its first choice.
const ACCEPT: &[Step] = &[step(QUESTION, &["Enter"])];

/// The user accepted: the file is gone, the model got the server's answer,
/// and the audit log says so.
fn assert_accepted(ran: &Ran) {
    let (error, text) = ran.tool_result();
    assert_ne!(error, Some(true), "{text}");
    assert!(text.contains("deleted notes.txt"), "{text}");
    assert!(!ran.sandbox.join("notes.txt").exists());
    assert_eq!(ran.audit.last().unwrap()["outcome"], "accepted");
}

/// The user declined: the file is still there and the model was told.
fn assert_declined(ran: &Ran) {
    let (_, text) = ran.tool_result();
    assert!(
        text.contains("was declined by the user (policy rule `destructive`)"),
        "{text}"
    );
    assert!(ran.sandbox.join("notes.txt").exists());
    assert_eq!(ran.audit.last().unwrap()["outcome"], "declined");
}

#[test]
fn claude_code_shows_the_proxys_question_and_an_accepted_delete_runs() {
    if let Some(ran) = asked("claude-tui-accept", Host::ClaudeCode, false, ACCEPT) {
        assert_accepted(&ran);
    }
}

/// Declining in Claude Code: the choices are side by side, Accept first;
/// Down moves to Decline.
const CLAUDE_DECLINES: &[Step] = &[
    Step {
        shows: QUESTION,
        keys: &["Down"],
        then: Then::Shows("❯ Decline"),
    },
    step("❯ Decline", &["Enter"]),
];

/// Declining in Codex: 1. Allow, 2. Deny, 3. Cancel.
const CODEX_DECLINES: &[Step] = &[
    Step {
        shows: QUESTION,
        keys: &["Down"],
        then: Then::Shows("› 2. Deny"),
    },
    step("› 2. Deny", &["Enter"]),
];

#[test]
fn claude_code_shows_the_proxys_question_and_a_declined_delete_does_not_run() {
    if let Some(ran) = asked(
        "claude-tui-decline",
        Host::ClaudeCode,
        false,
        CLAUDE_DECLINES,
    ) {
        assert_declined(&ran);
    }
}

#[test]
fn codex_shows_the_proxys_question_and_an_accepted_delete_runs() {
    if let Some(ran) = asked("codex-tui-accept", Host::Codex, false, ACCEPT) {
        assert_accepted(&ran);
    }
}

#[test]
fn codex_shows_the_proxys_question_and_a_declined_delete_does_not_run() {
    if let Some(ran) = asked("codex-tui-decline", Host::Codex, false, CODEX_DECLINES) {
        assert_declined(&ran);
    }
}

#[test]
fn claude_code_over_http_shows_the_proxys_question_and_an_accepted_delete_runs() {
    if let Some(ran) = asked("claude-tui-http", Host::ClaudeCode, true, ACCEPT) {
        assert_accepted(&ran);
    }
}

#[test]
fn codex_over_http_shows_the_proxys_question_and_an_accepted_delete_runs() {
    if let Some(ran) = asked("codex-tui-http", Host::Codex, true, ACCEPT) {
        assert_accepted(&ran);
    }
}

#[test]
fn claude_code_over_http_shows_the_proxys_question_and_a_declined_delete_does_not_run() {
    if let Some(ran) = asked(
        "claude-tui-http-decline",
        Host::ClaudeCode,
        true,
        CLAUDE_DECLINES,
    ) {
        assert_declined(&ran);
    }
}

#[test]
fn codex_over_http_shows_the_proxys_question_and_a_declined_delete_does_not_run() {
    if let Some(ran) = asked("codex-tui-http-decline", Host::Codex, true, CODEX_DECLINES) {
        assert_declined(&ran);
    }
}

/// A directory listing (`readOnlyHint: true` in the proxy's listing).
fn list_directory(host: Host) -> Scenario {
    Scenario::new(host, "list_directory", json!({"path": "."})).unallowed()
}

fn assert_listed(ran: &Ran) {
    let (_, text) = ran.tool_result();
    assert!(text.contains("notes.txt"), "{text}");
    let record = ran.audit.last().expect("an audit record");
    assert_eq!(record["tool"], "list_directory");
    assert_eq!(record["annotations"]["readOnlyHint"], true);
    assert_eq!(record["outcome"], "forwarded");
}

#[test]
fn claude_code_asks_its_user_before_a_read_only_tool_too() {
    let s = list_directory(Host::ClaudeCode);
    let steps = [step(CLAUDE_ASKS, &["Enter"])];
    let Some((ran, screens)) = converse("claude-tui-read-only", &s, &steps) else {
        return;
    };
    assert!(screens[0].contains("List Directory"), "{}", screens[0]);
    assert_listed(&ran);
}

#[test]
fn codex_runs_a_read_only_tool_without_asking_its_user() {
    let s = list_directory(Host::Codex);
    let Some((ran, _)) = converse("codex-tui-read-only", &s, &[]) else {
        return;
    };
    assert!(!spaced(&ran.stdout).contains(CODEX_ASKS), "{}", ran.stdout);
    assert_listed(&ran);
}

#[test]
fn gemini_cli_asks_its_user_before_a_read_only_tool_too() {
    let s = list_directory(Host::Gemini);
    let asks = "Allow execution of MCP tool \"list_directory\" from server \"files\"?";
    let Some((ran, _)) = converse("gemini-tui-read-only", &s, &[step(asks, &["Enter"])]) else {
        return;
    };
    assert_listed(&ran);
}
