//! The analysis's verdicts as diagnostics: unreachable variants, calls
//! that fall through (with the example call), analyses that gave up, static
//! annotations tighter than the variants allow; and the one-line summary of
//! a tool's analysis. The engine ([`super`]) states facts; this module only
//! words them.

use std::collections::BTreeSet;
use std::fmt;

use serde_json::Value;

use super::{Coverage, Reach, ToolAnalysis};
use crate::diagnostic::{Code, Diagnostic};
use crate::hints::{HintSet, HintTable, READ_ONLY, same_meaning, tightest_bound};
use crate::ir::Tool;

fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

fn names(tool: &Tool, idx: &[usize]) -> String {
    idx.iter()
        .map(|&i| format!("`{}`", tool.variants[i].name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The diagnostics for one tool's analysis.
pub fn report(
    hints: &HintTable,
    tool: &Tool,
    analysis: &ToolAnalysis,
    diags: &mut Vec<Diagnostic>,
) {
    let (reach, coverage) = match analysis {
        ToolAnalysis::Inconclusive(why) => {
            diags.push(
                Diagnostic::new(
                    Code::AnalysisInconclusive,
                    format!("pattern analysis of tool `{}` is inconclusive: {why}", tool.name),
                )
                .at(tool.name_loc.0)
                .for_tool(&tool.name)
                .with_help(
                    "reachability and exhaustiveness of its variants are not checked; derived static annotations keep the core defaults. Most limits are options: `--analysis-regions`, `--analysis-rows`, `--analysis-string-states`, `--analysis-steps`, `--analysis-work` (`Builder::analysis_limits` in a build script)",
                ),
            );
            return;
        }
        ToolAnalysis::Done { reach, coverage } => (reach, coverage),
    };
    for (v, r) in tool.variants.iter().zip(reach) {
        match r {
            Reach::Reachable => {}
            Reach::Empty => diags.push(
                Diagnostic::new(
                    Code::UnreachableVariant,
                    format!(
                        "variant `{}` of tool `{}` matches no call",
                        v.name, tool.name
                    ),
                )
                .labeled(v.loc.0, "never selected")
                .for_tool(&tool.name)
                .for_variant(&v.name)
                .with_help("no argument object valid against the inputSchema satisfies its `when`"),
            ),
            Reach::Unreachable {
                covered_by,
                example,
            } => {
                let mut help = format!(
                    "every call it matches resolves to {} {}",
                    if covered_by.len() == 1 {
                        "earlier variant"
                    } else {
                        "earlier variants"
                    },
                    names(tool, covered_by)
                );
                if let Some((obj, j)) = example {
                    help.push_str(&format!(
                        ", e.g. `{}` resolves to `{}`",
                        compact(obj),
                        tool.variants[*j].name
                    ));
                }
                help.push_str("; remove it, or move it before them");
                let mut d = Diagnostic::new(
                    Code::UnreachableVariant,
                    format!(
                        "variant `{}` of tool `{}` is unreachable",
                        v.name, tool.name
                    ),
                )
                .labeled(v.loc.0, "never selected")
                .for_tool(&tool.name)
                .for_variant(&v.name)
                .with_help(help);
                for &k in covered_by {
                    d = d.with_related(tool.variants[k].loc.0, "covers its calls");
                }
                diags.push(d);
            }
        }
    }
    match coverage {
        Coverage::Missing(obj) => diags.push(
            Diagnostic::new(
                Code::NonExhaustive,
                format!("some calls to tool `{}` match no variant", tool.name),
            )
            .at(tool.name_loc.0)
            .for_tool(&tool.name)
            .with_help(format!(
                "e.g. `{}` matches no variant and resolves to the static annotations",
                compact(obj)
            ))
            .with_example(obj.clone()),
        ),
        Coverage::Exhaustive => too_strict(hints, tool, reach, diags),
    }
}

fn too_strict(hints: &HintTable, tool: &Tool, reach: &[Reach], diags: &mut Vec<Diagnostic>) {
    let Some(written) = &tool.written_annotations else {
        return;
    };
    let live: Vec<usize> = (0..tool.variants.len())
        .filter(|&i| reach[i] == Reach::Reachable)
        .collect();
    if live.is_empty() {
        return;
    }
    let tight = tightest_bound(hints, live.iter().map(|&i| &tool.variants[i].annotations));
    let scopes: BTreeSet<String> = live
        .iter()
        .flat_map(|&i| tool.variants[i].scopes())
        .collect();
    let fewer_scopes = tool.scopes_written && scopes.len() < tool.required_scopes.len();
    if same_meaning(hints, &tight, &tool.annotations) && !fewer_scopes {
        return;
    }
    let mut help = format!(
        "every call resolves to a variant; the tightest bound is `{}`",
        HintsText(hints, &tight)
    );
    if fewer_scopes {
        help.push_str(&format!(
            " with `requiredScopes: [{}]`",
            scopes.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    // The first hint written stricter than the bound (the one to change);
    // the first written when only the scopes are too many.
    let at = written
        .iter()
        .find(|s| s.value != tight.get(s.hint))
        .or(written.first())
        .map_or(tool.name_loc.0, |s| s.loc.0);
    diags.push(
        Diagnostic::new(
            Code::StaticTooStrict,
            format!(
                "static annotations of tool `{}` are more conservative than any call needs",
                tool.name
            ),
        )
        .at(at)
        .for_tool(&tool.name)
        .with_help(help),
    );
}

/// A hint set as a YAML flow mapping.
struct HintsText<'a>(&'a HintTable, &'a HintSet);

impl fmt::Display for HintsText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{ ")?;
        // Hints that mean nothing at this `readOnlyHint` are left out.
        let read_only = self.1.get(READ_ONLY);
        let meaningful = self
            .0
            .defs()
            .iter()
            .enumerate()
            .filter(|(_, def)| def.is_meaningful(read_only));
        for (n, (i, def)) in meaningful.enumerate() {
            if n > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}: {}", def.name, self.1.get(i))?;
        }
        f.write_str(" }")
    }
}

/// A plain-text account of one tool's analysis, for fixtures and `--explain`.
pub fn summary(tool: &Tool, analysis: &ToolAnalysis) -> String {
    let mut out = String::new();
    match analysis {
        ToolAnalysis::Inconclusive(why) => {
            out.push_str(&format!("{}: inconclusive ({why})\n", tool.name));
        }
        ToolAnalysis::Done { reach, coverage } => {
            match coverage {
                Coverage::Exhaustive => out.push_str(&format!("{}: exhaustive\n", tool.name)),
                Coverage::Missing(obj) => out.push_str(&format!(
                    "{}: non-exhaustive, e.g. {}\n",
                    tool.name,
                    compact(obj)
                )),
            }
            for (v, r) in tool.variants.iter().zip(reach) {
                match r {
                    Reach::Reachable => out.push_str(&format!("  {}: reachable\n", v.name)),
                    Reach::Empty => out.push_str(&format!("  {}: matches nothing\n", v.name)),
                    Reach::Unreachable { covered_by, .. } => out.push_str(&format!(
                        "  {}: unreachable, covered by {}\n",
                        v.name,
                        covered_by
                            .iter()
                            .map(|&k| tool.variants[k].name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                }
            }
        }
    }
    out
}
