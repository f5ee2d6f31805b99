//! Compiles `rules/file-server.yaml` into `$OUT_DIR/file-server_resolve.rs`:
//! a rules error stops the build with `file:line:col` diagnostics.

fn main() {
    if let Err(error) = mcp_resolve::Builder::new()
        .rules("rules/file-server.yaml")
        .compile()
    {
        error.emit_cargo_errors();
        std::process::exit(1);
    }
}
