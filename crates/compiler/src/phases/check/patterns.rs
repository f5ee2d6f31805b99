//! `pattern-too-complex`: every variant's condition can be written as the
//! signature's `argumentPatterns`.
//!
//! Why: the signature document writes a condition in disjunctive normal form,
//! one `resolvedVariants` entry per disjunct; a condition that expands past
//! [`MAX_DISJUNCTS`] entries cannot be published, so `signature` and
//! `generate` would have nothing true to write. Checking it here means
//! `check` fails whenever they would.
//!
//! Example: `(a == 1 || a == 2) && (b == 1 || b == 2) && …` over nine
//! arguments expands to 2⁹ = 512 entries.

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::Tool;
use crate::schema::patterns::{MAX_DISJUNCTS, argument_patterns};

pub(super) fn check_tool(tool: &Tool, diags: &mut Vec<Diagnostic>) {
    if tool.resolvable {
        for v in &tool.variants {
            if let Err(n) = argument_patterns(&v.when) {
                diags.push(
                    Diagnostic::new(
                        Code::PatternTooComplex,
                        format!(
                            "the condition of variant `{}` expands to more than {MAX_DISJUNCTS} argument patterns ({n} so far)",
                            v.name
                        ),
                    )
                    .at(v.loc.0)
                    .for_tool(&tool.name)
                    .for_variant(&v.name)
                    .with_help("split the variant, or use `enum`/`anyOf` inside one argument's matcher"),
                );
            }
        }
    }
}
