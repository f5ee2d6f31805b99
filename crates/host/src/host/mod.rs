//! Host-side verification against a signature document: a `tools/list`
//! and resolution results checked against what the server published (see
//! the crate's documentation).

mod verify;
mod violation;

pub use verify::{verify_resolution, verify_tools_list};
pub use violation::{Violation, ViolationKind, Violations};

pub use crate::signature::fingerprint;
pub use mcp_resolve_runtime::hints::worst_value;

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::matcher::{Check, Test};
use crate::signature::{ModelError, ServerInfo, SignatureDocument, SignatureTool, VariantEntry};
use mcp_resolve_runtime::{Annotations, ArgumentValidator};

/// A signature document that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SignatureError {
    /// Not a signature document.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// Not JSON text.
    #[error("a signature document must be JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    /// Its fingerprint does not verify.
    #[error("the document's fingerprint does not verify: {0}")]
    Fingerprint(#[source] ModelError),
    /// Its fingerprint is not the one pinned.
    #[error("the signature's fingerprint is {} but {pinned} is pinned", actual.as_deref().unwrap_or("missing"))]
    NotPinned {
        /// The document's fingerprint, if it has one.
        actual: Option<String>,
        /// The fingerprint pinned.
        pinned: String,
    },
    /// The tool at `index` of `tools` cannot be used.
    #[error("tools[{index}]: {source}")]
    AtIndex {
        /// Its index.
        index: usize,
        /// Why.
        #[source]
        source: Box<SignatureError>,
    },
    /// A tool object of the wrong shape.
    #[error("tool `{tool}`: {path}: {source}")]
    ToolShape {
        /// The tool's name (`?` without one).
        tool: String,
        /// Where in the tool.
        path: String,
        /// What is wrong there.
        #[source]
        source: serde_json::Error,
    },
    /// A variant whose `argumentPatterns` do not compile.
    #[error("variant `{variant}`: `argumentPatterns` do not compile: {why}")]
    Variant {
        /// The variant's name.
        variant: String,
        /// The validator's error.
        why: String,
    },
    /// A tool whose schemas or patterns do not compile.
    #[error("tool `{tool}`: {why}")]
    Tool {
        /// The tool's name.
        tool: String,
        /// What does not compile.
        why: String,
    },
}

/// A signature document, checked and compiled for evaluation.
#[derive(Debug)]
pub struct Signature {
    document: Value,
    server_info: Option<ServerInfo>,
    fingerprint: Option<String>,
    tools: Vec<SignedTool>,
    /// Each tool by name (names are unique), for a signature of more than
    /// [`LINEAR_LOOKUP_MAX`] tools (a few are found faster by comparing).
    by_name: HashMap<String, usize>,
}

/// Up to this many tools, [`Signature::tool`] compares names in order.
const LINEAR_LOOKUP_MAX: usize = 8;

/// One tool of a signature, compiled.
#[derive(Debug)]
pub struct SignedTool {
    def: SignatureTool,
    validator: ArgumentValidator,
    variants: Vec<SignedVariant>,
}

/// One entry of a tool's `resolvedVariants`, compiled.
#[derive(Debug)]
pub struct SignedVariant {
    def: VariantEntry,
    validator: jsonschema::Validator,
    /// The same patterns as direct tests, where every keyword has a check
    /// ([`Check::from_schema`]); `validator` decides otherwise.
    test: Option<Test>,
}

/// What the signature declares for one call.
#[derive(Clone, Copy, Debug)]
pub struct Expected<'a> {
    tool: &'a SignedTool,
    variant: Option<usize>,
}

