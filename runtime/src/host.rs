//! Host-side verification against a signature document.
//!
//! A host (an MCP client) that pinned a server's signature document
//! (docs/signature.md) uses this module to check what the server says at run
//! time against what it published:
//!
//! - [`verify_tools_list`]: every tool of a `tools/list` result is in the
//!   signature, with the same name, title, description, schemas and static
//!   annotations, and the resolvable marker only where the signature has
//!   variants (a *subset*: the server may list fewer tools);
//! - [`verify_resolution`]: a `tools/resolve` (or `tools/annotations`) result,
//!   in any of the three wire dialects, equals what the signature declares for
//!   those arguments under the host-side evaluation recipe.
//!
//! On success the host should use the signature's answer ([`Expected`]), which
//! is complete, rather than the server's. With the `fingerprint` feature,
//! [`Signature::verified`] and [`Signature::pinned`] also recompute the
//! document's fingerprint (RFC 8785 + SHA-256).
//!
//! ```
//! use mcp_resolve_runtime::host::{Signature, ViolationKind, verify_resolution};
//! use serde_json::json;
//!
//! let signature = Signature::from_value(json!({
//!     "tools": [{
//!         "name": "manage_files",
//!         "inputSchema": {"type": "object", "properties": {"action": {"enum": ["read", "delete"]}},
//!                         "required": ["action"]},
//!         "annotations": {"readOnlyHint": false, "destructiveHint": true,
//!                         "idempotentHint": false, "openWorldHint": false},
//!         "resolvedVariants": [{
//!             "name": "read",
//!             "when": {"argumentPatterns": {"action": {"const": "read"}}},
//!             "annotations": {"readOnlyHint": true, "destructiveHint": false,
//!                             "idempotentHint": true, "openWorldHint": false}
//!         }]
//!     }]
//! }))?;
//!
//! // An honest answer for a read.
//! let read = json!({"action": "read"});
//! let answer = json!({"resultType": "complete", "name": "manage_files", "annotations":
//!     {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}});
//! let expected = verify_resolution(&signature, "manage_files", &read, &answer)?;
//! assert_eq!(expected.variant().map(|v| v.name()), Some("read"));
//!
//! // The same answer for a delete is a lie: the signature says it is destructive.
//! let delete = json!({"action": "delete"});
//! let err = verify_resolution(&signature, "manage_files", &delete, &answer).unwrap_err();
//! assert_eq!(err.0[0].kind, ViolationKind::Annotation);
//! assert!(err.any_less_conservative());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Map, Value, json};

use crate::{ArgumentValidator, CORE_HINTS, EXTENSION_ID};

/// The most conservative value of a hint, when its direction is known. For
/// the four core hints this is also the value MCP assumes when a hint is
/// absent.
pub fn worst_value(hint: &str) -> Option<bool> {
    match hint {
        "readOnlyHint" | "idempotentHint" => Some(false),
        "destructiveHint" | "openWorldHint" | "agencyHint" => Some(true),
        _ => None,
    }
}

