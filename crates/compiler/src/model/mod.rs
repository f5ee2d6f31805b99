//! The model: the hint table, the syntax tree, the IR and diagnostics. Uses
//! only the utilities.

pub mod ast;
pub mod diagnostic;
pub mod hints;
pub mod ir;
