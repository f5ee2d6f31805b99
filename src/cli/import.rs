//! `import`: a rules file from the tools a server lists — read from a file,
//! or asked of a live server over stdio or streamable HTTP.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{FAILURE, OK, USAGE, read_json, write_output};
use mcp_resolve::format::Syntax;
use mcp_resolve::import::{import, tools_of};
use mcp_resolve_proxy::upstream::{Session, UpstreamError, command_line, until_interrupted};

/// Where the tools come from.
pub(crate) enum Source {
    /// A JSON file.
    File(PathBuf),
    /// A server started as a child process.
    Command(Vec<OsString>),
    /// A streamable HTTP endpoint.
    Url(String),
}

/// The options of `import`.
pub(crate) struct Options {
    pub(crate) output: PathBuf,
    pub(crate) name: Option<String>,
    pub(crate) version: Option<String>,
    pub(crate) save_list: Option<PathBuf>,
    pub(crate) force: bool,
    pub(crate) timeout: Duration,
    /// What is declared to a live server at `initialize`.
    pub(crate) capabilities: Value,
}

/// `--client-capabilities`: a JSON object, or a full host's by default.
pub(crate) fn capabilities(given: Option<&str>) -> Result<Value, u8> {
    let Some(text) = given else {
        return Ok(mcp_resolve_proxy::upstream::host_capabilities());
    };
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => {
            eprintln!("error: --client-capabilities must be a JSON object");
            Err(USAGE)
        }
        Err(e) => {
            eprintln!("error: --client-capabilities is not valid JSON: {e}");
            Err(USAGE)
        }
    }
}

#[expect(
    clippy::too_many_lines,
    reason = "an import's steps in order (connect, list, write), each with its own exit code"
)]
pub(crate) fn run(source: Source, options: Options) -> u8 {
    let output = &options.output;
    for path in std::iter::once(output).chain(&options.save_list) {
        if path.exists() && !options.force {
            eprintln!(
                "error: `{}` exists; give `--force` to overwrite it",
                path.display()
            );
            return USAGE;
        }
    }
    let started = Instant::now();
    let (tools, described, server_info) = match &source {
        Source::File(input) => {
            let document = match read_json(input) {
                Ok(d) => d,
                Err(code) => return code,
            };
            match tools_of(&document) {
                Ok(tools) => (tools.to_vec(), input.display().to_string(), None),
                Err(e) => {
                    eprintln!("error: `{}`: {e}", input.display());
                    return USAGE;
                }
            }
        }
        Source::Command(command) => {
            let line = command_line(command);
            match ask(
                Live::Command(command),
                options.timeout,
                options.capabilities.clone(),
            ) {
                Ok((tools, info)) => (tools, format!("`{line}`"), info),
                Err(e) => {
                    eprintln!("error: importing from `{line}`: {e}");
                    return FAILURE;
                }
            }
        }
        Source::Url(url) => match ask(
            Live::Url(url),
            options.timeout,
            options.capabilities.clone(),
        ) {
            Ok((tools, info)) => (tools, url.clone(), info),
            // Nothing to talk to is an I/O error, as a file that cannot be
            // read is.
            Err(e @ UpstreamError::Unreachable { .. }) => {
                eprintln!("error: importing from {url}: {e}");
                return USAGE;
            }
            Err(e) => {
                eprintln!("error: importing from {url}: {e}");
                return FAILURE;
            }
        },
    };
    if let Some(path) = &options.save_list {
        let mut list = serde_json::to_string_pretty(&serde_json::json!({ "tools": tools }))
            .unwrap_or_default();
        list.push('\n');
        let code = write_output(Some(path), &list);
        if code != OK {
            return code;
        }
    }
    let listed = |key: &str| {
        server_info
            .as_ref()
            .and_then(|info: &serde_json::Map<String, Value>| info.get(key))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let name = options
        .name
        .clone()
        .or_else(|| listed("name"))
        .unwrap_or_else(|| {
            output
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "server".into())
        });
    let version = options
        .version
        .clone()
        .or_else(|| listed("version"))
        .unwrap_or_else(|| "0.0.0".into());
    let imported = match import(&tools, &name, &version, &described, Syntax::of(output)) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("error: {e}");
            return FAILURE;
        }
    };
    for dropped in &imported.dropped {
        eprintln!("warning: `{dropped}` is not a member of MCP's Tool; left out");
    }
    let code = write_output(Some(output), &imported.text);
    if code == OK {
        let server = format!("{name} {version}");
        eprintln!(
            "imported {} tool{} ({} with variants) from {} into {} in {:.2}s",
            tools.len(),
            if tools.len() == 1 { "" } else { "s" },
            imported.with_variants,
            server.trim_end(),
            output.display(),
            started.elapsed().as_secs_f64()
        );
    }
    code
}

type Listed = (Vec<Value>, Option<serde_json::Map<String, Value>>);

/// A live server.
enum Live<'a> {
    Command(&'a [OsString]),
    Url(&'a str),
}

/// Opens a session with the live server, lists its tools and closes it.
fn ask(live: Live<'_>, timeout: Duration, capabilities: Value) -> Result<Listed, UpstreamError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| UpstreamError::Io {
            context: "cannot start the async runtime".into(),
            source,
        })?;
    runtime.block_on(until_interrupted(async {
        let mut session = match live {
            Live::Command(command) => {
                Session::spawn_declaring(command, timeout, capabilities).await?
            }
            Live::Url(url) => Session::connect_declaring(url, timeout, capabilities).await?,
        };
        let listed = session.list_tools().await;
        for warning in &session.warnings {
            eprintln!("warning: {warning}");
        }
        let info = session.server_info().cloned();
        // Closed on both paths, so the child is stopped before an error is shown.
        let closed = session.close(Duration::from_secs(2)).await;
        let tools = listed?;
        closed?;
        Ok((tools, info))
    }))
}

/// Picks the one source among `input`, `--url` and `-- COMMAND`.
pub(crate) fn source(
    input: Option<PathBuf>,
    url: Option<String>,
    command: Vec<OsString>,
) -> Result<Source, u8> {
    match (input, url, command.is_empty()) {
        (Some(input), None, true) => Ok(Source::File(input)),
        (None, Some(url), true) => Ok(Source::Url(url)),
        (None, None, false) => Ok(Source::Command(command)),
        (None, None, true) => {
            eprintln!(
                "error: say where the tools come from: a tools/list FILE, `--url URL`, or `-- COMMAND ARGS…`"
            );
            Err(USAGE)
        }
        _ => {
            eprintln!(
                "error: give only one of a tools/list FILE, `--url URL` and `-- COMMAND ARGS…`"
            );
            Err(USAGE)
        }
    }
}

/// `mcp-resolve import`: its arguments read, then [`run`].
pub(crate) fn main(args: super::args::ImportArgs) -> u8 {
    let super::args::ImportArgs {
        input,
        output,
        url,
        name,
        server_version,
        save_list,
        timeout,
        client_capabilities,
        force,
        command,
    } = args;
    match (
        source(input, url, command),
        capabilities(client_capabilities.as_deref()),
    ) {
        (Ok(source), Ok(capabilities)) => run(
            source,
            Options {
                output,
                name,
                version: server_version,
                save_list,
                force,
                timeout: std::time::Duration::from_secs(timeout.max(1)),
                capabilities,
            },
        ),
        (Err(code), _) | (_, Err(code)) => code,
    }
}