/// `sha256:<hex>` of the RFC 8785 (JCS) form of `document` without its
/// `fingerprint` field: the fingerprint scheme of docs/signature.md.
#[cfg(feature = "fingerprint")]
pub fn fingerprint(document: &Value) -> String {
    use sha2::{Digest, Sha256};

    let canonical = match document {
        Value::Object(map) => {
            let mut map = map.clone();
            map.remove("fingerprint");
            serde_json_canonicalizer::to_string(&Value::Object(map))
        }
        other => serde_json_canonicalizer::to_string(other),
    }
    .unwrap_or_default();
    let digest = Sha256::digest(canonical.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// A signature document that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignatureError(pub String);

impl fmt::Display for SignatureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SignatureError {}

fn bad(message: impl Into<String>) -> SignatureError {
    SignatureError(message.into())
}

/// A signature document, checked and compiled for evaluation.
#[derive(Debug)]
pub struct Signature {
    document: Value,
    tools: Vec<SignedTool>,
}

/// One tool of a signature.
#[derive(Debug)]
pub struct SignedTool {
    name: String,
    tool: Map<String, Value>,
    validator: ArgumentValidator,
    annotations: Map<String, Value>,
    scopes: Vec<String>,
    variants: Vec<SignedVariant>,
}

/// One entry of a tool's `resolvedVariants`.
#[derive(Debug)]
pub struct SignedVariant {
    name: String,
    patterns: Map<String, Value>,
    validator: jsonschema::Validator,
    annotations: Map<String, Value>,
    scopes: Vec<String>,
}

/// What the signature declares for one call.
#[derive(Clone, Copy, Debug)]
pub struct Expected<'a> {
    tool: &'a SignedTool,
    variant: Option<usize>,
}

impl Signature {
    /// Checks the document's structure and compiles every schema in it. The
    /// fingerprint is not recomputed: see [`Signature::verified`].
    pub fn from_value(document: Value) -> Result<Self, SignatureError> {
        let Value::Object(root) = &document else {
            return Err(bad("a signature document must be a JSON object"));
        };
        let tools = root
            .get("tools")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("a signature document needs a `tools` array"))?;
        let mut compiled: Vec<SignedTool> = Vec::with_capacity(tools.len());
        for (i, tool) in tools.iter().enumerate() {
            let tool = SignedTool::new(tool).map_err(|e| bad(format!("tools[{i}]: {e}")))?;
            if compiled.iter().any(|t| t.name == tool.name) {
                return Err(bad(format!("tool `{}` is listed twice", tool.name)));
            }
            compiled.push(tool);
        }
        Ok(Signature {
            document,
            tools: compiled,
        })
    }

    /// Parses JSON text with [`Signature::from_value`].
    pub fn from_json(text: &str) -> Result<Self, SignatureError> {
        let document: Value = serde_json::from_str(text)
            .map_err(|e| bad(format!("a signature document must be JSON: {e}")))?;
        Self::from_value(document)
    }

    /// Like [`Signature::from_value`], and the document's `fingerprint` must
    /// be present and equal the recomputed one.
    #[cfg(feature = "fingerprint")]
    pub fn verified(document: Value) -> Result<Self, SignatureError> {
        let declared = document
            .get("fingerprint")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("the signature document has no `fingerprint`"))?
            .to_string();
        let actual = fingerprint(&document);
        if declared != actual {
            return Err(bad(format!(
                "the document's fingerprint is {declared} but its content hashes to {actual}"
            )));
        }
        Self::from_value(document)
    }

    /// Like [`Signature::verified`], and the fingerprint must be `pin`, the
    /// one the host stored when the user approved the server.
    #[cfg(feature = "fingerprint")]
    pub fn pinned(document: Value, pin: &str) -> Result<Self, SignatureError> {
        let signature = Self::verified(document)?;
        match signature.fingerprint() {
            Some(fp) if fp == pin => Ok(signature),
            other => Err(bad(format!(
                "the signature's fingerprint is {} but {pin} is pinned",
                other.unwrap_or("missing")
            ))),
        }
    }

    /// The document's `fingerprint` field, as written.
    pub fn fingerprint(&self) -> Option<&str> {
        self.document.get("fingerprint").and_then(Value::as_str)
    }

    /// The whole document.
    pub fn document(&self) -> &Value {
        &self.document
    }

    /// Every tool, in document order.
    pub fn tools(&self) -> &[SignedTool] {
        &self.tools
    }

    /// The tool called `name`.
    pub fn tool(&self, name: &str) -> Option<&SignedTool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// The host-side evaluation recipe: what the signature declares for the
    /// call `(name, arguments)`. Fails for a tool the signature lacks and for
    /// arguments its `inputSchema` refuses (no resolution is declared then).
    pub fn expect(&self, name: &str, arguments: &Value) -> Result<Expected<'_>, Violation> {
        let tool = self.tool(name).ok_or_else(|| {
            Violation::new(
                ViolationKind::UnknownTool,
                name,
                format!("the signature has no tool `{name}`"),
            )
        })?;
        tool.expect(arguments)
    }

    /// See [`verify_tools_list`].
    pub fn verify_tools_list(&self, result: &Value) -> Result<(), Violations> {
        verify_tools_list(self, result)
    }

    /// See [`verify_resolution`].
    pub fn verify_resolution(
        &self,
        name: &str,
        arguments: &Value,
        result: &Value,
    ) -> Result<Expected<'_>, Violations> {
        verify_resolution(self, name, arguments, result)
    }
}

fn string_list(value: Option<&Value>, what: &str) -> Result<Vec<String>, String> {
    match value {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|s| {
                s.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("`{what}` must hold strings"))
            })
            .collect(),
        Some(_) => Err(format!("`{what}` must be an array")),
    }
}

fn hint_set(value: Option<&Value>) -> Result<Map<String, Value>, String> {
    let Some(value) = value else {
        return Err("`annotations` is missing".into());
    };
    let map = value
        .as_object()
        .ok_or_else(|| "`annotations` must be an object".to_string())?;
    let mut hints = Map::new();
    for (hint, v) in map {
        match v {
            Value::Bool(_) => {
                hints.insert(hint.clone(), v.clone());
            }
            // ToolAnnotations' display title is not a hint.
            Value::String(_) if hint == "title" => {}
            _ => return Err(format!("annotation `{hint}` must be a boolean")),
        }
    }
    Ok(hints)
}

impl SignedTool {
    /// Checks and compiles one tool object of a signature document.
    pub fn from_value(tool: &Value) -> Result<Self, SignatureError> {
        Self::new(tool).map_err(SignatureError)
    }

