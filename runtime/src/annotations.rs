use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// The four core hints of MCP `ToolAnnotations`, in their wire order.
pub const CORE_HINTS: [&str; 4] = [
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
];

/// A complete set of resolved annotations: every hint has a value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Annotations {
    /// `readOnlyHint`: the tool does not modify its environment.
    pub read_only: bool,
    /// `destructiveHint`: modifications may be destructive (meaningful when not read-only).
    pub destructive: bool,
    /// `idempotentHint`: repeating the call has no further effect (meaningful when not read-only).
    pub idempotent: bool,
    /// `openWorldHint`: the tool interacts with an open world of external entities.
    pub open_world: bool,
    /// Extra boolean hints (`agencyHint` and hints a rules file declares), by name.
    pub extra: BTreeMap<String, bool>,
}

impl Annotations {
    /// The value of a hint by its wire name, core or extra.
    pub fn get(&self, hint: &str) -> Option<bool> {
        match hint {
            "readOnlyHint" => Some(self.read_only),
            "destructiveHint" => Some(self.destructive),
            "idempotentHint" => Some(self.idempotent),
            "openWorldHint" => Some(self.open_world),
            other => self.extra.get(other).copied(),
        }
    }

    /// The four core hints as a JSON object, in wire order.
    pub fn core_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("readOnlyHint".into(), Value::Bool(self.read_only));
        map.insert("destructiveHint".into(), Value::Bool(self.destructive));
        map.insert("idempotentHint".into(), Value::Bool(self.idempotent));
        map.insert("openWorldHint".into(), Value::Bool(self.open_world));
        Value::Object(map)
    }

    /// Every hint, core and extra, as a JSON object.
    pub fn complete_json(&self) -> Value {
        let mut value = self.core_json();
        if let Value::Object(map) = &mut value {
            for (name, v) in &self.extra {
                map.insert(name.clone(), Value::Bool(*v));
            }
        }
        value
    }
}
