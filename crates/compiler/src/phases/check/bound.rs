//! `worst-case`, `scope-not-declared`, `meaningless-hint`.
//!
//! Why: `tools/list` advertises the static annotations as the worst case of
//! every call. A variant outside that bound makes the static set a lie, and
//! the extension's reference client rejects such a resolution. Likewise a
//! variant may only need scopes the tool declares.
//!
//! Example: static `readOnlyHint: true` with a variant `readOnlyHint: false`.

use crate::diagnostic::{Code, Diagnostic};
use crate::hints::{DESTRUCTIVE, HintSet, READ_ONLY, violations};
use crate::ir::{Server, Setting, Tool};

pub(super) fn check_tool(server: &Server, tool: &Tool, diags: &mut Vec<Diagnostic>) {
    if let Some(written) = &tool.written_annotations {
        meaningless(tool, &tool.annotations, written, None, diags);
    }
    for v in &tool.variants {
        meaningless(tool, &v.annotations, &v.overrides, Some(&v.name), diags);
        if tool.written_annotations.is_some() {
            for violation in violations(&server.hints, &tool.annotations, &v.annotations) {
                let name = &server.hints.defs()[violation.hint].name;
                let value = v.annotations.get(violation.hint);
                let mut d = Diagnostic::new(
                    Code::WorstCase,
                    format!(
                        "variant `{}` of tool `{}` resolves to `{name}: {value}`, outside the static annotations",
                        v.name, tool.name
                    ),
                )
                .labeled(v.loc.0, format!("`{name}: {value}` here"))
                .for_tool(&tool.name)
                .for_variant(&v.name)
                .with_help(format!(
                    "{}; make the static annotations more conservative or change the variant",
                    violation.reason
                ));
                if let Some(s) = v.overrides.iter().find(|s| s.hint == violation.hint) {
                    d = d.with_related(s.loc.0, "set here");
                }
                if let Some(s) = tool
                    .written_annotations
                    .iter()
                    .flatten()
                    .find(|s| s.hint == violation.hint)
                {
                    // The fix is the conservative bound itself: the static
                    // value becomes what the variant resolves to.
                    d = d.with_related(s.loc.0, "static value").with_fix(
                        format!("raise the static `{name}` to the worst case: `{name}: {value}`"),
                        s.loc.0,
                        format!("{name}: {value}"),
                    );
                }
                diags.push(d);
            }
        }
        if tool.scopes_written {
            for (scope, loc) in &v.required_scopes {
                if !tool.required_scopes.contains(scope) {
                    diags.push(
                        Diagnostic::new(
                            Code::ScopeNotDeclared,
                            format!(
                                "variant `{}` needs scope `{scope}`, which tool `{}` does not declare",
                                v.name, tool.name
                            ),
                        )
                        .at(loc.0)
                        .for_tool(&tool.name)
                        .for_variant(&v.name)
                        .with_help(format!("add `{scope}` to the tool's `requiredScopes`")),
                    );
                }
            }
        }
    }
}

fn meaningless(
    tool: &Tool,
    set: &HintSet,
    written: &[Setting],
    variant: Option<&str>,
    diags: &mut Vec<Diagnostic>,
) {
    if !set.get(READ_ONLY) {
        return;
    }
    if let Some(s) = written.iter().find(|s| s.hint == DESTRUCTIVE && s.value) {
        let mut d = Diagnostic::new(
            Code::MeaninglessHint,
            "`destructiveHint: true` on a read-only annotation set means nothing",
        )
        .at(s.loc.0)
        .for_tool(&tool.name)
        .with_help(
            "a read-only tool modifies nothing; write `destructiveHint: false` or leave it out",
        );
        if let Some(v) = variant {
            d = d.for_variant(v);
        }
        diags.push(d);
    }
}
