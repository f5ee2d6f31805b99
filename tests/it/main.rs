//! The command's test suite: the `mcp-resolve` binary end to end (checks,
//! signatures, generated code, diff, fmt, explain, import, the proxy), with
//! the real components scripts/test.sh installs. One test binary, one module
//! per area: every extra binary would link the whole dependency tree again.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../common/mod.rs"]
mod common;

mod analysis;
mod cli;
mod codegen;
mod diff;
mod dsl;
mod dsl_properties;
mod explain;
mod fixtures;
mod import;
mod import_live;
mod in_hosts;
mod load;
mod lsp;
mod malformed;
mod manifest;
mod npm_cli;
mod proxy;
mod py_host;
mod py_server;
mod pypi_cli;
mod python;
mod readme;
mod real_servers;
mod sarif;
mod signature;
mod signing;
mod ts_host;
mod ts_server;
mod typescript;
