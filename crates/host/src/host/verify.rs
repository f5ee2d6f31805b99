//! Checking `tools/list` and resolution results against a signature.

use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Map, Value};

use super::violation::{Violation, ViolationKind, Violations, finish};
use super::{Expected, Signature, SignedTool};
use mcp_resolve_runtime::hints;
use mcp_resolve_runtime::{Annotations, Dialect, EXTENSION_ID};

/// Compares the hints a server reports with the signature's complete set.
///
/// Every hint the signature declares that the server reports must have the
/// same value; a core hint the server leaves out counts as its MCP default
/// (from [`mcp_resolve_runtime::hints`]); `only_core` limits the comparison to the four core
/// hints (the extension dialect returns exactly those). A boolean hint the
/// signature does not declare is a violation.
fn compare_hints(
    tool: &str,
    expected: &Annotations,
    reported: &Map<String, Value>,
    only_core: bool,
    context: &dyn fmt::Display,
    out: &mut Vec<Violation>,
) {
    // One pass over what the server reports; each core hint's value is
    // kept by position (`Some(None)`: reported, not a boolean).
    let mut core_reported: [Option<Option<bool>>; 4] = [None; 4];
    for (hint, value) in reported {
        let core = hints::core_index(hint);
        match value {
            Value::Bool(b) => match core {
                Some(i) => core_reported[i] = Some(Some(*b)),
                None if expected.extra.get(hint).is_none() => out.push(Violation::new(
                    ViolationKind::UndeclaredHint,
                    tool,
                    format!("{context} reports `{hint}`, which the signature does not declare"),
                )),
                None => {}
            },
            Value::String(_) if hint == "title" => {}
            _ => {
                if let Some(i) = core {
                    core_reported[i] = Some(None);
                }
                out.push(Violation::new(
                    ViolationKind::Malformed,
                    tool,
                    format!("{context} reports `{hint}` as {value}, not a boolean"),
                ));
            }
        }
    }
    let mut differs = |hint: &str, want: bool, got: bool, left_out: bool| {
        if got == want {
            return;
        }
        let mut v = Violation::new(
            ViolationKind::Annotation,
            tool,
            format!(
                "{context} has `{hint}: {got}`{} where the signature declares `{want}`",
                if left_out {
                    " (left out, so the MCP default)"
                } else {
                    ""
                }
            ),
        );
        // A claim away from the worst value is less conservative; for a
        // hint with no known direction, any difference may be.
        v.less_conservative = hints::worst_value(hint).is_none_or(|worst| want == worst);
        out.push(v);
    };
    // The core hints in wire order: one left out is its MCP default.
    for (i, (hint, want)) in expected.core().into_iter().enumerate() {
        match core_reported[i] {
            Some(Some(got)) => differs(hint, want, got, false),
            Some(None) => {}
            None => differs(hint, want, hints::BUILTIN_HINTS[i].default, true),
        }
    }
    // The extra hints by name: one left out makes no claim.
    if !only_core {
        for (hint, want) in expected.extra.sorted() {
            if let Some(Value::Bool(got)) = reported.get(hint) {
                differs(hint, want, *got, false);
            }
        }
    }
}

/// Where a resolution's annotations came from, for messages: written only
/// when there is something to say.
struct Resolution<'a>(Option<&'a str>);

impl fmt::Display for Resolution<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(variant) => write!(f, "the resolution (variant `{variant}`)"),
            None => f.write_str("the resolution (static annotations)"),
        }
    }
}

fn compare_scopes(
    tool: &str,
    expected: &[String],
    reported: &BTreeSet<String>,
    context: &dyn fmt::Display,
    out: &mut Vec<Violation>,
) {
    let expected: BTreeSet<String> = expected.iter().cloned().collect();
    if &expected != reported {
        let mut v = Violation::new(
            ViolationKind::Scopes,
            tool,
            format!(
                "{context} asks for scopes {:?} where the signature declares {:?}",
                reported, expected
            ),
        );
        // Scopes beyond the signature's are access it did not declare.
        v.less_conservative = !reported.is_subset(&expected);
        out.push(v);
    }
}

/// The scopes of SEP-1488 `securitySchemes`: the union of the `oauth2`
/// schemes' scopes (`noauth` needs none). `None` when the field is absent.
fn scopes_of_schemes(tool: &Map<String, Value>) -> Option<Result<BTreeSet<String>, String>> {
    let schemes = tool.get("securitySchemes")?;
    let Some(schemes) = schemes.as_array() else {
        return Some(Err("`securitySchemes` is not an array".into()));
    };
    let mut scopes = BTreeSet::new();
    for scheme in schemes {
        if let Some(list) = scheme.get("scopes") {
            let strings = list.as_array().and_then(|items| {
                items
                    .iter()
                    .map(|s| s.as_str().map(str::to_string))
                    .collect::<Option<Vec<String>>>()
            });
            match strings {
                Some(list) => scopes.extend(list),
                None => {
                    return Some(Err(
                        "`securitySchemes[].scopes` must be an array of strings".into(),
                    ));
                }
            }
        }
    }
    Some(Ok(scopes))
}

