//! A tool's outcomes, every dialect's response precomputed: the literal the
//! runtime decodes, or for a resolver of a few tools, an array of
//! `Resolved` written out.

use super::*;

/// Where a tool's outcomes go.
pub(super) enum Form<'a> {
    /// An array of `Resolved` in the runtime at this path.
    Array(&'a str),
    /// The literal the runtime decodes, after the tool's entry part (as
    /// `listing::encode` wrote it).
    Literal(&'a str),
}

/// A tool's outcomes, every dialect's response precomputed, as the literal
/// the runtime decodes or as an array of `Resolved` ([`Form`]). `tool` is
/// the tool's SEP-1862 `tools/list` entry; the SEP-1862 results share the
/// tool's head rather than repeat it.
pub(super) fn encode_outcomes(
    tool: &Value,
    name: &str,
    resolutions: &[Resolution],
    form: Form<'_>,
) -> String {
    struct Texts {
        extension: String,
        sep1862: [String; 3],
        annotations: String,
    }
    let text =
        |d: Dialect, r: &Resolution| serde_json::to_string(&d.result(tool, r)).unwrap_or_default();
    let sep1862 = sep1862_pieces(tool, resolutions);
    // What every outcome's SEP-1862 text starts with.
    let head = sep1862
        .first()
        .map(|[head, _, _]| head.clone())
        .unwrap_or_default();
    let texts: Vec<Texts> = resolutions
        .iter()
        .zip(sep1862)
        .map(|(r, sep1862)| Texts {
            extension: text(Dialect::Extension, r),
            sep1862,
            annotations: text(Dialect::Annotations, r),
        })
        .collect();
    let parts: Vec<OutcomeParts<'_>> = resolutions
        .iter()
        .zip(&texts)
        .map(|(r, t)| {
            let a = &r.annotations;
            OutcomeParts {
                variant: r.variant.as_deref(),
                core: [a.read_only, a.destructive, a.idempotent, a.open_world],
                extra: a.extra.iter().collect(),
                scopes: r.required_scopes.iter().map(String::as_str).collect(),
                extension: &t.extension,
                sep1862: [&t.sep1862[0], &t.sep1862[1], &t.sep1862[2]],
                annotations: &t.annotations,
            }
        })
        .collect();
    match form {
        Form::Array(rt) => outcomes_array(rt, name, &head, &parts),
        Form::Literal(entry) => outcomes::encode(entry, name, &head, &parts),
    }
}

/// A tool's outcomes as a Rust array of `Resolved` (the initializer of a
/// `static`), for the resolvers of a few tools: the outcome a call resolves
/// to is then an address the compiler knows, with no decoding on first use
/// to check for. The SEP-1862 texts that start with `head` share it, a
/// `const` in the block.
pub(super) fn outcomes_array(
    rt: &str,
    name: &str,
    head: &str,
    parts: &[OutcomeParts<'_>],
) -> String {
    use std::fmt::Write as _;
    let string = |s: &str| Literal::string(s).to_string();
    let mut out = format!(
        "{{
    const HEAD: &str = {};
    [
",
        text_literal(head)
    );
    for o in parts {
        let variant = match o.variant {
            Some(v) => format!("::core::option::Option::Some({})", string(v)),
            None => "::core::option::Option::None".into(),
        };
        let [read_only, destructive, idempotent, open_world] = o.core;
        let extra: Vec<String> = o
            .extra
            .iter()
            .map(|(hint, value)| format!("({}, {value})", string(hint)))
            .collect();
        let scopes: Vec<String> = o.scopes.iter().map(|s| string(s)).collect();
        // Written whole (see `sep1862_pieces`), a result has its own first
        // piece, as `outcomes::encode` keeps it.
        let [sep_head, sep_middle, sep_tail] = o.sep1862;
        let sep_head = if sep_head == head {
            "HEAD".to_string()
        } else {
            text_literal(sep_head)
        };
        let _ = write!(
            out,
            "        {rt}::Resolved {{
            \
                 tool: {tool},
            \
                 variant: {variant},
            \
                 annotations: {rt}::Annotations {{
                \
                     read_only: {read_only},
                \
                     destructive: {destructive},
                \
                     idempotent: {idempotent},
                \
                     open_world: {open_world},
                \
                     extra: {rt}::ExtraHints::Static(&[{extra}]),
            \
                 }},
            \
                 required_scopes: &[{scopes}],
            \
                 results: {rt}::ResultTexts {{
                \
                     extension: {extension},
                \
                     sep1862: [{sep_head}, {sep_middle}, {sep_tail}],
                \
                     annotations: {annotations},
            \
                 }},
        \
             }},
",
            tool = string(name),
            extra = extra.join(", "),
            scopes = scopes.join(", "),
            extension = text_literal(o.extension),
            sep_middle = text_literal(sep_middle),
            sep_tail = text_literal(sep_tail),
            annotations = text_literal(o.annotations),
        );
    }
    out.push_str(
        "    ]
}",
    );
    out
}

