//! Regex compilation with limits, shared by checks, the resolver and
//! generated code (the implementation lives in the runtime crate), and
//! remembered for the process: a large server repeats its patterns across
//! tools, and each compilation costs far more than a lookup.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use mcp_resolve_runtime::pattern::PatternError;
use regex::Regex;

/// Patterns remembered at most; past it, patterns are compiled each time
/// (memory stays bounded however many distinct patterns a process sees).
const CAPACITY: usize = 65_536;

type Cache = Mutex<HashMap<String, Result<Regex, PatternError>>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// [`mcp_resolve_runtime::pattern::compile_pattern`], compiled once per
/// process for each pattern (a `Regex` is a cheap handle to share).
pub(crate) fn compile_pattern(pattern: &str) -> Result<Regex, PatternError> {
    if let Some(found) = cache()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(pattern)
    {
        return found.clone();
    }
    // Compiled outside the lock: threads compiling different patterns do
    // not wait for each other (two compiling the same one agree).
    let compiled = mcp_resolve_runtime::pattern::compile_pattern(pattern);
    let mut cache = cache().lock().unwrap_or_else(|e| e.into_inner());
    if cache.len() < CAPACITY {
        cache.insert(pattern.to_string(), compiled.clone());
    }
    compiled
}
