//! One complete annotation set, the runtime's only one: what a resolution
//! returns, what a signature document declares, and what generated code
//! holds in its static tables.

use std::fmt;
use std::hash::{Hash, Hasher};

use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::hints::{self, BUILTIN_HINTS, DESTRUCTIVE, IDEMPOTENT, OPEN_WORLD, READ_ONLY};

/// A complete set of annotations: every hint has a value.
///
/// Serialized as the four core hints in wire order, then the extra hints by
/// name. Deserialized from any `ToolAnnotations` object: a core hint it omits
/// takes MCP's default, `title` (a display string, not a hint) is skipped,
/// and every other member must be a boolean hint.
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
    /// Extra boolean hints: `agencyHint` and hints a rules file declares.
    pub extra: ExtraHints,
}

/// The extra hints of an [`Annotations`] set, by name. Generated code holds
/// them as a static slice; everything else owns them. Two sets are equal when
/// they hold the same hints with the same values, in any order.
#[derive(Clone, Debug)]
pub enum ExtraHints {
    /// Known when the code was generated, in declaration order.
    Static(&'static [(&'static str, bool)]),
    /// Built at run time.
    Owned(Vec<(String, bool)>),
}

impl Default for ExtraHints {
    fn default() -> Self {
        ExtraHints::Owned(Vec::new())
    }
}

impl ExtraHints {
    /// Every extra hint and its value, in the order held.
    pub fn iter(&self) -> impl Iterator<Item = (&str, bool)> {
        let statics: &[(&str, bool)] = match self {
            ExtraHints::Static(s) => s,
            ExtraHints::Owned(_) => &[],
        };
        let owned: &[(String, bool)] = match self {
            ExtraHints::Static(_) => &[],
            ExtraHints::Owned(o) => o,
        };
        statics
            .iter()
            .map(|(k, v)| (*k, *v))
            .chain(owned.iter().map(|(k, v)| (k.as_str(), *v)))
    }

    /// The value of an extra hint.
    pub fn get(&self, name: &str) -> Option<bool> {
        self.iter().find(|(k, _)| *k == name).map(|(_, v)| v)
    }

    /// Every extra hint, sorted by name (the order they are written in).
    pub fn sorted(&self) -> Vec<(&str, bool)> {
        let mut all: Vec<(&str, bool)> = self.iter().collect();
        all.sort_unstable();
        all
    }

    /// How many extra hints there are.
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl PartialEq for ExtraHints {
    fn eq(&self, other: &Self) -> bool {
        self.sorted() == other.sorted()
    }
}

impl Eq for ExtraHints {}

impl Hash for ExtraHints {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.sorted().hash(state);
    }
}

impl Annotations {
    /// Every hint at its default: MCP's defaults for the core four, and no
    /// extra hints.
    pub fn defaults() -> Annotations {
        Annotations {
            read_only: BUILTIN_HINTS[READ_ONLY].default,
            destructive: BUILTIN_HINTS[DESTRUCTIVE].default,
            idempotent: BUILTIN_HINTS[IDEMPOTENT].default,
            open_world: BUILTIN_HINTS[OPEN_WORLD].default,
            extra: ExtraHints::default(),
        }
    }

    /// The value of a hint by its wire name, core or extra.
    pub fn get(&self, hint: &str) -> Option<bool> {
        match hints::core_index(hint) {
            Some(READ_ONLY) => Some(self.read_only),
            Some(DESTRUCTIVE) => Some(self.destructive),
            Some(IDEMPOTENT) => Some(self.idempotent),
            Some(OPEN_WORLD) => Some(self.open_world),
            _ => self.extra.get(hint),
        }
    }

    /// The four core hints, in wire order.
    pub fn core(&self) -> [(&'static str, bool); 4] {
        let [r, d, i, o] = hints::CORE_HINTS;
        [
            (r, self.read_only),
            (d, self.destructive),
            (i, self.idempotent),
            (o, self.open_world),
        ]
    }

    /// Every hint: the core four in wire order, then the extra hints by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, bool)> {
        self.core().into_iter().chain(self.extra.sorted())
    }

    /// The JSON text of the four core hints (`complete`: then every extra
    /// hint), in the order of [`Annotations::iter`]: what
    /// [`Annotations::core_json`] and [`Annotations::complete_json`] print
    /// as whatever serde_json's features, written without a map.
    pub fn json_text(&self, complete: bool) -> String {
        let mut out = String::with_capacity(128);
        out.push('{');
        let extra = complete.then(|| self.extra.sorted()).into_iter().flatten();
        for (i, (hint, value)) in self.core().into_iter().chain(extra).enumerate() {
            if i > 0 {
                out.push(',');
            }
            crate::json::push_str_literal(&mut out, hint);
            out.push_str(if value { ":true" } else { ":false" });
        }
        out.push('}');
        out
    }

    /// The four core hints as a JSON object, in wire order.
    pub fn core_json(&self) -> Value {
        Value::Object(
            self.core()
                .into_iter()
                .map(|(k, v)| (k.to_string(), Value::Bool(v)))
                .collect(),
        )
    }

    /// Every hint, core and extra, as a JSON object.
    pub fn complete_json(&self) -> Value {
        Value::Object(self.to_map())
    }

    /// Every hint as a JSON map (see [`Annotations::iter`] for the order).
    pub fn to_map(&self) -> Map<String, Value> {
        self.iter()
            .map(|(k, v)| (k.to_string(), Value::Bool(v)))
            .collect()
    }