    fn new(tool: &Value) -> Result<Self, String> {
        let object = tool.as_object().ok_or("a tool must be an object")?;
        let name = object
            .get("name")
            .and_then(Value::as_str)
            .ok_or("a tool needs a string `name`")?
            .to_string();
        let in_tool = |e: String| format!("tool `{name}`: {e}");
        let schema = object
            .get("inputSchema")
            .ok_or_else(|| in_tool("`inputSchema` is missing".into()))?;
        let validator = ArgumentValidator::new(schema)
            .map_err(|e| in_tool(format!("`inputSchema` does not compile: {e}")))?;
        let annotations = hint_set(object.get("annotations")).map_err(in_tool)?;
        let scopes =
            string_list(object.get("requiredScopes"), "requiredScopes").map_err(in_tool)?;
        let mut variants = Vec::new();
        match object.get("resolvedVariants") {
            None => {}
            Some(Value::Array(entries)) => {
                for (i, entry) in entries.iter().enumerate() {
                    variants.push(
                        SignedVariant::new(entry)
                            .map_err(|e| in_tool(format!("resolvedVariants[{i}]: {e}")))?,
                    );
                }
            }
            Some(_) => return Err(in_tool("`resolvedVariants` must be an array".into())),
        }
        Ok(SignedTool {
            name,
            tool: object.clone(),
            validator,
            annotations,
            scopes,
            variants,
        })
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tool's object in the signature.
    pub fn tool(&self) -> &Map<String, Value> {
        &self.tool
    }

    /// The tool's `inputSchema`.
    pub fn input_schema(&self) -> &Value {
        self.tool.get("inputSchema").unwrap_or(&Value::Null)
    }

    /// The static (worst-case) annotations, every hint explicit.
    pub fn annotations(&self) -> &Map<String, Value> {
        &self.annotations
    }

    /// The static `requiredScopes`.
    pub fn required_scopes(&self) -> &[String] {
        &self.scopes
    }

    /// The entries of `resolvedVariants`, in order.
    pub fn variants(&self) -> &[SignedVariant] {
        &self.variants
    }

    /// Whether the tool has variants (is resolvable).
    pub fn is_resolvable(&self) -> bool {
        !self.variants.is_empty()
    }

    /// Whether `arguments` are an object the `inputSchema` accepts (within
    /// the runtime's nesting limit).
    pub fn accepts(&self, arguments: &Value) -> bool {
        self.validator.is_valid(arguments)
    }

    /// The index of the first entry whose `argumentPatterns` match, or `None`
    /// when the static annotations apply. Does not validate the arguments.
    pub fn land(&self, arguments: &Value) -> Option<usize> {
        self.variants.iter().position(|v| v.matches(arguments))
    }

    /// The host-side evaluation recipe for this tool.
    pub fn expect(&self, arguments: &Value) -> Result<Expected<'_>, Violation> {
        if let Err(e) = self.validator.validate(&self.name, arguments) {
            return Err(Violation::new(
                ViolationKind::InvalidArguments,
                &self.name,
                format!(
                    "the signature declares no resolution for arguments its inputSchema refuses ({})",
                    e.message
                ),
            ));
        }
        Ok(Expected {
            tool: self,
            variant: self.land(arguments),
        })
    }
}

impl SignedVariant {
    fn new(entry: &Value) -> Result<Self, String> {
        let object = entry.as_object().ok_or("an entry must be an object")?;
        let name = object
            .get("name")
            .and_then(Value::as_str)
            .ok_or("an entry needs a string `name`")?
            .to_string();
        let patterns = object
            .get("when")
            .and_then(|w| w.get("argumentPatterns"))
            .and_then(Value::as_object)
            .ok_or_else(|| format!("variant `{name}` needs `when.argumentPatterns` (an object)"))?
            .clone();
        let required: Vec<&String> = patterns
            .iter()
            .filter(|(_, p)| **p != Value::Bool(false))
            .map(|(k, _)| k)
            .collect();
        let schema = json!({ "type": "object", "properties": patterns, "required": required });
        let validator = jsonschema::options()
            .should_validate_formats(false)
            .build(&schema)
            .map_err(|e| format!("variant `{name}`: `argumentPatterns` do not compile: {e}"))?;
        let annotations =
            hint_set(object.get("annotations")).map_err(|e| format!("variant `{name}`: {e}"))?;
        let scopes = string_list(object.get("requiredScopes"), "requiredScopes")
            .map_err(|e| format!("variant `{name}`: {e}"))?;
        Ok(SignedVariant {
            name,
            patterns,
            validator,
            annotations,
            scopes,
        })
    }

    /// The variant's name (shared by the entries of one variant's disjuncts).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `when.argumentPatterns`.
    pub fn argument_patterns(&self) -> &Map<String, Value> {
        &self.patterns
    }

    /// The resolved annotations, every hint explicit.
    pub fn annotations(&self) -> &Map<String, Value> {
        &self.annotations
    }

    /// The scopes a call landing here needs.
    pub fn required_scopes(&self) -> &[String] {
        &self.scopes
    }

    /// Whether `arguments` satisfy the entry's `argumentPatterns`.
    pub fn matches(&self, arguments: &Value) -> bool {
        self.validator.is_valid(arguments)
    }
}

