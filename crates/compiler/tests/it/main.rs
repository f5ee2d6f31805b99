//! The compiler's own suite: properties and differential tests of the
//! phases (through the hidden `internals`), the build.rs flow in a fresh
//! crate, and the host recipe against the library resolver. One test binary,
//! one module per area. Paths are the repository's ([`repo`]).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../../../tests/common/components.rs"]
mod common;

mod analysis_properties;
mod argument_depth;
mod cel_differential;
mod fresh_crate;
mod host;
mod layering;
mod multi_file;
mod worst_case_oracle;
mod yaml_fast;

/// The repository's root: the suites read its rules, fixtures and docs.
pub fn repo() -> &'static std::path::Path {
    static ROOT: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        manifest.join("../..").canonicalize().unwrap()
    })
}
