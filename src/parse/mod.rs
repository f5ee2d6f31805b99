//! Front ends: text to AST with spans.
pub mod decode;
pub mod yaml;
