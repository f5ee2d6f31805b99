//! The hint table: every boolean hint's name, default, worst (most
//! conservative) value, and when it means something. This is the one home of
//! that knowledge; the compiler, the signature model, host verification and
//! `diff` all read it from here.

use std::borrow::Cow;

/// When a hint's value means something.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Meaningful {
    /// Always.
    Always,
    /// Only when `readOnlyHint` is false: `destructiveHint` and
    /// `idempotentHint` describe modifications, and a read-only tool makes none.
    UnlessReadOnly,
}

/// One boolean hint.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HintDef {
    /// The wire name, e.g. `readOnlyHint`.
    pub name: Cow<'static, str>,
    /// The value when a hint is omitted (MCP's defaults for the core four).
    pub default: bool,
    /// The most conservative value: the one that makes a client ask.
    pub worst: bool,
    /// When the value means something.
    pub meaningful: Meaningful,
}

impl HintDef {
    /// A hint declared by a rules file: meaningful always.
    pub fn declared(name: impl Into<String>, default: bool, worst: bool) -> HintDef {
        HintDef {
            name: Cow::Owned(name.into()),
            default,
            worst,
            meaningful: Meaningful::Always,
        }
    }

    const fn builtin(
        name: &'static str,
        default: bool,
        worst: bool,
        meaningful: Meaningful,
    ) -> Self {
        HintDef {
            name: Cow::Borrowed(name),
            default,
            worst,
            meaningful,
        }
    }

    /// Whether the hint means something in a set whose `readOnlyHint` is `read_only`.
    pub fn is_meaningful(&self, read_only: bool) -> bool {
        match self.meaningful {
            Meaningful::Always => true,
            Meaningful::UnlessReadOnly => !read_only,
        }
    }
}

/// Index of `readOnlyHint` in [`BUILTIN_HINTS`] and every [`HintTable`].
pub const READ_ONLY: usize = 0;
/// Index of `destructiveHint`.
pub const DESTRUCTIVE: usize = 1;
/// Index of `idempotentHint`.
pub const IDEMPOTENT: usize = 2;
/// Index of `openWorldHint`.
pub const OPEN_WORLD: usize = 3;
/// Index of `agencyHint`.
pub const AGENCY: usize = 4;

/// The built-in hints: MCP's four core hints (`ToolAnnotations`, in wire
/// order), then `agencyHint` (seed 004).
pub static BUILTIN_HINTS: [HintDef; 5] = [
    HintDef::builtin("readOnlyHint", false, false, Meaningful::Always),
    HintDef::builtin("destructiveHint", true, true, Meaningful::UnlessReadOnly),
    HintDef::builtin("idempotentHint", false, false, Meaningful::UnlessReadOnly),
    HintDef::builtin("openWorldHint", true, true, Meaningful::Always),
    HintDef::builtin("agencyHint", false, true, Meaningful::Always),
];

/// The four core hints of MCP `ToolAnnotations`, in their wire order.
pub const CORE_HINTS: [&str; 4] = [
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
];

/// The built-in hint called `name`.
pub fn builtin(name: &str) -> Option<&'static HintDef> {
    BUILTIN_HINTS.iter().find(|h| h.name == name)
}

/// Whether `name` is one of the four core hints.
pub fn is_core(name: &str) -> bool {
    core_index(name).is_some()
}

/// The position of a core hint in [`CORE_HINTS`] (and [`BUILTIN_HINTS`]):
/// [`READ_ONLY`], [`DESTRUCTIVE`], [`IDEMPOTENT`] or [`OPEN_WORLD`]. `None`
/// for any other name.
pub fn core_index(name: &str) -> Option<usize> {
    // The names differ in length, so this is mostly a length test.
    match name {
        "readOnlyHint" => Some(READ_ONLY),
        "destructiveHint" => Some(DESTRUCTIVE),
        "idempotentHint" => Some(IDEMPOTENT),
        "openWorldHint" => Some(OPEN_WORLD),
        _ => None,
    }
}

/// The most conservative value of a built-in hint. For the four core hints
/// this is also the value MCP assumes when a hint is absent. `None` for a
/// hint whose direction is not known here (one a rules file declares).
pub fn worst_value(name: &str) -> Option<bool> {
    builtin(name).map(|h| h.worst)
}

/// Whether a built-in hint means something in a set whose `readOnlyHint` is
/// `read_only`; an unknown hint always does.
pub fn is_meaningful(name: &str, read_only: bool) -> bool {
    builtin(name).is_none_or(|h| h.is_meaningful(read_only))
}

/// The hints of one server: the built-in ones, then those it declares, each
/// at a fixed index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HintTable {
    defs: Vec<HintDef>,
}

impl Default for HintTable {
    fn default() -> Self {
        HintTable {
            defs: BUILTIN_HINTS.to_vec(),
        }
    }
}

impl HintTable {
    /// The number of built-in hints.
    pub const BUILTIN: usize = 5;

    /// Adds a declared hint; `false` if the name is taken.
    pub fn declare(&mut self, def: HintDef) -> bool {
        if self.index(&def.name).is_some() {
            return false;
        }
        self.defs.push(def);
        true
    }

    /// The index of a hint by name.
    pub fn index(&self, name: &str) -> Option<usize> {
        self.defs.iter().position(|d| d.name == name)
    }

    /// Every hint, in index order.
    pub fn defs(&self) -> &[HintDef] {
        &self.defs
    }

    /// The hint at index `i`.
    pub fn get(&self, i: usize) -> Option<&HintDef> {
        self.defs.get(i)
    }

    /// The names, in index order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.defs.iter().map(|d| d.name.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_hints_are_the_first_builtins_and_default_to_their_worst_value() {
        for (i, name) in CORE_HINTS.iter().enumerate() {
            let def = &BUILTIN_HINTS[i];
            assert_eq!(def.name, *name);
            assert_eq!(def.default, def.worst, "{name}");
            assert_eq!(core_index(name), Some(i));
        }
        for other in ["agencyHint", "readonlyHint", "", "title", "readOnlyHint "] {
            assert_eq!(core_index(other), None, "{other}");
        }
        assert_eq!(worst_value("agencyHint"), Some(true));
        assert_eq!(worst_value("privateHint"), None);
        assert!(!is_meaningful("destructiveHint", true));
        assert!(is_meaningful("openWorldHint", true));
        assert!(is_meaningful("privateHint", true));
        let mut table = HintTable::default();
        assert!(table.declare(HintDef::declared("privateHint", false, true)));
        assert!(!table.declare(HintDef::declared("agencyHint", false, true)));
        assert_eq!(table.index("privateHint"), Some(HintTable::BUILTIN));
    }
}