    /// Reads a `ToolAnnotations` object (see the type's documentation), as
    /// deserializing one does: for a reader that has the object parsed
    /// already.
    pub fn from_map(map: &Map<String, Value>) -> Result<Annotations, AnnotationError> {
        Annotations::from_entries(map.iter().map(|(hint, value)| {
            let value = match value {
                Value::Bool(b) => Listed::Bool(*b),
                Value::String(_) => Listed::String,
                _ => Listed::Other,
            };
            (hint.as_str(), value)
        }))
    }

    /// [`Annotations::from_map`] over an object's members and the kinds of
    /// their values, for a reader that has not parsed the object (each
    /// hint once, as a parsed object has it).
    pub fn from_entries<'a>(
        entries: impl IntoIterator<Item = (&'a str, Listed)>,
    ) -> Result<Annotations, AnnotationError> {
        let mut out = Annotations::defaults();
        let mut extra = Vec::new();
        for (hint, value) in entries {
            match value {
                Listed::Bool(b) => out.set(hint, b, &mut extra),
                // ToolAnnotations' display title is not a hint
                // (`ToolAnnotations` keeps it).
                Listed::String if hint == "title" => {}
                _ if hint == "title" => return Err(AnnotationError::TitleNotString),
                _ => {
                    return Err(AnnotationError::NotBoolean {
                        hint: hint.to_string(),
                    });
                }
            }
        }
        out.extra = ExtraHints::Owned(extra);
        Ok(out)
    }

    fn set(&mut self, hint: &str, value: bool, extra: &mut Vec<(String, bool)>) {
        match hints::core_index(hint) {
            Some(READ_ONLY) => self.read_only = value,
            Some(DESTRUCTIVE) => self.destructive = value,
            Some(IDEMPOTENT) => self.idempotent = value,
            Some(OPEN_WORLD) => self.open_world = value,
            _ => extra.push((hint.to_string(), value)),
        }
    }
}

impl Serialize for Annotations {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(4 + self.extra.len()))?;
        for (k, v) in self.iter() {
            map.serialize_entry(k, &v)?;
        }
        map.end()
    }
}

/// Why a `ToolAnnotations` object is not one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AnnotationError {
    /// `title` is there and is no string.
    #[error("annotation `title` must be a string")]
    TitleNotString,
    /// A hint whose value is no boolean.
    #[error("annotation `{hint}` must be a boolean")]
    NotBoolean {
        /// The hint's name.
        hint: String,
    },
}

/// What an annotation's value is, as [`Annotations::from_entries`] reads
/// it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listed {
    /// A boolean: a hint's value.
    Bool(bool),
    /// A string (a `title`).
    String,
    /// Anything else.
    Other,
}

impl<'de> Deserialize<'de> for Annotations {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct AnnotationsVisitor;

        impl<'de> Visitor<'de> for AnnotationsVisitor {
            type Value = Annotations;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of boolean hints")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Annotations, A::Error> {
                let mut map = Map::new();
                while let Some((k, v)) = access.next_entry::<String, Value>()? {
                    map.insert(k, v);
                }
                Annotations::from_map(&map).map_err(de::Error::custom)
            }
        }

        deserializer.deserialize_map(AnnotationsVisitor)
    }
}

/// A tool's `annotations` as MCP lists them: its complete hint set and the
/// optional display `title` that `ToolAnnotations` may carry. Dereferences
/// to the hints, so it reads like an [`Annotations`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ToolAnnotations {
    /// `title`: a display name for the tool (not a hint).
    pub title: Option<String>,
    /// Every hint.
    pub hints: Annotations,
}

impl Default for Annotations {
    fn default() -> Self {
        Annotations::defaults()
    }
}

impl std::ops::Deref for ToolAnnotations {
    type Target = Annotations;
    fn deref(&self) -> &Annotations {
        &self.hints
    }
}

impl From<Annotations> for ToolAnnotations {
    fn from(hints: Annotations) -> Self {
        ToolAnnotations { title: None, hints }
    }
}

impl ToolAnnotations {
    /// `title` (when set) and the four core hints, as JSON.
    pub fn core_json(&self) -> Value {
        self.with_title(self.hints.core_json())
    }

    /// `title` (when set) and every hint, as JSON.
    pub fn complete_json(&self) -> Value {
        self.with_title(self.hints.complete_json())
    }

    fn with_title(&self, mut json: Value) -> Value {
        if let (Some(title), Value::Object(map)) = (&self.title, &mut json) {
            map.insert("title".into(), Value::String(title.clone()));
        }
        json
    }
}

impl Serialize for ToolAnnotations {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let len = 4 + self.hints.extra.len() + usize::from(self.title.is_some());
        let mut map = serializer.serialize_map(Some(len))?;
        for (k, v) in self.hints.iter() {
            map.serialize_entry(k, &v)?;
        }
        if let Some(title) = &self.title {
            map.serialize_entry("title", title)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for ToolAnnotations {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = Map::<String, Value>::deserialize(deserializer)?;
        let hints = Annotations::from_map(&map).map_err(de::Error::custom)?;
        let title = map.get("title").and_then(Value::as_str).map(str::to_string);
        Ok(ToolAnnotations { title, hints })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn static_and_owned_extras_compare_as_sets_and_write_sorted() {
        let a = Annotations {
            extra: ExtraHints::Static(&[("zHint", true), ("agencyHint", false)]),
            ..Annotations::defaults()
        };
        let b: Annotations = serde_json::from_value(json!({
            "agencyHint": false, "zHint": true, "title": "T",
            "readOnlyHint": false, "destructiveHint": true
        }))
        .unwrap();
        assert_eq!(a, b);
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false,"openWorldHint":true,"agencyHint":false,"zHint":true}"#
        );
        assert_eq!(a.get("zHint"), Some(true));
        assert_eq!(a.get("openWorldHint"), Some(true));
        assert!(serde_json::from_value::<Annotations>(json!({"readOnlyHint": 1})).is_err());
    }
}