impl<'a> Expected<'a> {
    /// The tool.
    pub fn tool(&self) -> &'a SignedTool {
        self.tool
    }

    /// The index in `resolvedVariants` of the entry that matched, or `None`
    /// when the static annotations apply.
    pub fn index(&self) -> Option<usize> {
        self.variant
    }

    /// The entry that matched.
    pub fn variant(&self) -> Option<&'a SignedVariant> {
        self.variant.and_then(|i| self.tool.variants.get(i))
    }

    /// The annotations the call resolves to, every hint explicit.
    pub fn annotations(&self) -> &'a Map<String, Value> {
        self.variant()
            .map_or(&self.tool.annotations, |v| &v.annotations)
    }

    /// The scopes the call needs.
    pub fn required_scopes(&self) -> &'a [String] {
        self.variant().map_or(&self.tool.scopes, |v| &v.scopes)
    }
}

/// What kind of disagreement a [`Violation`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ViolationKind {
    /// The server offers or resolves a tool the signature does not have.
    UnknownTool,
    /// `tools/list` names a tool twice.
    DuplicateTool,
    /// A tool's title, description, `inputSchema` or `outputSchema` differs.
    ToolChanged,
    /// The server marks a tool resolvable that has no variants in the signature.
    NotResolvable,
    /// A resolution for arguments the signature's `inputSchema` refuses.
    InvalidArguments,
    /// A hint's value differs from the signature's.
    Annotation,
    /// A hint the signature does not declare.
    UndeclaredHint,
    /// The scopes a resolution asks for differ from the signature's.
    Scopes,
    /// The result is not a `tools/list` or resolution result of any dialect,
    /// or names another tool.
    Malformed,
}

impl ViolationKind {
    /// The kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ViolationKind::UnknownTool => "unknown-tool",
            ViolationKind::DuplicateTool => "duplicate-tool",
            ViolationKind::ToolChanged => "tool-changed",
            ViolationKind::NotResolvable => "not-resolvable",
            ViolationKind::InvalidArguments => "invalid-arguments",
            ViolationKind::Annotation => "annotation",
            ViolationKind::UndeclaredHint => "undeclared-hint",
            ViolationKind::Scopes => "scopes",
            ViolationKind::Malformed => "malformed",
        }
    }
}

/// One way a server's answer disagrees with its signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// What kind of disagreement.
    pub kind: ViolationKind,
    /// The tool concerned (empty when the result names none).
    pub tool: String,
    /// Lowercase, user text in backticks.
    pub message: String,
    /// Whether the server's word is less conservative than the signature — a
    /// hint claimed safer, scopes beyond the declared ones, a tool, hint or
    /// resolution the signature does not declare — so a client acting on it
    /// would under-prompt.
    pub less_conservative: bool,
}

