//! The phases, in the order data flows through them: parse (YAML or
//! `.rules` → AST with spans), lower (AST → IR), check (diagnostics),
//! analysis (derived facts). Private; `internals` reaches them for the
//! crate's own tests.

pub(crate) mod analysis;
pub(crate) mod check;
pub(crate) mod lower;
pub(crate) mod parse;