/// The fields of a tool the signature pins besides its annotations: every
/// member of MCP's `Tool`.
const PINNED_FIELDS: [&str; 7] = [
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "icons",
    "execution",
    "_meta",
];

fn compare_tool_fields(
    signed: &SignedTool,
    listed: &Map<String, Value>,
    context: &str,
    out: &mut Vec<Violation>,
) {
    let mut changed = |what: &str| {
        out.push(Violation::new(
            ViolationKind::ToolChanged,
            signed.name(),
            format!("{context} has a `{what}` that differs from the signature's"),
        ))
    };
    // A resolvable marker is the dialect's, not the tool's.
    let listed = Dialect::unmark(listed);
    for field in PINNED_FIELDS {
        let mut want = signed.def().field(field);
        if field == "_meta"
            && want
                .as_ref()
                .and_then(Value::as_object)
                .is_some_and(Map::is_empty)
        {
            // `unmark` drops a `_meta` left empty; an empty one says nothing.
            want = None;
        }
        if listed.get(field) != want.as_ref() {
            changed(field);
        }
    }
}

/// `annotations.title` as listed against the signature's. Only `tools/list`
/// pins it: a resolution's annotations are the resolved hints, and a display
/// title there neither adds to nor takes from them.
fn compare_annotations_title(
    signed: &SignedTool,
    listed: &Map<String, Value>,
    out: &mut Vec<Violation>,
) {
    let title = listed.get("annotations").and_then(|a| a.get("title"));
    if title.and_then(Value::as_str) != signed.def().annotations.title.as_deref() {
        out.push(Violation::new(
            ViolationKind::ToolChanged,
            signed.name(),
            "tools/list has an `annotations.title` that differs from the signature's".into(),
        ));
    }
}

fn marked_resolvable(tool: &Map<String, Value>) -> bool {
    let extension = tool
        .get("_meta")
        .and_then(|m| m.get(EXTENSION_ID))
        .and_then(|m| m.get("resolvable"))
        == Some(&Value::Bool(true));
    extension
        || tool.get("resolve") == Some(&Value::Bool(true))
        || tool.get("dynamicAnnotations") == Some(&Value::Bool(true))
}

/// Checks a `tools/list` result (`{"tools": [...]}`, one page or all pages
/// concatenated, or the bare array) against the signature: every listed tool
/// must be in the signature with the same members of MCP's `Tool` (title,
/// description, `inputSchema`, `outputSchema`, icons, execution, `_meta`
/// apart from the resolvable marker, `annotations.title`), static
/// annotations equal to the signature's, and a
/// resolvable marker (of any dialect) only if the signature gives it
/// variants. Tools the signature has but the server does not list are fine.
#[expect(
    clippy::too_many_lines,
    reason = "one check per member of MCP's `Tool`, in the order the violations are reported"
)]
pub fn verify_tools_list(signature: &Signature, result: &Value) -> Result<(), Violations> {
    let tools = match result {
        Value::Array(tools) => tools,
        other => match other.get("tools").and_then(Value::as_array) {
            Some(tools) => tools,
            None => {
                return Err(Violation::new(
                    ViolationKind::Malformed,
                    "",
                    "a tools/list result needs a `tools` array".into(),
                )
                .into());
            }
        },
    };
    let mut out = Vec::new();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for tool in tools {
        let Some(listed) = tool.as_object() else {
            out.push(Violation::new(
                ViolationKind::Malformed,
                "",
                format!("tools/list holds {tool}, not a tool object"),
            ));
            continue;
        };
        let Some(name) = listed.get("name").and_then(Value::as_str) else {
            out.push(Violation::new(
                ViolationKind::Malformed,
                "",
                "tools/list holds a tool without a string `name`".into(),
            ));
            continue;
        };
        if !seen.insert(name) {
            out.push(Violation::new(
                ViolationKind::DuplicateTool,
                name,
                "tools/list names the tool twice".into(),
            ));
            continue;
        }
        let Some(signed) = signature.tool(name) else {
            out.push(Violation::new(
                ViolationKind::UnknownTool,
                name,
                "tools/list offers a tool the signature does not have".into(),
            ));
            continue;
        };
        compare_tool_fields(signed, listed, "tools/list", &mut out);
        compare_annotations_title(signed, listed, &mut out);
        match listed.get("annotations") {
            None => {
                // No annotations: every core hint at its MCP default.
                compare_hints(
                    name,
                    signed.annotations(),
                    &Map::new(),
                    false,
                    &"tools/list",
                    &mut out,
                );
            }
            Some(Value::Object(reported)) => {
                compare_hints(
                    name,
                    signed.annotations(),
                    reported,
                    false,
                    &"tools/list",
                    &mut out,
                );
            }
            Some(other) => out.push(Violation::new(
                ViolationKind::Malformed,
                name,
                format!("tools/list has `annotations` {other}, not an object"),
            )),
        }
        if marked_resolvable(listed) && !signed.is_resolvable() {
            out.push(Violation::new(
                ViolationKind::NotResolvable,
                name,
                "tools/list marks the tool resolvable but the signature gives it no variants"
                    .into(),
            ));
        }
        if let Some(scopes) = scopes_of_schemes(listed) {
            match scopes {
                Ok(scopes) => {
                    compare_scopes(
                        name,
                        signed.required_scopes(),
                        &scopes,
                        &"tools/list",
                        &mut out,
                    );
                }
                Err(e) => out.push(Violation::new(ViolationKind::Malformed, name, e)),
            }
        }
    }
    finish(out)
}

