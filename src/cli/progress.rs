//! The progress indicator: a spinner on standard error that names the stage
//! a long run is in (parsing, checking, analysing, writing) and the time
//! spent. It appears only when standard error is a terminal and only once a
//! run has taken longer than [`DELAY`], so short runs, pipes, CI logs and
//! tests see nothing; it is cleared before any output is written.

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mcp_resolve::Stage;

/// How long a run goes before the indicator shows
/// (`MCP_RESOLVE_PROGRESS_DELAY_MS` sets another, for tests).
const DELAY: Duration = Duration::from_millis(300);

fn delay() -> Duration {
    std::env::var("MCP_RESOLVE_PROGRESS_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(DELAY, Duration::from_millis)
}

/// The spinner (hidden until [`DELAY`] has passed) and whether it is done.
struct Indicator {
    bar: ProgressBar,
    done: Mutex<bool>,
}

static INDICATOR: OnceLock<Option<Indicator>> = OnceLock::new();

/// Whether this process shows progress: standard error is a terminal and
/// `TERM` is not `dumb`.
fn wanted() -> bool {
    use std::io::IsTerminal as _;
    std::io::stderr().is_terminal() && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
}

fn indicator() -> Option<&'static Indicator> {
    INDICATOR
        .get_or_init(|| {
            if !wanted() {
                return None;
            }
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
            if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
                bar.set_style(style);
            }
            if delay().is_zero() {
                // Shown from the start, by this thread: a helper thread might
                // not run before a short run is over.
                bar.set_draw_target(ProgressDrawTarget::stderr());
                bar.enable_steady_tick(Duration::from_millis(100));
                return Some(Indicator {
                    bar,
                    done: Mutex::new(false),
                });
            }
            let shown = bar.clone();
            std::thread::spawn(move || {
                std::thread::sleep(delay());
                if let Some(indicator) = INDICATOR.get().and_then(Option::as_ref)
                    && let Ok(done) = indicator.done.lock()
                    && !*done
                {
                    shown.set_draw_target(ProgressDrawTarget::stderr());
                    shown.enable_steady_tick(Duration::from_millis(100));
                }
            });
            Some(Indicator {
                bar,
                done: Mutex::new(false),
            })
        })
        .as_ref()
}

/// When the process started, as far as stage timings are concerned.
static STARTED: OnceLock<std::time::Instant> = OnceLock::new();

/// Marks the start of the run (for `MCP_RESOLVE_STAGE_TIMES`).
pub(crate) fn start() {
    STARTED.get_or_init(std::time::Instant::now);
}

/// Names the stage the run is in. With `MCP_RESOLVE_STAGE_TIMES` set (and
/// not empty), also prints it to standard error with the time since the
/// start and the memory in use (where the system says), on any terminal or
/// pipe: where a long run spends its time and memory.
pub(crate) fn stage(message: impl Into<String>) {
    let message = message.into();
    if std::env::var_os("MCP_RESOLVE_STAGE_TIMES").is_some_and(|v| !v.is_empty()) {
        let elapsed = STARTED.get_or_init(std::time::Instant::now).elapsed();
        let memory = resident_mib().map_or_else(String::new, |(now, peak)| {
            format!(", {now:>5} MiB, peak {peak:>5} MiB")
        });
        eprintln!("[{:>8.3} s{memory}] {message}", elapsed.as_secs_f64());
    }
    if let Some(indicator) = indicator()
        && let Ok(done) = indicator.done.lock()
        && !*done
    {
        indicator.bar.set_message(message);
    }
}

/// This process's resident memory and its peak so far, in MiB, where the
/// system says (Linux's `/proc/self/status`).
fn resident_mib() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))?
            .trim()
            .strip_suffix("kB")?
            .trim()
            .parse::<u64>()
            .ok()
            .map(|kib| kib / 1024)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// A loading stage, as [`mcp_resolve::LoadOptions::progress`] reports it.
pub(crate) fn load_stage(stage: Stage) {
    let plural = |n: usize, one: &str| {
        if n == 1 {
            format!("1 {one}")
        } else {
            format!("{n} {one}s")
        }
    };
    self::stage(match stage {
        Stage::Parsing { files } => format!("parsing {}", plural(files, "file")),
        Stage::Checking { tools } => format!("checking {}", plural(tools, "tool")),
        Stage::Analysing { tools } => {
            format!("analysing the patterns of {}", plural(tools, "tool"))
        }
        _ => "loading".to_string(),
    });
}

/// Clears the indicator for good: called before anything is written to
/// standard output or error, so the two never interleave.
pub(crate) fn finish() {
    if let Some(indicator) = INDICATOR.get().and_then(Option::as_ref)
        && let Ok(mut done) = indicator.done.lock()
        && !*done
    {
        *done = true;
        indicator.bar.finish_and_clear();
    }
}
