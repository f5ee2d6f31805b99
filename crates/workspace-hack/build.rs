//! Empty: cargo reads a package's build dependencies only when it has a
//! build script, and the build dependencies are what this package is for
//! (Cargo.toml).

fn main() {}
