//! `proxy`: `tools/resolve` from rules, in front of any MCP server.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use mcp_resolve::proxy::{Ended, Options, ProxyRules, compare, probe, run};
use mcp_resolve::upstream::{UpstreamError, until_interrupted};
use mcp_resolve_runtime::Dialect;

use super::{FAILURE, OK, USAGE, with_server};

/// The command line's choices.
pub(crate) struct Args {
    pub(crate) paths: Vec<PathBuf>,
    pub(crate) dialect: Dialect,
    pub(crate) timeout: u64,
    pub(crate) max_message_bytes: usize,
    pub(crate) probe: bool,
    pub(crate) command: Vec<OsString>,
}

pub(crate) fn main(args: Args) -> u8 {
    if args.command.is_empty() {
        eprintln!(
            "error: give the server's command after `--`: mcp-resolve proxy RULES -- COMMAND ARGS…"
        );
        return USAGE;
    }
    // Rules are loaded and checked before the server starts: a rules error
    // stops here, with the usual diagnostics and exit code.
    with_server(&args.paths, |_, server| {
        let rules = match ProxyRules::new(server.clone(), args.dialect) {
            Ok(rules) => rules,
            Err(e) => {
                eprintln!("error: {e}");
                return FAILURE;
            }
        };
        let options = Options {
            timeout: (args.timeout > 0).then(|| Duration::from_secs(args.timeout)),
            max_message_bytes: args.max_message_bytes,
        };
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(e) => {
                eprintln!("error: cannot start the async runtime: {e}");
                return FAILURE;
            }
        };
        let outcome = runtime.block_on(until_interrupted(async {
            if args.probe {
                let startup = options.timeout.unwrap_or(Duration::from_secs(60));
                let listed = probe(&args.command, startup).await?;
                for note in compare(&rules, &listed) {
                    eprintln!("mcp-resolve proxy: {note}");
                }
            }
            run(
                &rules,
                &options,
                &args.command,
                tokio::io::stdin(),
                tokio::io::stdout(),
            )
            .await
        }));
        match outcome {
            Ok(Ended::HostClosed) => OK,
            Ok(Ended::ServerExited(status)) => {
                eprintln!("error: the server exited ({status}); the proxy stops");
                FAILURE
            }
            Err(UpstreamError::Interrupted) => {
                eprintln!("mcp-resolve proxy: interrupted; the server was stopped");
                FAILURE
            }
            Err(e) => {
                eprintln!("error: {e}");
                FAILURE
            }
        }
    })
}
