//! The `mcp-resolve` command.
// No function over 100 lines (clippy.toml); each exception says why it
// reads better whole.
#![warn(clippy::too_many_lines)]
mod cli;

// The command allocates many small nodes (YAML trees, schemas, diagnostics)
// on several threads at once; mimalloc's per-thread heaps do that faster
// and with less memory than the system allocator (docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::main()
}
