//! The large literals of generated code: JSON texts as raw string literals
//! (fenced by construction, never lexed again) and the printing of the
//! shared items with those literals put in after `prettyplease`.

use super::*;

/// Placeholder `i` after `prefix`, padded to the width of `lit` (the
/// literal it stands for, in parts) up to a line's width.
pub(super) fn placeholder(prefix: &str, i: usize, lit: &[String]) -> String {
    const WIDE: usize = 160;
    let mut p = format!("{prefix}{i}");
    // Two quotes around it when printed.
    let width = lit
        .iter()
        .flat_map(|part| part.chars())
        .take(WIDE)
        .count()
        .saturating_sub(2);
    while p.len() < width {
        p.push('_');
    }
    p
}

/// Items printed with their large literals put in after printing: the
/// printer is given a short placeholder for each (as wide as its literal up
/// to a line's width, so the layout is the same) and would only copy the
/// literal, several times over. Each literal was written as Rust source on
/// its own ([`text_literal`]). The result is the printed text in pieces with
/// the literals moved in between, never copied into one string. Should a
/// text of the items spell a placeholder, they are printed with the
/// literals in place instead.
pub(super) fn print_with_literals<const N: usize>(
    prefix: &str,
    large: [Vec<String>; N],
    items: impl Fn([TokenStream; N]) -> TokenStream,
) -> Result<Vec<String>, CodegenError> {
    let placeholders: [String; N] = std::array::from_fn(|i| placeholder(prefix, i, &large[i]));
    let stand_ins = placeholders
        .each_ref()
        .map(|p| quote_literal(Literal::string(p)));
    let printed = print_items(items(stand_ins))?;
    if let Ok(spans) = placeholder_spans(&printed, &placeholders) {
        let mut large = large.map(Some);
        let mut pieces = Vec::with_capacity(2 * N + 1);
        let mut from = 0;
        for (at, len, i) in spans {
            pieces.push(printed[from..at].to_string());
            pieces.extend(large[i].take().unwrap_or_default());
            from = at + len;
        }
        pieces.push(printed[from..].to_string());
        return Ok(pieces);
    }
    let mut literals = Vec::with_capacity(N);
    for source in &large {
        literals.push(source_literal(&source.concat())?);
    }
    let literals: [TokenStream; N] = literals
        .try_into()
        .map_err(|_| CodegenError::MissingLiteral)?;
    Ok(vec![print_items(items(literals))?])
}

