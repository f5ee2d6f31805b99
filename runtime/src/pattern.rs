//! JSON Schema `pattern`s, compiled with the same limits everywhere.

use regex::{Regex, RegexBuilder};

/// The compiled-size limit for one pattern: hostile patterns fail to compile
/// instead of exhausting memory.
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// Compiles a JSON Schema `pattern` (an unanchored search). The error is the
/// one-line reason.
pub fn compile_pattern(pattern: &str) -> Result<Regex, String> {
    RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| match e {
            regex::Error::Syntax(s) => s
                .lines()
                .rev()
                .find(|l| l.starts_with("error: "))
                .map(|l| l.trim_start_matches("error: ").to_string())
                .unwrap_or(s),
            regex::Error::CompiledTooBig(n) => format!("compiled pattern exceeds {n} bytes"),
            other => other.to_string(),
        })
}

/// Whether `value` satisfies a `pattern` compiled lazily by generated code:
/// non-strings pass (the keyword does not apply), and a pattern that did not
/// compile matches no string, as in the library resolver.
pub fn pattern_matches(regex: Option<&Regex>, value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::String(s) => regex.is_some_and(|r| r.is_match(s)),
        _ => true,
    }
}