impl Signature {
    /// Reads the document ([`SignatureDocument::from_value`]) and compiles
    /// every schema in it. The fingerprint is not recomputed: see
    /// [`Signature::verified`].
    pub fn from_value(document: Value) -> Result<Self, SignatureError> {
        let model = SignatureDocument::from_value(&document)?;
        let tools = model
            .tools
            .into_iter()
            .enumerate()
            .map(|(index, tool)| {
                SignedTool::compile(tool).map_err(|e| SignatureError::AtIndex {
                    index,
                    source: Box::new(e),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut by_name = HashMap::new();
        if tools.len() > LINEAR_LOOKUP_MAX {
            for (i, tool) in tools.iter().enumerate() {
                by_name.insert(tool.def.name.clone(), i);
            }
        }
        Ok(Signature {
            document,
            server_info: model.server_info,
            fingerprint: model.fingerprint,
            tools,
            by_name,
        })
    }

    /// Parses JSON text with [`Signature::from_value`].
    pub fn from_json(text: &str) -> Result<Self, SignatureError> {
        let document: Value = serde_json::from_str(text).map_err(SignatureError::NotJson)?;
        Self::from_value(document)
    }

    /// Like [`Signature::from_value`], and the document's `fingerprint` must
    /// be present and equal the recomputed one.
    pub fn verified(document: Value) -> Result<Self, SignatureError> {
        crate::signature::check_fingerprint(&document).map_err(SignatureError::Fingerprint)?;
        Self::from_value(document)
    }

    /// Like [`Signature::verified`], and the fingerprint must be `pin`, the
    /// one the host stored when the user approved the server.
    pub fn pinned(document: Value, pin: &str) -> Result<Self, SignatureError> {
        let signature = Self::verified(document)?;
        match signature.fingerprint() {
            Some(fp) if fp == pin => Ok(signature),
            other => Err(SignatureError::NotPinned {
                actual: other.map(str::to_string),
                pinned: pin.to_string(),
            }),
        }
    }

    /// The document's `fingerprint` member, as written.
    pub fn fingerprint(&self) -> Option<&str> {
        self.fingerprint.as_deref()
    }

    /// Verifies a publisher's signature of the document: `jws` is the text
    /// of its `.jws` file (one detached JWS per line, one per signer), and
    /// the first that verifies with one of `keys` is returned. The JWS
    /// covers exactly the bytes the fingerprint covers; check the
    /// fingerprint too ([`Signature::verified`]).
    #[cfg(feature = "jws")]
    pub fn verify_publisher<'k>(
        &self,
        jws: &str,
        keys: &'k [crate::jws::PublicKey],
    ) -> Result<crate::jws::Verified<'k>, crate::jws::JwsError> {
        let payload = crate::signature::fingerprinted_text(&self.document);
        crate::jws::verify_any(jws, payload.as_bytes(), keys)
    }

    /// The whole document, as given.
    pub fn document(&self) -> &Value {
        &self.document
    }

    /// `serverInfo`, when the document has it.
    pub fn server_info(&self) -> Option<&ServerInfo> {
        self.server_info.as_ref()
    }

    /// Every tool, in document order.
    pub fn tools(&self) -> &[SignedTool] {
        &self.tools
    }

    /// The tool called `name`.
    pub fn tool(&self, name: &str) -> Option<&SignedTool> {
        if self.tools.len() > LINEAR_LOOKUP_MAX {
            return self.by_name.get(name).and_then(|&i| self.tools.get(i));
        }
        self.tools.iter().find(|t| t.def.name == name)
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

impl SignedTool {
    /// Reads and compiles one tool object of a signature document.
    pub fn from_value(tool: &Value) -> Result<Self, SignatureError> {
        let def: SignatureTool = serde_path_to_error::deserialize(tool).map_err(|e| {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or("?");
            SignatureError::ToolShape {
                tool: name.to_string(),
                path: e.path().to_string(),
                source: e.into_inner(),
            }
        })?;
        Self::compile(def)
    }

    /// Compiles a tool of the model.
    pub fn compile(def: SignatureTool) -> Result<Self, SignatureError> {
        let in_tool = |why: String| SignatureError::Tool {
            tool: def.name.clone(),
            why,
        };
        let validator = ArgumentValidator::new(&def.input_schema)
            .map_err(|e| in_tool(format!("`inputSchema` does not compile: {e}")))?;
        let variants = def
            .variants()
            .iter()
            .enumerate()
            .map(|(i, entry)| {
                SignedVariant::compile(entry.clone())
                    .map_err(|e| in_tool(format!("resolvedVariants[{i}]: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(SignedTool {
            def,
            validator,
            variants,
        })
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// The tool as the signature declares it.
    pub fn def(&self) -> &SignatureTool {
        &self.def
    }

    /// The tool's `inputSchema`.
    pub fn input_schema(&self) -> &Value {
        &self.def.input_schema
    }

    /// The static (worst-case) annotations, every hint explicit.
    pub fn annotations(&self) -> &Annotations {
        &self.def.annotations
    }

    /// The static `requiredScopes`.
    pub fn required_scopes(&self) -> &[String] {
        &self.def.required_scopes
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
        if let Err(e) = self.validator.validate(&self.def.name, arguments) {
            return Err(Violation::new(
                ViolationKind::InvalidArguments,
                &self.def.name,
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
    /// Compiles an entry: its `argumentPatterns` become one object schema
    /// whose listed arguments are required, except those whose pattern is
    /// `false` (absent), evaluated with the regex dialect of
    /// [`mcp_resolve_runtime::pattern`].
    pub fn compile(def: VariantEntry) -> Result<Self, SignatureError> {
        let patterns = &def.when.argument_patterns;
        let required: Vec<&String> = patterns
            .iter()
            .filter(|(_, p)| **p != Value::Bool(false))
            .map(|(k, _)| k)
            .collect();
        let schema = json!({ "type": "object", "properties": patterns, "required": required });
        let validator = mcp_resolve_runtime::pattern::pattern_validator_options()
            .build(&schema)
            .map_err(|e| SignatureError::Variant {
                variant: def.name.clone(),
                why: e.to_string(),
            })?;
        // The same schema as direct tests on the arguments object: each
        // pattern's argument looked up once, present and passing its check,
        // or (`false`) absent.
        let test = patterns
            .iter()
            .map(|(k, p)| match p {
                Value::Bool(false) => Some(Test::Not(Box::new(Test::Present(vec![k.clone()])))),
                p => Check::from_schema(p).map(|c| Test::At(vec![k.clone()], c)),
            })
            .collect::<Option<Vec<_>>>()
            .map(Test::All);
        Ok(SignedVariant {
            def,
            validator,
            test,
        })
    }

    /// The variant's name (shared by the entries of one variant's disjuncts).
    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// The entry as the signature declares it.
    pub fn def(&self) -> &VariantEntry {
        &self.def
    }

    /// `when.argumentPatterns`.
    pub fn argument_patterns(&self) -> &Map<String, Value> {
        &self.def.when.argument_patterns
    }

    /// The resolved annotations, every hint explicit.
    pub fn annotations(&self) -> &Annotations {
        &self.def.annotations
    }

    /// The scopes a call landing here needs.
    pub fn required_scopes(&self) -> &[String] {
        &self.def.required_scopes
    }

    /// Whether `arguments` satisfy the entry's `argumentPatterns`.
    pub fn matches(&self, arguments: &Value) -> bool {
        match (&self.test, arguments) {
            (Some(test), Value::Object(arguments)) => test.eval(arguments),
            (Some(_), _) => false,
            (None, _) => self.validator.is_valid(arguments),
        }
    }

    /// Whether `arguments` satisfy the entry's `argumentPatterns` by the
    /// compiled JSON Schema itself, never the direct checks
    /// ([`SignedVariant::matches`] takes those where it can): what the
    /// tests hold the direct checks to.
    pub fn matches_by_schema(&self, arguments: &Value) -> bool {
        self.validator.is_valid(arguments)
    }

    /// Whether [`SignedVariant::matches`] runs direct checks (every keyword
    /// of the patterns has one) rather than the JSON Schema validator.
    pub fn has_direct_checks(&self) -> bool {
        self.test.is_some()
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
    pub fn annotations(&self) -> &'a Annotations {
        self.variant()
            .map_or(self.tool.annotations(), |v| v.annotations())
    }

    /// The scopes the call needs.
    pub fn required_scopes(&self) -> &'a [String] {
        self.variant()
            .map_or(self.tool.required_scopes(), |v| v.required_scopes())
    }
}

#[cfg(test)]
mod tests;