pub(super) fn quote_literal(lit: Literal) -> TokenStream {
    quote!(#lit)
}

/// A literal from its Rust source (as [`text_literal`] writes it).
pub(super) fn source_literal(source: &str) -> Result<TokenStream, CodegenError> {
    source
        .parse::<Literal>()
        .map(quote_literal)
        .map_err(CodegenError::Literal)
}

/// Where each placeholder's literal is in `text` (offset, length, which
/// placeholder), in the order of the text; an error when one is not found
/// exactly once.
pub(super) fn placeholder_spans(
    text: &str,
    placeholders: &[String],
) -> Result<Vec<(usize, usize, usize)>, CodegenError> {
    let mut spans = Vec::with_capacity(placeholders.len());
    for (i, p) in placeholders.iter().enumerate() {
        let quoted = Literal::string(p).to_string();
        let mut found = text.match_indices(&quoted);
        match (found.next(), found.next()) {
            (Some((at, _)), None) => spans.push((at, quoted.len(), i)),
            _ => return Err(CodegenError::Placeholder(p.clone())),
        }
    }
    spans.sort_by_key(|&(at, _, _)| at);
    Ok(spans)
}

/// Items as prettyplease prints them, checked to parse back (what is
/// written must parse, not only the tokens it was printed from).
pub(super) fn print_items(tokens: TokenStream) -> Result<String, CodegenError> {
    let file: syn::File = syn::parse2(tokens).map_err(CodegenError::Parse)?;
    let text = prettyplease::unparse(&file);
    syn::parse_file(&text).map_err(CodegenError::ParseBack)?;
    Ok(text)
}

/// A string literal for JSON text, as Rust source: raw (readable) when it
/// can be, escaped otherwise. Raw by construction — no bare CR, and a fence
/// of one `#` more than the longest run of `#` after a `"` (at most 255,
/// Rust's limit) — so it is not lexed again: for the signature of 10,000
/// tools that was a second pass over 90 MB.
pub(super) fn text_literal(text: &str) -> String {
    let Some(hashes) = raw_fence(&[text]) else {
        return Literal::string(text).to_string();
    };
    let fence = "#".repeat(hashes);
    format!("r{fence}\"{text}\"{fence}")
}

/// [`text_literal`] of the text `parts` make, in parts: the raw literal's
/// opening, the parts themselves (moved, not copied), and its closing.
pub(super) fn text_literal_parts(parts: Vec<String>) -> Vec<String> {
    let Some(hashes) = raw_fence(&parts) else {
        return vec![Literal::string(&parts.concat()).to_string()];
    };
    let fence = "#".repeat(hashes);
    let mut out = Vec::with_capacity(parts.len() + 2);
    out.push(format!("r{fence}\""));
    out.extend(parts);
    out.push(format!("\"{fence}"));
    out
}

/// How many `#` a raw string literal of the text `parts` make needs: one
/// more than the longest run of `#` after a `"` (none without a `"`); `None`
/// when no raw literal will do (a carriage return, which a raw literal
/// cannot hold, or a fence past the 255 `#` Rust allows).
///
/// JSON text is full of `"` and all but free of `#` and `\r`, so the scan
/// jumps from one `#` or `\r` to the next (`memchr`, many bytes at a time)
/// instead of stepping through every byte: at 10,000 tools the literals
/// are 150 MB.
pub(super) fn raw_fence<S: AsRef<str>>(parts: &[S]) -> Option<usize> {
    const MAX_HASHES: usize = 255;
    let mut hashes = usize::from(
        parts
            .iter()
            .any(|p| memchr::memchr(b'"', p.as_ref().as_bytes()).is_some()),
    );
    // The run of `#` after a `"` that the part before ended in, if it did.
    let mut carried: Option<usize> = None;
    for part in parts {
        let bytes = part.as_ref().as_bytes();
        let mut at = 0;
        while let Some(found) = memchr::memchr2(b'#', b'\r', &bytes[at..]) {
            let start = at + found;
            if bytes[start] == b'\r' {
                return None;
            }
            let run = bytes[start..].iter().take_while(|&&b| b == b'#').count();
            let after_quote = match start.checked_sub(1) {
                Some(before) => (bytes[before] == b'"').then_some(0),
                None => carried,
            };
            if let Some(earlier) = after_quote {
                hashes = hashes.max(earlier + run + 1);
            }
            at = start + run;
        }
        let trailing = bytes.iter().rev().take_while(|&&b| b == b'#').count();
        carried = if trailing == bytes.len() {
            carried.map(|earlier| earlier + trailing)
        } else if bytes[bytes.len() - 1 - trailing] == b'"' {
            Some(trailing)
        } else {
            None
        };
    }
    (hashes <= MAX_HASHES).then_some(hashes)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The byte-at-a-time reading of the fence [`raw_fence`] computes with
    /// `memchr`.
    fn raw_fence_reference(parts: &[String]) -> Option<usize> {
        let (mut hashes, mut run, mut carriage_return) = (0, None, false);
        for &b in parts.iter().flat_map(|p| p.as_bytes()) {
            run = match (b, run) {
                (b'"', _) => Some(0),
                (b'#', Some(n)) => Some(n + 1),
                (b'\r', _) => {
                    carriage_return = true;
                    None
                }
                _ => None,
            };
            if let Some(n) = run {
                hashes = std::cmp::max(hashes, n + 1);
            }
        }
        (!carriage_return && hashes <= 255).then_some(hashes)
    }

    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        #[test]
        fn the_fence_is_the_byte_by_byte_one(
            parts in proptest::collection::vec(
                proptest::collection::vec(
                    proptest::sample::select(vec!['"', '#', 'a', '\r', 'é']), 0..12
                ).prop_map(|cs| cs.into_iter().collect::<String>()),
                0..5,
            )
        ) {
            proptest::prop_assert_eq!(raw_fence(&parts), raw_fence_reference(&parts));
        }
    }

    #[test]
    fn long_fences_are_measured_across_parts() {
        let parts =
            |a: usize, b: usize| vec![format!("x\"{}", "#".repeat(a)), "#".repeat(b), "y".into()];
        for (a, b) in [
            (0, 0),
            (3, 4),
            (200, 54),
            (200, 55),
            (0, 255),
            (255, 0),
            (300, 0),
        ] {
            assert_eq!(
                raw_fence(&parts(a, b)),
                raw_fence_reference(&parts(a, b)),
                "{a} {b}"
            );
        }
    }

    #[test]
    fn placeholders_are_filled_only_when_found_exactly_once() {
        let lits = ["r#\"big \"text\"#".to_string(), "\"b\"".to_string()];
        let parts = || lits.clone().map(|lit| vec![lit]);
        let ps = [0, 1].map(|i| placeholder("p.", i, &[lits[i].clone()]));
        assert_eq!(ps[0].len(), lits[0].len() - 2);
        let q = ps.each_ref().map(|p| Literal::string(p).to_string());
        let text = format!("const A: &str = {};\nconst B: &str = {};\n", q[0], q[1]);
        assert_eq!(
            placeholder_spans(&text, &ps).unwrap(),
            vec![(16, q[0].len(), 0), (16 + q[0].len() + 18, q[1].len(), 1)]
        );
        // Twice (a user's text spelling it), or not at all: not filled.
        let twice = format!("{text}// {}\n", q[1]);
        assert!(placeholder_spans(&twice, &ps).is_err());
        assert!(placeholder_spans("fn f() {}", &ps).is_err());

        // Printed in pieces, the literals moved in between.
        let items = |[a, b]: [TokenStream; 2]| quote!(const A: &str = #a; const B: &str = #b;);
        let pieces = print_with_literals("p.", parts(), items).unwrap();
        assert_eq!(pieces.len(), 5);
        assert_eq!(
            pieces.concat(),
            format!(
                "const A: &str = {};\nconst B: &str = {};\n",
                lits[0], lits[1]
            )
        );
        // A text that spells a placeholder: printed with the literals in place.
        let spelled = |[a, b]: [TokenStream; 2]| {
            let p = ps[0].as_str();
            quote!(const A: &str = #a; const B: &str = #b; const C: &str = #p;)
        };
        let pieces = print_with_literals("p.", parts(), spelled).unwrap();
        assert_eq!(pieces.len(), 1);
        assert!(pieces[0].contains(&lits[0]) && pieces[0].contains(&lits[1]));
    }

    #[test]
    fn raw_literals_survive_quotes_and_hashes() {
        let fence_255 = format!("\"{}", "#".repeat(254));
        let fence_256 = format!("\"{}", "#".repeat(255));
        for text in [
            "plain",
            "a\"b",
            "\"#",
            "x\"##y",
            "",
            "\"",
            "#",
            "new\nline",
            "a\rb",
            "nul\0 and é",
            &fence_255,
            &fence_256,
        ] {
            let lit = text_literal(text);
            let parsed: syn::LitStr = syn::parse_str(&lit).unwrap();
            assert_eq!(parsed.value(), text);
        }
        // In parts: a run of hashes across a part's end counts whole.
        let split = text_literal_parts(vec!["a\"#".into(), "#b".into()]);
        assert_eq!(split.first().map(String::as_str), Some("r###\""));
        assert_eq!(split.concat(), text_literal("a\"##b"));
        assert_eq!(text_literal_parts(Vec::new()).concat(), "r\"\"");
        assert_eq!(
            text_literal_parts(vec!["a".into(), "\r".into()]),
            vec!["\"a\\r\"".to_string()]
        );
        assert!(text_literal(&fence_255).starts_with('r'));
        assert!(text_literal(&fence_256).starts_with('"'));
        assert!(text_literal("a\rb").starts_with('"'));
    }
}
