//! Every golden in `generated/` compiled under `#![deny(warnings)]` (and,
//! through the workspace's CI, clippy `-D warnings`), plus resolvers written
//! by the build.rs `Builder`. `tests/it/codegen.rs` in the command's suite checks that
//! every rules file in `rules/` has a module here.
#![deny(warnings)]

/// The goldens, one module per file in `rules/`.
pub mod goldens {
    /// `rules/coding-agent.yaml`.
    pub mod coding_agent {
        include!("../../../generated/coding-agent_resolve.rs");
    }
    /// `rules/file-server.yaml`.
    pub mod file_server {
        include!("../../../generated/file-server_resolve.rs");
    }
    /// `rules/filesystem.yaml`.
    pub mod filesystem {
        include!("../../../generated/filesystem_resolve.rs");
    }
    /// `rules/github-api.yaml`.
    pub mod github_api {
        include!("../../../generated/github-api_resolve.rs");
    }
    /// `rules/issue-tracker.yaml`.
    pub mod issue_tracker {
        include!("../../../generated/issue-tracker_resolve.rs");
    }
    /// `rules/real-mcp-server-git.yaml`.
    pub mod real_mcp_server_git {
        include!("../../../generated/real-mcp-server-git_resolve.rs");
    }
    /// `rules/real-server-everything.yaml`.
    pub mod real_server_everything {
        include!("../../../generated/real-server-everything_resolve.rs");
    }
    /// `rules/real-server-filesystem.yaml`.
    pub mod real_server_filesystem {
        include!("../../../generated/real-server-filesystem_resolve.rs");
    }
    /// `rules/real-server-memory.yaml`.
    pub mod real_server_memory {
        include!("../../../generated/real-server-memory_resolve.rs");
    }
    /// `rules/repo-contents.rules`.
    pub mod repo_contents {
        include!("../../../generated/repo-contents_resolve.rs");
    }
}

/// Written by `build.rs` with `mcp_resolve::Builder`.
pub mod built {
    /// `rules/file-server.yaml`, as a server crate would include it.
    pub mod file_server {
        include!(concat!(env!("OUT_DIR"), "/file-server_resolve.rs"));
    }
    /// `tests/fixtures/codegen/hostile.yaml`: names, values and patterns
    /// made to break naive code generation.
    pub mod hostile {
        include!(concat!(env!("OUT_DIR"), "/hostile_resolve.rs"));
    }
}

/// The path of a file the build script wrote.
pub fn built_file(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("OUT_DIR")).join(name)
}

/// Resolvers `build.rs` generated for random rule sets (see
/// `tests/differential.rs`).
pub mod random {
    /// A generated `resolve` function.
    pub type ResolveFn =
        fn(
            &str,
            &mcp_resolve_runtime::serde_json::Value,
        )
            -> Result<&'static mcp_resolve_runtime::Resolved, mcp_resolve_runtime::RpcError>;

    include!(concat!(env!("OUT_DIR"), "/random_sets.rs"));
}