/// The SEP-1862 result texts of `resolutions`, each in three pieces:
/// everything before the annotations object (the same for every outcome of
/// a tool), the annotations object, and everything after it.
///
/// The runtime's [`Dialect::result`] shapes the result. Only its
/// annotations and `securitySchemes` differ from one resolution to the
/// next, so the tool's result is built and written once with a mark in
/// place of each, and each resolution's pieces are that text cut at the
/// marks with its own two values (taken from a result of the same
/// resolution for an empty tool) put in. When a mark is not found exactly
/// once, each result is written whole as its first piece.
pub(crate) fn sep1862_pieces(tool: &Value, resolutions: &[Resolution]) -> Vec<[String; 3]> {
    const ANNOTATIONS: &str = "\u{0}mcp-resolve:annotations\u{0}";
    const SCHEMES: &str = "\u{0}mcp-resolve:securitySchemes\u{0}";
    let whole = || {
        resolutions
            .iter()
            .map(|r| {
                let text = serde_json::to_string(&Dialect::Sep1862.result(tool, r));
                [text.unwrap_or_default(), String::new(), String::new()]
            })
            .collect()
    };
    let Some(first) = resolutions.first() else {
        return Vec::new();
    };
    let mut result = Dialect::Sep1862.result(tool, first);
    for (pointer, mark) in [
        ("/tool/annotations", ANNOTATIONS),
        ("/tool/securitySchemes", SCHEMES),
    ] {
        match result.pointer_mut(pointer) {
            Some(slot) => *slot = Value::String(mark.into()),
            None => return whole(),
        }
    }
    let text = serde_json::to_string(&result).unwrap_or_default();
    let once = |mark: &str| {
        let quoted = serde_json::to_string(mark).unwrap_or_default();
        let mut found = text.match_indices(&quoted);
        match (found.next(), found.next()) {
            (Some((at, _)), None) => Some((at, at + quoted.len())),
            _ => None,
        }
    };
    let (Some(annotations), Some(schemes)) = (once(ANNOTATIONS), once(SCHEMES)) else {
        return whole();
    };
    let empty = Value::Object(serde_json::Map::new());
    resolutions
        .iter()
        .map(|r| {
            let own = Dialect::Sep1862.result(&empty, r);
            let value = |pointer: &str| {
                serde_json::to_string(own.pointer(pointer).unwrap_or(&Value::Null))
                    .unwrap_or_default()
            };
            let (middle, scheme) = (value("/tool/annotations"), value("/tool/securitySchemes"));
            let head = &text[..annotations.0];
            // The annotations come before `securitySchemes` or after them.
            let tail = if annotations.1 <= schemes.0 {
                [&text[annotations.1..schemes.0], &scheme, &text[schemes.1..]].concat()
            } else {
                return [
                    [&text[..schemes.0], &scheme, &text[schemes.1..annotations.0]].concat(),
                    middle,
                    text[annotations.1..].to_string(),
                ];
            };
            [head.to_string(), middle, tail]
        })
        .collect()
}
