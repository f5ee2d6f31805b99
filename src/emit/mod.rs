//! Emitters: everything the compiler writes out.
pub mod patterns;
pub mod signature;
pub mod tools;
