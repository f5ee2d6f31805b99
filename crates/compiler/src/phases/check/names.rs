//! `duplicate-tool`, `duplicate-variant`, `invalid-tool-name`.
//!
//! Why: tool names identify tools on the wire (they must be unique per server
//! and, per the MCP spec, SHOULD be 1–128 characters of `[A-Za-z0-9_.-]`);
//! variant names identify resolved variants in signatures and diffs.

use std::collections::HashMap;

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{Loc, Server};

/// Whether `name` follows the MCP tool-name rule.
pub fn valid_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

pub(super) fn check(server: &Server, diags: &mut Vec<Diagnostic>) {
    let mut tools: HashMap<&str, Loc> = HashMap::new();
    for tool in &server.tools {
        if let Some(first) = tools.get(tool.name.as_str()) {
            diags.push(
                Diagnostic::new(
                    Code::DuplicateTool,
                    format!("tool `{}` is defined twice", tool.name),
                )
                .labeled(tool.name_loc.0, "defined again here")
                .with_related(first.0, "first defined here")
                .for_tool(&tool.name),
            );
        } else {
            tools.insert(&tool.name, tool.name_loc);
        }
        if !valid_tool_name(&tool.name) {
            diags.push(
                Diagnostic::new(
                    Code::InvalidToolName,
                    format!(
                        "tool name `{}` is not 1–128 characters of `[A-Za-z0-9_.-]`",
                        tool.name.escape_debug()
                    ),
                )
                .at(tool.name_loc.0)
                .for_tool(&tool.name)
                .with_help("clients may reject or rename tools whose names break this rule"),
            );
        }
        let mut variants: HashMap<&str, Loc> = HashMap::new();
        for v in &tool.variants {
            if let Some(first) = variants.get(v.name.as_str()) {
                diags.push(
                    Diagnostic::new(
                        Code::DuplicateVariant,
                        format!(
                            "variant `{}` of tool `{}` is defined twice",
                            v.name, tool.name
                        ),
                    )
                    .labeled(v.loc.0, "defined again here")
                    .with_related(first.0, "first defined here")
                    .for_tool(&tool.name)
                    .for_variant(&v.name),
                );
            } else {
                variants.insert(&v.name, v.loc);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::valid_tool_name;

    #[test]
    fn tool_name_rule() {
        assert!(valid_tool_name("manage_files"));
        assert!(valid_tool_name("a.b-c_1"));
        assert!(!valid_tool_name(""));
        assert!(!valid_tool_name("has space"));
        assert!(!valid_tool_name("ünï"));
        assert!(valid_tool_name(&"a".repeat(128)));
        assert!(!valid_tool_name(&"a".repeat(129)));
    }
}
