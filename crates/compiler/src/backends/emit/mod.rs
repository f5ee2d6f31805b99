//! Emitters: everything the compiler writes out.
pub mod signature;
pub mod tools;
