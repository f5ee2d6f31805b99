//! What generated resolvers return: static outcomes with their response text
//! precomputed for every dialect.

use std::borrow::Cow;

use crate::{Annotations, Dialect, Resolution};

/// The outcome of resolving a call with a generated resolver: the matched
/// variant (or the static fallback) with everything precomputed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The tool name.
    pub tool: &'static str,
    /// The variant that matched; `None` when none did and the static
    /// annotations apply.
    pub variant: Option<&'static str>,
    /// The resolved annotations.
    pub annotations: Annotations,
    /// The OAuth scopes the call needs.
    pub required_scopes: &'static [&'static str],
    /// The JSON-RPC `result` text of each dialect.
    pub results: ResultTexts,
}

/// The JSON-RPC `result` texts of one outcome, precomputed.
///
/// The SEP-1862 result repeats the whole tool (its `inputSchema` included),
/// so it is held in three pieces: the tool's text up to its annotations,
/// which generated code shares between all outcomes of a tool, then the
/// annotations, then the rest. Generated code grows with tools plus variants,
/// not with variants times schema size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResultTexts {
    /// The extension dialect's result.
    pub extension: &'static str,
    /// The SEP-1862 result, in three pieces to concatenate.
    pub sep1862: [&'static str; 3],
    /// The `tools/annotations` result.
    pub annotations: &'static str,
}

impl Resolved {
    /// The JSON-RPC `result` of `tools/resolve` in `dialect`, as JSON text:
    /// borrowed for the extension and `tools/annotations` dialects, put
    /// together for SEP-1862.
    #[inline]
    pub fn result_json(&self, dialect: Dialect) -> Cow<'static, str> {
        match dialect {
            Dialect::Extension => Cow::Borrowed(self.results.extension),
            Dialect::Annotations => Cow::Borrowed(self.results.annotations),
            Dialect::Sep1862 => Cow::Owned(self.results.sep1862.concat()),
        }
    }

    /// The value of the companion extension's result `_meta` entry
    /// ([`crate::VARIANT_EXTENSION_ID`]): `{"variant": …, "requiredScopes": […]}`.
    pub fn variant_meta(&self) -> serde_json::Value {
        serde_json::json!({
            "variant": self.variant,
            "requiredScopes": self.required_scopes,
        })
    }

    /// The owned [`Resolution`], as the library resolver returns it.
    pub fn to_resolution(&self) -> Resolution {
        Resolution {
            tool: self.tool.to_string(),
            variant: self.variant.map(str::to_string),
            annotations: self.annotations.clone(),
            required_scopes: self
                .required_scopes
                .iter()
                .map(|s| (*s).to_string())
                .collect(),
        }
    }
}
