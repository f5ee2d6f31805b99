//! Semantics over the model: JSON Schema navigation (conditions as
//! `argumentPatterns`, literal patterns) and the reference evaluator of
//! conditions.

pub(crate) mod eval;
pub(crate) mod schema;
