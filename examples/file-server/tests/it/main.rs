//! The file server's tests, one binary (a module a concern): its command
//! line, the resolution it serves, the host's verification of it, JSON-RPC
//! framing, the conformance suite, and the real Python and TypeScript
//! clients end to end.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

mod cli;
mod conformance;
mod framing;
mod host_verification;
mod python_client;
mod resolution;
mod ts_client;
