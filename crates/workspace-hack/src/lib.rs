//! No code. This package's dependencies give the command's light build the
//! features the workspace's test build gives them, so that both builds share
//! one compiled copy of each (its Cargo.toml says which and why).
