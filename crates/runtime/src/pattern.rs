//! The regex dialect, and the JSON Schema validator options, decided once.
//!
//! - A `pattern` in a rules file's `when` (and so in a signature's
//!   `argumentPatterns`) is a search with the `regex` crate (linear time,
//!   no lookaround), compiled under [`REGEX_SIZE_LIMIT`]: by the compiler's
//!   checks, the library resolver, generated code and host verification alike
//!   ([`compile_pattern`], [`pattern_validator_options`]).
//! - A tool's `inputSchema` is the server's own schema, validated as written
//!   with `jsonschema`'s ECMA-262-like default engine
//!   ([`schema_validator_options`]); formats are not asserted.

use std::sync::OnceLock;

use regex::{Regex, RegexBuilder};

/// The compiled-size limit for one pattern: hostile patterns fail to compile
/// instead of exhausting memory.
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// Why a `pattern` does not compile under this dialect and its limits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct PatternError {
    message: String,
}

impl PatternError {
    /// The one-line reason (the `regex` crate's message without its caret drawing).
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// Compiles a JSON Schema `pattern` (an unanchored search).
pub fn compile_pattern(pattern: &str) -> Result<Regex, PatternError> {
    let message = match RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build()
    {
        Ok(regex) => return Ok(regex),
        Err(regex::Error::Syntax(s)) => s
            .lines()
            .rev()
            .find(|l| l.starts_with("error: "))
            .map(|l| l.trim_start_matches("error: ").to_string())
            .unwrap_or(s),
        Err(regex::Error::CompiledTooBig(n)) => format!("compiled pattern exceeds {n} bytes"),
        Err(other) => other.to_string(),
    };
    Err(PatternError { message })
}

/// Options for validating a tool's full `inputSchema`.
pub fn schema_validator_options() -> jsonschema::ValidationOptions<'static> {
    jsonschema::options().should_validate_formats(false)
}

/// Options for validating `argumentPatterns`: the `regex` crate under the
/// same limits as [`compile_pattern`], so a host evaluates patterns exactly
/// as the compiler checked them and generated code runs them.
pub fn pattern_validator_options() -> jsonschema::ValidationOptions<'static> {
    schema_validator_options().with_pattern_options(
        jsonschema::PatternOptions::regex()
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_SIZE_LIMIT),
    )
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

/// A `pattern` as generated code holds it, compiled with [`compile_pattern`]
/// on first use; a pattern that does not compile matches no string. One
/// non-generic type for every pattern, so generated code needs no closure
/// (and no lazy static type) of its own per pattern.
#[derive(Debug)]
pub struct LazyPattern {
    pattern: &'static str,
    compiled: OnceLock<Option<Regex>>,
}

impl LazyPattern {
    /// A lazily compiled `pattern`.
    pub const fn new(pattern: &'static str) -> Self {
        LazyPattern {
            pattern,
            compiled: OnceLock::new(),
        }
    }

    /// The compiled regex, or `None` when the pattern does not compile.
    pub fn get(&self) -> Option<&Regex> {
        self.compiled
            .get_or_init(|| compile_pattern(self.pattern).ok())
            .as_ref()
    }

    /// [`pattern_matches`] with this pattern: non-strings pass.
    #[inline]
    pub fn matches(&self, value: &serde_json::Value) -> bool {
        pattern_matches(self.get(), value)
    }
}
