//! Attribute keys made once: an audit record's field names and a
//! server's hint names become `mcp_resolve.…` keys on every call, and
//! formatting each again cost the worker a string per field and per hint.
//! The names come from the audit record's shape and the rules (not from a
//! call's arguments), so they are few; past [`MOST`] names a key is made
//! each time instead of kept.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use opentelemetry::Key;

use crate::NAMESPACE;

/// The most names kept per kind.
const MOST: usize = 512;

/// Keys by name, for one kind of name.
struct Made(Mutex<HashMap<String, Key>>);

static FIELDS: LazyLock<Made> = LazyLock::new(|| Made(Mutex::new(HashMap::new())));
static HINTS: LazyLock<Made> = LazyLock::new(|| Made(Mutex::new(HashMap::new())));

impl Made {
    fn get(&self, name: &str, make: impl FnOnce() -> String) -> Key {
        let Ok(mut made) = self.0.lock() else {
            return Key::from(make());
        };
        if let Some(key) = made.get(name) {
            return key.clone();
        }
        let key = Key::from(Arc::<str>::from(make()));
        if made.len() < MOST {
            made.insert(name.to_string(), key.clone());
        }
        key
    }
}

/// `mcp_resolve.<name in snake case>`: an audit record's field.
pub(crate) fn field(name: &str) -> Key {
    FIELDS.get(name, || format!("{NAMESPACE}.{}", crate::snake(name)))
}

/// `mcp_resolve.hint.<name>`: a resolved hint.
pub(crate) fn hint(name: &str) -> Key {
    HINTS.get(name, || format!("{NAMESPACE}.hint.{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_the_namespaced_names_and_made_once() {
        assert_eq!(
            field("requiredScopes").as_str(),
            "mcp_resolve.required_scopes"
        );
        assert_eq!(
            hint("readOnlyHint").as_str(),
            "mcp_resolve.hint.readOnlyHint"
        );
        let (a, b) = (hint("privateHint"), hint("privateHint"));
        assert_eq!(a, b);
        // Past the bound, still the right key.
        for i in 0..MOST + 10 {
            assert_eq!(
                field(&format!("f{i}")).as_str(),
                format!("mcp_resolve.f{i}")
            );
        }
    }
}