/// Checks a resolution result against what the signature declares for
/// `(name, arguments)` (the host-side evaluation recipe of
/// docs/signature.md). The result may be in any dialect:
///
/// - extension: `{"resultType": "complete", "name", "annotations"}` — the four
///   core hints are compared;
/// - SEP-1862: `{"tool": {…}}` — the tool's pinned fields, every hint, and
///   the scopes of its `securitySchemes` are compared;
/// - `tools/annotations`: `{"annotations"}` — every hint is compared.
///
/// A core hint the result leaves out counts as its MCP default; a hint the
/// signature does not declare is a violation. On success, returns the
/// signature's answer, which the host should act on.
pub fn verify_resolution<'a>(
    signature: &'a Signature,
    name: &str,
    arguments: &Value,
    result: &Value,
) -> Result<Expected<'a>, Violations> {
    let expected = signature.expect(name, arguments)?;
    let want = expected.annotations();
    let context = Resolution(expected.variant().map(|v| v.name()));
    let malformed = |message: String| -> Violations {
        Violation::new(ViolationKind::Malformed, name, message).into()
    };
    let Some(object) = result.as_object() else {
        return Err(malformed(format!(
            "a resolution result must be an object, not {result}"
        )));
    };
    // The members a dialect is told by, read in one pass (a result has a
    // handful): `tool` (SEP-1862), else `resultType` (the extension), else
    // `annotations` (`tools/annotations`).
    let (mut tool_member, mut result_type_member, mut name_member, mut annotations_member) =
        (None, None, None, None);
    for (key, value) in object {
        match key.as_str() {
            "tool" => tool_member = Some(value),
            "resultType" => result_type_member = Some(value),
            "name" => name_member = Some(value),
            "annotations" => annotations_member = Some(value),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Some(tool) = tool_member {
        // SEP-1862: the whole tool.
        let Some(tool) = tool.as_object() else {
            return Err(malformed("`tool` must be an object".into()));
        };
        if tool.get("name").and_then(Value::as_str) != Some(name) {
            return Err(malformed(format!(
                "the result describes tool {}, not `{name}`",
                tool.get("name").unwrap_or(&Value::Null)
            )));
        }
        compare_tool_fields(expected.tool(), tool, "the resolved tool", &mut out);
        let Some(Value::Object(reported)) = tool.get("annotations") else {
            return Err(malformed(
                "the resolved tool has no `annotations` object".into(),
            ));
        };
        compare_hints(name, want, reported, false, &context, &mut out);
        match scopes_of_schemes(tool) {
            None => {}
            Some(Ok(scopes)) => {
                compare_scopes(
                    name,
                    expected.required_scopes(),
                    &scopes,
                    &context,
                    &mut out,
                );
            }
            Some(Err(e)) => out.push(Violation::new(ViolationKind::Malformed, name, e)),
        }
    } else if let Some(result_type) = result_type_member {
        // The tool-resolution extension.
        if result_type != "complete" {
            return Err(malformed(format!(
                "`resultType` is {result_type}; only a complete result carries annotations"
            )));
        }
        if name_member.and_then(Value::as_str) != Some(name) {
            return Err(malformed(format!(
                "the result names tool {}, not `{name}`",
                name_member.unwrap_or(&Value::Null)
            )));
        }
        let Some(Value::Object(reported)) = annotations_member else {
            return Err(malformed("the result has no `annotations` object".into()));
        };
        compare_hints(name, want, reported, true, &context, &mut out);
    } else if let Some(annotations) = annotations_member {
        // `tools/annotations`.
        let Some(reported) = annotations.as_object() else {
            return Err(malformed("`annotations` must be an object".into()));
        };
        compare_hints(name, want, reported, false, &context, &mut out);
    } else {
        return Err(malformed(
            "the result has none of `tool`, `resultType` or `annotations`".into(),
        ));
    }
    finish(out).map(|()| expected)
}
