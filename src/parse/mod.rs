//! Front ends: text to AST with spans.
pub mod decode;
pub mod dsl;
pub mod expr;
pub(crate) mod grammar;
pub mod yaml;
