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

/// `mcp_resolve.<name in snake case>`: an audit record's field. The
/// fields the proxy's records have are written out here (no lookup); any
/// other is made once.
pub(crate) fn field(name: &str) -> Key {
    let known = match name {
        "event" => "mcp_resolve.event",
        "variant" => "mcp_resolve.variant",
        "annotations" => "mcp_resolve.annotations",
        "requiredScopes" => "mcp_resolve.required_scopes",
        "described" => "mcp_resolve.described",
        "decision" => "mcp_resolve.decision",
        "rule" => "mcp_resolve.rule",
        "policies" => "mcp_resolve.policies",
        "outcome" => "mcp_resolve.outcome",
        "upstreamMs" => "mcp_resolve.upstream_ms",
        "arguments" => "mcp_resolve.arguments",
        "principal" => "mcp_resolve.principal",
        "reason" => "mcp_resolve.reason",
        "error" => "mcp_resolve.error",
        _ => {
            return FIELDS.get(name, || {
                format!("{NAMESPACE}.{}", crate::export::snake(name))
            });
        }
    };
    Key::from_static_str(known)
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
        // The fields written out are the ones made.
        for name in [
            "event",
            "variant",
            "annotations",
            "requiredScopes",
            "described",
            "decision",
            "rule",
            "policies",
            "outcome",
            "upstreamMs",
            "arguments",
            "principal",
            "reason",
            "error",
        ] {
            let made = format!("{NAMESPACE}.{}", crate::export::snake(name));
            assert_eq!(field(name).as_str(), made);
        }
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
