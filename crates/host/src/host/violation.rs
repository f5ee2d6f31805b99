//! Verdicts: how a server's word disagrees with its signature.

use std::fmt;

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
    pub(crate) fn new(kind: ViolationKind, tool: &str, message: String) -> Self {
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

pub(crate) fn finish(violations: Vec<Violation>) -> Result<(), Violations> {
    if violations.is_empty() {
        Ok(())
    } else {
        Err(Violations(violations))
    }
}
