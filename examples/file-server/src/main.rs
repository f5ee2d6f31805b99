//! `file-server --root DIR [--dialect D] [--http ADDR]`: serves the sandbox
//! directory DIR over stdio, or over streamable HTTP at `http://ADDR/mcp`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use file_server::sandbox::Sandbox;
use file_server::server::FileServer;
use mcp_resolve_runtime::Dialect;
use mcp_resolve_runtime::framing::http::Screened;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

/// An MCP file server whose tool annotations resolve per call.
#[derive(Debug, Parser)]
#[command(name = "file-server", version)]
struct Args {
    /// The sandbox directory: every path a client sends is relative to it,
    /// and nothing outside it is read or written.
    #[arg(long, value_name = "DIR")]
    root: PathBuf,
    /// The wire shape of resolve responses: `extension` (tool-resolution
    /// extension, `tools/resolve`), `sep1862` (`tools/resolve` returning the
    /// whole tool) or `annotations` (`tools/annotations`).
    #[arg(long, value_name = "D", default_value = "extension")]
    dialect: Dialect,
    /// Serve streamable HTTP at `http://ADDR/mcp` instead of stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let sandbox = match Sandbox::open(&args.root) {
        Ok(sandbox) => Arc::new(sandbox),
        Err(e) => {
            eprintln!(
                "file-server: cannot open sandbox directory {}: {e}",
                args.root.display()
            );
            return ExitCode::from(2);
        }
    };
    let server = FileServer::new(sandbox, args.dialect);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("file-server: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async {
        match args.http {
            None => serve_stdio(server).await,
            Some(addr) => serve_http(server, addr).await,
        }
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("file-server: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve_stdio(server: FileServer) -> Result<(), String> {
    let framed = mcp_resolve_runtime::framing::stdio_for(server.resolution());
    let running = server
        .serve(framed)
        .await
        .map_err(|e| format!("stdio session failed to start: {e}"))?;
    running
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| format!("stdio session failed: {e}"))
}

async fn serve_http(server: FileServer, addr: SocketAddr) -> Result<(), String> {
    let config = StreamableHttpServerConfig::default();
    let cancel = config.cancellation_token.clone();
    let resolution = server.resolution().clone();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    // Malformed JSON-RPC and resolve requests without capability metadata
    // are answered as the stdio screen answers them.
    let screened = Screened::for_resolution(&resolution, service);
    let router = axum::Router::new().nest_service("/mcp", screened);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    // One write, so a reader never sees half the address.
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!("file-server: serving http://{local}/mcp\n").as_bytes(),
    );
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            let _ = tokio::signal::ctrl_c().await;
            cancel.cancel();
        })
        .await
        .map_err(|e| format!("http server failed: {e}"))
}