impl Violation {
    fn new(kind: ViolationKind, tool: &str, message: String) -> Self {
        let less_conservative = matches!(
            kind,
            ViolationKind::UnknownTool
                | ViolationKind::InvalidArguments
                | ViolationKind::UndeclaredHint
                | ViolationKind::NotResolvable
        );
        Violation {
            kind,
            tool: tool.to_string(),
            message,
            less_conservative,
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.tool.is_empty() {
            write!(f, "[{}] {}", self.kind.as_str(), self.message)
        } else {
            write!(
                f,
                "[{}] tool `{}`: {}",
                self.kind.as_str(),
                self.tool,
                self.message
            )
        }
    }
}

/// Every disagreement found in one result (never empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violations(pub Vec<Violation>);

impl Violations {
    /// Whether any violation is less conservative than the signature.
    pub fn any_less_conservative(&self) -> bool {
        self.0.iter().any(|v| v.less_conservative)
    }
}

impl fmt::Display for Violations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len();
        write!(
            f,
            "{n} disagreement{} with the signature",
            if n == 1 { "" } else { "s" }
        )?;
        for v in &self.0 {
            write!(f, "\n  {v}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Violations {}

impl From<Violation> for Violations {
    fn from(v: Violation) -> Self {
        Violations(vec![v])
    }
}

fn finish(violations: Vec<Violation>) -> Result<(), Violations> {
    if violations.is_empty() {
        Ok(())
    } else {
        Err(Violations(violations))
    }
}

/// Compares the hints a server reports with the signature's complete set.
///
/// Every hint the signature declares that the server reports must have the
/// same value; a core hint the server leaves out counts as its MCP default
/// (see [`worst_value`]); `only_core` limits the comparison to the four core
/// hints (the extension dialect returns exactly those). A boolean hint the
/// signature does not declare is a violation.
fn compare_hints(
    tool: &str,
    expected: &Map<String, Value>,
    reported: &Map<String, Value>,
    only_core: bool,
    context: &str,
    out: &mut Vec<Violation>,
) {
    for (hint, value) in reported {
        match value {
            Value::Bool(_) if !expected.contains_key(hint) => out.push(Violation::new(
                ViolationKind::UndeclaredHint,
                tool,
                format!("{context} reports `{hint}`, which the signature does not declare"),
            )),
            Value::Bool(_) => {}
            Value::String(_) if hint == "title" => {}
            _ => out.push(Violation::new(
                ViolationKind::Malformed,
                tool,
                format!("{context} reports `{hint}` as {value}, not a boolean"),
            )),
        }
    }
    for (hint, want) in expected {
        let Some(want) = want.as_bool() else { continue };
        let core = CORE_HINTS.contains(&hint.as_str());
        if only_core && !core {
            continue;
        }
        let got = match reported.get(hint) {
            Some(Value::Bool(b)) => *b,
            Some(_) => continue,
            None if core => match worst_value(hint) {
                Some(default) => default,
                None => continue,
            },
            // A non-core hint left out makes no claim.
            None => continue,
        };
        if got != want {
            let mut v = Violation::new(
                ViolationKind::Annotation,
                tool,
                format!(
                    "{context} has `{hint}: {got}`{} where the signature declares `{want}`",
                    if reported.contains_key(hint) {
                        ""
                    } else {
                        " (left out, so the MCP default)"
                    }
                ),
            );
            // A claim away from the worst value is less conservative; for a
            // hint with no known direction, any difference may be.
            v.less_conservative = worst_value(hint).is_none_or(|worst| want == worst);
            out.push(v);
        }
    }
}

fn compare_scopes(
    tool: &str,
    expected: &[String],
    reported: &BTreeSet<String>,
    context: &str,
    out: &mut Vec<Violation>,
) {
    let expected: BTreeSet<String> = expected.iter().cloned().collect();
    if &expected != reported {
        let mut v = Violation::new(
            ViolationKind::Scopes,
            tool,
            format!(
                "{context} asks for scopes {:?} where the signature declares {:?}",
                reported, expected
            ),
        );
        // Scopes beyond the signature's are access it did not declare.
        v.less_conservative = !reported.is_subset(&expected);
        out.push(v);
    }
}

/// The scopes of SEP-1488 `securitySchemes`: the union of the `oauth2`
/// schemes' scopes (`noauth` needs none). `None` when the field is absent.
fn scopes_of_schemes(tool: &Map<String, Value>) -> Option<Result<BTreeSet<String>, String>> {
    let schemes = tool.get("securitySchemes")?;
    let Some(schemes) = schemes.as_array() else {
        return Some(Err("`securitySchemes` is not an array".into()));
    };
    let mut scopes = BTreeSet::new();
    for scheme in schemes {
        if let Some(list) = scheme.get("scopes") {
            match string_list(Some(list), "securitySchemes[].scopes") {
                Ok(list) => scopes.extend(list),
                Err(e) => return Some(Err(e)),
            }
        }
    }
    Some(Ok(scopes))
}

/// The fields of a tool the signature pins besides its annotations.
const PINNED_FIELDS: [&str; 4] = ["title", "description", "inputSchema", "outputSchema"];

fn compare_tool_fields(
    signed: &SignedTool,
    listed: &Map<String, Value>,
    context: &str,
    out: &mut Vec<Violation>,
) {
    for field in PINNED_FIELDS {
        if listed.get(field) != signed.tool.get(field) {
            out.push(Violation::new(
                ViolationKind::ToolChanged,
                &signed.name,
                format!("{context} has a `{field}` that differs from the signature's"),
            ));
        }
    }
}

fn marked_resolvable(tool: &Map<String, Value>) -> bool {
    let extension = tool
        .get("_meta")
        .and_then(|m| m.get(EXTENSION_ID))
        .and_then(|m| m.get("resolvable"))
        == Some(&Value::Bool(true));
    extension
        || tool.get("resolve") == Some(&Value::Bool(true))
        || tool.get("dynamicAnnotations") == Some(&Value::Bool(true))
}

/// Checks a `tools/list` result (`{"tools": [...]}`, one page or all pages
/// concatenated, or the bare array) against the signature: every listed tool
/// must be in the signature with the same title, description, `inputSchema`
/// and `outputSchema`, static annotations equal to the signature's, and a
/// resolvable marker (of any dialect) only if the signature gives it
/// variants. Tools the signature has but the server does not list are fine.
pub fn verify_tools_list(signature: &Signature, result: &Value) -> Result<(), Violations> {
    let tools = match result {
        Value::Array(tools) => tools,
        other => match other.get("tools").and_then(Value::as_array) {
            Some(tools) => tools,
            None => {
                return Err(Violation::new(
                    ViolationKind::Malformed,
                    "",
                    "a tools/list result needs a `tools` array".into(),
                )
                .into());
            }
        },
    };
    let mut out = Vec::new();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for tool in tools {
        let Some(listed) = tool.as_object() else {
            out.push(Violation::new(
                ViolationKind::Malformed,
                "",
                format!("tools/list holds {tool}, not a tool object"),
            ));
            continue;
        };
        let Some(name) = listed.get("name").and_then(Value::as_str) else {
            out.push(Violation::new(
                ViolationKind::Malformed,
                "",
                "tools/list holds a tool without a string `name`".into(),
            ));
            continue;
        };
        if !seen.insert(name) {
            out.push(Violation::new(
                ViolationKind::DuplicateTool,
                name,
                "tools/list names the tool twice".into(),
            ));
            continue;
        }
        let Some(signed) = signature.tool(name) else {
            out.push(Violation::new(
                ViolationKind::UnknownTool,
                name,
                "tools/list offers a tool the signature does not have".into(),
            ));
            continue;
        };
        compare_tool_fields(signed, listed, "tools/list", &mut out);
        match listed.get("annotations") {
            None => {
                // No annotations: every core hint at its MCP default.
                compare_hints(
                    name,
                    &signed.annotations,
                    &Map::new(),
                    false,
                    "tools/list",
                    &mut out,
                );
            }
            Some(Value::Object(reported)) => {
                compare_hints(
                    name,
                    &signed.annotations,
                    reported,
                    false,
                    "tools/list",
                    &mut out,
                );
            }
            Some(other) => out.push(Violation::new(
                ViolationKind::Malformed,
                name,
                format!("tools/list has `annotations` {other}, not an object"),
            )),
        }
        if marked_resolvable(listed) && !signed.is_resolvable() {
            out.push(Violation::new(
                ViolationKind::NotResolvable,
                name,
                "tools/list marks the tool resolvable but the signature gives it no variants"
                    .into(),
            ));
        }
        if let Some(scopes) = scopes_of_schemes(listed) {
            match scopes {
                Ok(scopes) => {
                    compare_scopes(name, &signed.scopes, &scopes, "tools/list", &mut out);
                }
                Err(e) => out.push(Violation::new(ViolationKind::Malformed, name, e)),
            }
        }
    }
    finish(out)
}

/// Checks a resolution result against what the signature declares for
/// `(name, arguments)` (the host-side evaluation recipe of
/// docs/signature.md). The result may be in any dialect:
///
/// - extension: `{"resultType": "complete", "name", "annotations"}` — the four
///   core hints are compared;
/// - SEP-1862: `{"tool": {…}}` — the tool's pinned fields, every hint, and
///   the scopes of its `securitySchemes` are compared;
/// - `tools/annotations`: `{"annotations"}` — every hint is compared.
///
/// A core hint the result leaves out counts as its MCP default; a hint the
/// signature does not declare is a violation. On success, returns the
/// signature's answer, which the host should act on.
pub fn verify_resolution<'a>(
    signature: &'a Signature,
    name: &str,
    arguments: &Value,
    result: &Value,
) -> Result<Expected<'a>, Violations> {
    let expected = signature.expect(name, arguments)?;
    let want = expected.annotations();
    let context = match expected.variant() {
        Some(v) => format!("the resolution (variant `{}`)", v.name),
        None => "the resolution (static annotations)".to_string(),
    };
    let malformed = |message: String| -> Violations {
        Violation::new(ViolationKind::Malformed, name, message).into()
    };
    let Some(object) = result.as_object() else {
        return Err(malformed(format!(
            "a resolution result must be an object, not {result}"
        )));
    };
    let mut out = Vec::new();
    if let Some(tool) = object.get("tool") {
        // SEP-1862: the whole tool.
        let Some(tool) = tool.as_object() else {
            return Err(malformed("`tool` must be an object".into()));
        };
        if tool.get("name").and_then(Value::as_str) != Some(name) {
            return Err(malformed(format!(
                "the result describes tool {}, not `{name}`",
                tool.get("name").unwrap_or(&Value::Null)
            )));
        }
        compare_tool_fields(expected.tool, tool, "the resolved tool", &mut out);
        let Some(Value::Object(reported)) = tool.get("annotations") else {
            return Err(malformed(
                "the resolved tool has no `annotations` object".into(),
            ));
        };
        compare_hints(name, want, reported, false, &context, &mut out);
        match scopes_of_schemes(tool) {
            None => {}
            Some(Ok(scopes)) => {
                compare_scopes(
                    name,
                    expected.required_scopes(),
                    &scopes,
                    &context,
                    &mut out,
                );
            }
            Some(Err(e)) => out.push(Violation::new(ViolationKind::Malformed, name, e)),
        }
    } else if let Some(result_type) = object.get("resultType") {
        // The tool-resolution extension.
        if result_type != "complete" {
            return Err(malformed(format!(
                "`resultType` is {result_type}; only a complete result carries annotations"
            )));
        }
        if object.get("name").and_then(Value::as_str) != Some(name) {
            return Err(malformed(format!(
                "the result names tool {}, not `{name}`",
                object.get("name").unwrap_or(&Value::Null)
            )));
        }
        let Some(Value::Object(reported)) = object.get("annotations") else {
            return Err(malformed("the result has no `annotations` object".into()));
        };
        compare_hints(name, want, reported, true, &context, &mut out);
    } else if let Some(annotations) = object.get("annotations") {
        // `tools/annotations`.
        let Some(reported) = annotations.as_object() else {
            return Err(malformed("`annotations` must be an object".into()));
        };
        compare_hints(name, want, reported, false, &context, &mut out);
    } else {
        return Err(malformed(
            "the result has none of `tool`, `resultType` or `annotations`".into(),
        ));
    }
    finish(out).map(|()| expected)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    fn doc() -> Value {
        json!({
            "serverInfo": {"name": "s", "version": "1"},
            "tools": [{
                "name": "run",
                "description": "runs",
                "inputSchema": {
                    "type": "object",
                    "properties": {"mode": {"enum": ["plan", "apply"]}},
                    "required": ["mode"]
                },
                "annotations": {"readOnlyHint": false, "destructiveHint": true,
                    "idempotentHint": false, "openWorldHint": true, "agencyHint": true,
                    "privateHint": true},
                "requiredScopes": ["a", "b"],
                "resolvedVariants": [{
                    "name": "plan",
                    "when": {"argumentPatterns": {"mode": {"const": "plan"}}},
                    "annotations": {"readOnlyHint": true, "destructiveHint": false,
                        "idempotentHint": true, "openWorldHint": false, "agencyHint": false,
                        "privateHint": false},
                    "requiredScopes": ["a"]
                }]
            }, {
                "name": "look",
                "inputSchema": {"type": "object"},
                "annotations": {"readOnlyHint": true, "destructiveHint": false,
                    "idempotentHint": true, "openWorldHint": false, "agencyHint": false}
            }]
        })
    }

    fn sig() -> Signature {
        Signature::from_value(doc()).unwrap()
    }

    fn kinds(r: Result<(), Violations>) -> Vec<ViolationKind> {
        r.err()
            .map(|v| v.0.into_iter().map(|v| v.kind).collect())
            .unwrap_or_default()
    }

    fn verify(result: Value) -> Vec<ViolationKind> {
        kinds(verify_resolution(&sig(), "run", &json!({"mode": "plan"}), &result).map(|_| ()))
    }

    #[test]
    fn the_recipe_picks_the_first_matching_entry_or_the_static_set() {
        let s = sig();
        let plan = s.expect("run", &json!({"mode": "plan"})).unwrap();
        assert_eq!(plan.variant().unwrap().name(), "plan");
        assert_eq!(plan.required_scopes(), ["a"]);
        let apply = s.expect("run", &json!({"mode": "apply"})).unwrap();
        assert!(apply.variant().is_none());
        assert_eq!(apply.annotations()["destructiveHint"], json!(true));
        let refused = s.expect("run", &json!({"mode": "other"})).unwrap_err();
        assert_eq!(refused.kind, ViolationKind::InvalidArguments);
        let not_object = s.expect("run", &json!(["plan"])).unwrap_err();
        assert_eq!(not_object.kind, ViolationKind::InvalidArguments);
        assert_eq!(
            s.expect("nope", &json!({})).unwrap_err().kind,
            ViolationKind::UnknownTool
        );
    }

    #[test]
    fn each_dialect_shape_is_read() {
        let core = json!({"readOnlyHint": true, "destructiveHint": false,
            "idempotentHint": true, "openWorldHint": false});
        assert!(
            verify(json!({"resultType": "complete", "name": "run", "annotations": core}))
                .is_empty()
        );
        let mut complete = core.clone();
        complete["agencyHint"] = json!(false);
        complete["privateHint"] = json!(false);
        complete["title"] = json!("Run");
        assert!(verify(json!({"annotations": complete})).is_empty());
        let tool = json!({"name": "run", "description": "runs",
            "inputSchema": doc()["tools"][0]["inputSchema"],
            "annotations": complete, "resolve": true,
            "securitySchemes": [{"type": "oauth2", "scopes": ["a"]}]});
        assert!(verify(json!({ "tool": tool })).is_empty());
    }

    #[test]
    fn missing_core_hints_are_their_defaults_and_missing_extra_hints_claim_nothing() {
        // Only readOnlyHint given: the other core hints default to their
        // worst values, which the plan variant does not have.
        let got = verify(json!({"annotations": {"readOnlyHint": true}}));
        assert_eq!(got, [ViolationKind::Annotation; 3]);
        // All core hints, no agencyHint/privateHint: fine.
        let got = verify(
            json!({"annotations": {"readOnlyHint": true, "destructiveHint": false,
            "idempotentHint": true, "openWorldHint": false}}),
        );
        assert!(got.is_empty());
    }

    #[test]
    fn wrong_values_undeclared_hints_and_bad_shapes_are_violations() {
        let base = json!({"readOnlyHint": true, "destructiveHint": false,
            "idempotentHint": true, "openWorldHint": false});
        let with = |k: &str, v: Value| {
            let mut a = base.clone();
            a[k] = v;
            json!({ "annotations": a })
        };
        assert_eq!(
            verify(with("privateHint", json!(true))),
            [ViolationKind::Annotation]
        );
        assert_eq!(
            verify(with("sneakyHint", json!(false))),
            [ViolationKind::UndeclaredHint]
        );
        assert_eq!(
            verify(with("readOnlyHint", json!("yes"))),
            [ViolationKind::Malformed]
        );
        for bad in [
            json!("complete"),
            json!({}),
            json!({"annotations": 1}),
            json!({"resultType": "incomplete", "name": "run"}),
            json!({"resultType": "complete", "name": "other", "annotations": base}),
            json!({"resultType": "complete", "name": "run"}),
            json!({"tool": {"name": "other", "annotations": base}}),
            json!({"tool": 1}),
        ] {
            assert_eq!(verify(bad.clone()), [ViolationKind::Malformed], "{bad}");
        }
    }

    #[test]
    fn direction_of_a_lie() {
        // The signature says destructive for `apply`; the server says not.
        let s = sig();
        let r = json!({"annotations": {"readOnlyHint": false, "destructiveHint": false,
            "idempotentHint": false, "openWorldHint": true}});
        let err = verify_resolution(&s, "run", &json!({"mode": "apply"}), &r).unwrap_err();
        assert!(err.0[0].less_conservative, "{err}");
        // The signature says read-only for `plan`; the server says it writes:
        // wrong, but not dangerous.
        let r = json!({"annotations": {"readOnlyHint": false, "destructiveHint": false,
            "idempotentHint": true, "openWorldHint": false}});
        let err = verify_resolution(&s, "run", &json!({"mode": "plan"}), &r).unwrap_err();
        assert!(!err.0[0].less_conservative, "{err}");
        assert!(!err.any_less_conservative());
        assert!(err.to_string().contains("tool `run`"), "{err}");
    }

    #[test]
    fn tools_list_is_a_subset_with_the_same_fields() {
        let s = sig();
        let look = json!({"name": "look", "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true, "destructiveHint": false,
                "idempotentHint": true, "openWorldHint": false}});
        assert!(kinds(s.verify_tools_list(&json!({ "tools": [look] }))).is_empty());
        assert!(kinds(s.verify_tools_list(&json!([]))).is_empty());
        // No annotations at all: core defaults, which `look` does not have.
        let bare = json!({"name": "look", "inputSchema": {"type": "object"}});
        assert_eq!(
            kinds(s.verify_tools_list(&json!([bare]))),
            [ViolationKind::Annotation; 4]
        );
        let mut marked = look.clone();
        marked["_meta"] = json!({ EXTENSION_ID: {"resolvable": true} });
        assert_eq!(
            kinds(s.verify_tools_list(&json!([marked]))),
            [ViolationKind::NotResolvable]
        );
        let mut titled = look.clone();
        titled["title"] = json!("Look");
        assert_eq!(
            kinds(s.verify_tools_list(&json!([titled]))),
            [ViolationKind::ToolChanged]
        );
        assert_eq!(
            kinds(s.verify_tools_list(&json!([look, look]))),
            [ViolationKind::DuplicateTool]
        );
        assert_eq!(
            kinds(s.verify_tools_list(&json!([{"name": "x"}, 3, {}]))),
            [
                ViolationKind::UnknownTool,
                ViolationKind::Malformed,
                ViolationKind::Malformed
            ]
        );
        assert_eq!(
            kinds(s.verify_tools_list(&json!({"items": []}))),
            [ViolationKind::Malformed]
        );
    }

