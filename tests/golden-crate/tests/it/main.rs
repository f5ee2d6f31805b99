//! The golden crate's suites, in one test binary (as every crate of the
//! workspace has one), so that the long ones run side by side: the
//! compiled Rust resolvers against the library (`agree`, `differential`),
//! and the generated TypeScript and Python resolvers against the Rust
//! engines (`typescript`, `python`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../agreement.rs"]
mod agreement;
#[path = "../../calls.rs"]
mod calls;
#[path = "../../random_rules.rs"]
#[allow(dead_code)]
mod random_rules;

mod agree;
mod differential;
mod python;
mod typescript;
