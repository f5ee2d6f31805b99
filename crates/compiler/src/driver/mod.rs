//! The driver: loading a project (files, limits, the phases in order).

pub mod project;