    #[test]
    fn unusable_documents_are_refused_with_the_place() {
        type Edit = fn(&mut Value);
        let cases: [(Edit, &str); 7] = [
            (|d| *d = json!([]), "JSON object"),
            (|d| d["tools"] = json!({}), "`tools` array"),
            (|d| d["tools"][1]["name"] = json!("run"), "listed twice"),
            (
                |d| d["tools"][0]["inputSchema"] = json!({"type": 3}),
                "tools[0]: tool `run`: `inputSchema` does not compile",
            ),
            (
                |d| d["tools"][0]["annotations"]["readOnlyHint"] = json!(1),
                "must be a boolean",
            ),
            (
                |d| {
                    d["tools"][0]["resolvedVariants"][0]["when"]["argumentPatterns"]["mode"] =
                        json!({"pattern": "("})
                },
                "resolvedVariants[0]: variant `plan`: `argumentPatterns` do not compile",
            ),
            (
                |d| d["tools"][0]["requiredScopes"] = json!([1]),
                "`requiredScopes` must hold strings",
            ),
        ];
        for (edit, message) in cases {
            let mut d = doc();
            edit(&mut d);
            let err = Signature::from_value(d).unwrap_err();
            assert!(err.0.contains(message), "{err} / {message}");
        }
        assert!(Signature::from_json("{").is_err());
    }

    #[cfg(feature = "fingerprint")]
    #[test]
    fn fingerprints_cover_everything_but_the_fingerprint_field() {
        let mut d = doc();
        let fp = fingerprint(&d);
        assert!(fp.starts_with("sha256:") && fp.len() == 71);
        d["fingerprint"] = json!(fp);
        assert_eq!(fingerprint(&d), fp);
        assert!(Signature::verified(d.clone()).is_ok());
        assert!(Signature::pinned(d.clone(), &fp).is_ok());
        assert!(Signature::pinned(d.clone(), "sha256:00").is_err());
        d["tools"][0]["description"] = json!("runs fast");
        assert!(Signature::verified(d).is_err());
        assert!(Signature::verified(doc()).is_err());
    }
}
