//! What generated resolvers return: static outcomes with their response bytes
//! precomputed for every dialect.

use crate::{Annotations, Dialect, Resolution};

/// A complete annotation set known when the code was generated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StaticAnnotations {
    /// `readOnlyHint`.
    pub read_only: bool,
    /// `destructiveHint`.
    pub destructive: bool,
    /// `idempotentHint`.
    pub idempotent: bool,
    /// `openWorldHint`.
    pub open_world: bool,
    /// `agencyHint` and declared hints, in declaration order.
    pub extra: &'static [(&'static str, bool)],
}

impl StaticAnnotations {
    /// The value of a hint by its wire name.
    pub fn get(&self, hint: &str) -> Option<bool> {
        match hint {
            "readOnlyHint" => Some(self.read_only),
            "destructiveHint" => Some(self.destructive),
            "idempotentHint" => Some(self.idempotent),
            "openWorldHint" => Some(self.open_world),
            other => self
                .extra
                .iter()
                .find(|(name, _)| *name == other)
                .map(|(_, v)| *v),
        }
    }

    /// The owned form.
    pub fn to_annotations(&self) -> Annotations {
        Annotations {
            read_only: self.read_only,
            destructive: self.destructive,
            idempotent: self.idempotent,
            open_world: self.open_world,
            extra: self
                .extra
                .iter()
                .map(|(k, v)| ((*k).to_string(), *v))
                .collect(),
        }
    }
}

/// The outcome of resolving a call with a generated resolver: the matched
/// variant (or the static fallback) with everything precomputed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The tool name.
    pub tool: &'static str,
    /// The variant that matched; `None` when none did and the static
    /// annotations apply.
    pub variant: Option<&'static str>,
    /// The resolved annotations.
    pub annotations: StaticAnnotations,
    /// The OAuth scopes the call needs.
    pub required_scopes: &'static [&'static str],
    /// The JSON-RPC `result` text for each dialect, in the order of [`Dialect::ALL`].
    pub results: [&'static str; 3],
}

impl Resolved {
    /// The JSON-RPC `result` of `tools/resolve` in `dialect`, as JSON text.
    pub fn result_json(&self, dialect: Dialect) -> &'static str {
        let [extension, sep1862, annotations] = self.results;
        match dialect {
            Dialect::Extension => extension,
            Dialect::Sep1862 => sep1862,
            Dialect::Annotations => annotations,
        }
    }

    /// The owned [`Resolution`], as the library resolver returns it.
    pub fn to_resolution(&self) -> Resolution {
        Resolution {
            tool: self.tool.to_string(),
            variant: self.variant.map(str::to_string),
            annotations: self.annotations.to_annotations(),
            required_scopes: self
                .required_scopes
                .iter()
                .map(|s| (*s).to_string())
                .collect(),
        }
    }
}
