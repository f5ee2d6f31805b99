//! Utilities, the lowest layer: any module may use them, they use none of
//! the compiler's own (docs/architecture.md, "The compiler").

pub(crate) mod markup;
pub(crate) mod par;
pub(crate) mod regex_cache;
pub mod source;
pub(crate) mod suggest;
