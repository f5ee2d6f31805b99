//! A tool's outcomes (each variant, then the static fallback) as generated
//! code holds them: one string literal, decoded into [`Resolved`] values the
//! first time the tool resolves.
//!
//! One literal per tool costs the compiler almost nothing, where a table of
//! `Resolved` values written as Rust costs it a few dozen expressions (and
//! promoted constants) per outcome: at thousands of tools that is most of
//! the time a generated crate takes to build. The texts inside (tool name,
//! variant names, scopes, and every dialect's result text) are borrowed from
//! the literal, not copied.
//!
//! The format is a sequence of netstrings (`<byte length>:<bytes>,`), so any
//! text fits without escaping: the tool name, the SEP-1862 head the outcomes
//! share, the number of outcomes, then for each outcome its variant (`-` for
//! none, `=` and the name), its four core hints as `0`/`1`, its extra hints
//! (a count, then name and `0`/`1` each), its scopes (a count, then each),
//! its extension result, its SEP-1862 result in three pieces (the first as
//! `^` for the shared head, or `=` and the text) and its `tools/annotations`
//! result. [`encode`] and [`Outcomes::get`] are the two ends of it.

use std::sync::OnceLock;

use crate::{Annotations, ExtraHints, Resolved, ResultTexts, RpcError};

/// One outcome of a tool, as the generator knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutcomeParts<'a> {
    /// The variant's name; `None` for the static fallback.
    pub variant: Option<&'a str>,
    /// `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`.
    pub core: [bool; 4],
    /// The extra hints, in order.
    pub extra: Vec<(&'a str, bool)>,
    /// The OAuth scopes.
    pub scopes: Vec<&'a str>,
    /// The extension dialect's result text.
    pub extension: &'a str,
    /// The SEP-1862 result text in three pieces.
    pub sep1862: [&'a str; 3],
    /// The `tools/annotations` result text.
    pub annotations: &'a str,
}

fn put(out: &mut String, field: &str) {
    out.push_str(&field.len().to_string());
    out.push(':');
    out.push_str(field);
    out.push(',');
}

fn flag(b: bool) -> &'static str {
    if b { "1" } else { "0" }
}

/// The literal generated code holds for one tool's outcomes (decoded by
/// [`Outcomes::get`]). Outcomes whose SEP-1862 text starts with `head` share it.
pub fn encode(tool: &str, head: &str, outcomes: &[OutcomeParts<'_>]) -> String {
    let mut out = String::new();
    put(&mut out, tool);
    put(&mut out, head);
    put(&mut out, &outcomes.len().to_string());
    for o in outcomes {
        match o.variant {
            Some(v) => {
                put(&mut out, "=");
                put(&mut out, v);
            }
            None => put(&mut out, "-"),
        }
        let core: String = o.core.iter().map(|&b| flag(b)).collect();
        put(&mut out, &core);
        put(&mut out, &o.extra.len().to_string());
        for (name, value) in &o.extra {
            put(&mut out, name);
            put(&mut out, flag(*value));
        }
        put(&mut out, &o.scopes.len().to_string());
        for scope in &o.scopes {
            put(&mut out, scope);
        }
        put(&mut out, o.extension);
        if o.sep1862[0] == head {
            put(&mut out, "^");
        } else {
            put(&mut out, "=");
            put(&mut out, o.sep1862[0]);
        }
        put(&mut out, o.sep1862[1]);
        put(&mut out, o.sep1862[2]);
        put(&mut out, o.annotations);
    }
    out
}

/// Reads netstrings off a `'static` literal.
struct Reader {
    rest: &'static str,
}

impl Reader {
    fn field(&mut self) -> Option<&'static str> {
        let (len, rest) = self.rest.split_once(':')?;
        let len: usize = len.parse().ok()?;
        let field = rest.get(..len)?;
        self.rest = rest.get(len..)?.strip_prefix(',')?;
        Some(field)
    }

    fn count(&mut self) -> Option<usize> {
        let n: usize = self.field()?.parse().ok()?;
        // Every item takes at least one byte: a count beyond what is left
        // is corrupt, and never allocated for.
        (n <= self.rest.len()).then_some(n)
    }

    fn flag(&mut self) -> Option<bool> {
        match self.field()? {
            "0" => Some(false),
            "1" => Some(true),
            _ => None,
        }
    }
}

fn decode(data: &'static str) -> Option<Box<[Resolved]>> {
    let mut r = Reader { rest: data };
    let tool = r.field()?;
    let head = r.field()?;
    let n = r.count()?;
    let mut outcomes = Vec::with_capacity(n);
    for _ in 0..n {
        let variant = match r.field()? {
            "-" => None,
            "=" => Some(r.field()?),
            _ => return None,
        };
        let mut core = [false; 4];
        match r.field()?.as_bytes() {
            bits @ [_, _, _, _] => {
                for (hint, bit) in core.iter_mut().zip(bits) {
                    *hint = match bit {
                        b'0' => false,
                        b'1' => true,
                        _ => return None,
                    };
                }
            }
            _ => return None,
        }
        let [read_only, destructive, idempotent, open_world] = core;
        let extras = r.count()?;
        let mut extra = Vec::with_capacity(extras);
        for _ in 0..extras {
            extra.push((r.field()?, r.flag()?));
        }
        let scopes = r.count()?;
        let mut required_scopes = Vec::with_capacity(scopes);
        for _ in 0..scopes {
            required_scopes.push(r.field()?);
        }
        let extension = r.field()?;
        let first = match r.field()? {
            "^" => head,
            "=" => r.field()?,
            _ => return None,
        };
        let sep1862 = [first, r.field()?, r.field()?];
        let annotations = r.field()?;
        outcomes.push(Resolved {
            tool,
            variant,
            annotations: Annotations {
                read_only,
                destructive,
                idempotent,
                open_world,
                // Decoded once per process and held for its lifetime, as a
                // static table would be.
                extra: ExtraHints::Static(Box::leak(extra.into_boxed_slice())),
            },
            required_scopes: Box::leak(required_scopes.into_boxed_slice()),
            results: ResultTexts {
                extension,
                sep1862,
                annotations,
            },
        });
    }
    r.rest.is_empty().then(|| outcomes.into_boxed_slice())
}

/// One tool's outcomes in generated code: the literal [`encode`] wrote,
/// decoded on first use (once per process, by whichever thread comes first).
#[derive(Debug)]
pub struct Outcomes {
    data: &'static str,
    decoded: OnceLock<Option<Box<[Resolved]>>>,
}

impl Outcomes {
    /// The outcomes [`encode`] wrote into `data`.
    pub const fn new(data: &'static str) -> Self {
        Outcomes {
            data,
            decoded: OnceLock::new(),
        }
    }

    /// Outcome `index`: `-32603` when there is none such, or the literal is
    /// not what [`encode`] writes (neither happens with generated code, and
    /// neither panics).
    #[inline]
    pub fn get(&'static self, index: usize) -> Result<&'static Resolved, RpcError> {
        let all = self.decoded.get_or_init(|| decode(self.data));
        select(all.as_deref().unwrap_or_default(), index)
    }
}

/// Outcome `index` of a tool whose outcomes generated code holds as a
/// static array (resolvers of a few tools, where the compiler sees the
/// array's length and the constant index and drops the check): `-32603` when
/// there is none such, which generated code never asks for.
#[inline]
pub fn select(outcomes: &'static [Resolved], index: usize) -> Result<&'static Resolved, RpcError> {
    match outcomes.get(index) {
        Some(outcome) => Ok(outcome),
        None => Err(no_outcome(index)),
    }
}

#[cold]
#[inline(never)]
fn no_outcome(index: usize) -> RpcError {
    RpcError::new(
        RpcError::INTERNAL_ERROR,
        format!("generated resolver data has no outcome {index}"),
        None,
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn parts() -> Vec<OutcomeParts<'static>> {
        vec![
            OutcomeParts {
                variant: Some("read, with: \"odd\" 12:text,\n"),
                core: [true, false, true, false],
                extra: vec![("agencyHint", false), ("x:1,", true)],
                scopes: vec!["files:read", ""],
                extension: r#"{"resultType":"complete"}"#,
                sep1862: ["HEAD", "{\"readOnlyHint\":true}", "}"],
                annotations: "{}",
            },
            OutcomeParts {
                variant: None,
                core: [false, true, false, true],
                extra: vec![],
                scopes: vec![],
                extension: "é",
                sep1862: ["other head", "", ""],
                annotations: "",
            },
        ]
    }

    #[test]
    fn outcomes_decode_to_what_was_encoded() {
        let data: &'static str = Box::leak(encode("tool", "HEAD", &parts()).into_boxed_str());
        let outcomes: &'static Outcomes = Box::leak(Box::new(Outcomes::new(data)));
        for (i, p) in parts().iter().enumerate() {
            let r = outcomes.get(i).unwrap();
            assert_eq!(r.tool, "tool");
            assert_eq!(r.variant, p.variant);
            let a = &r.annotations;
            assert_eq!(
                [a.read_only, a.destructive, a.idempotent, a.open_world],
                p.core
            );
            assert_eq!(a.extra.iter().collect::<Vec<_>>(), p.extra);
            assert_eq!(r.required_scopes, p.scopes.as_slice());
            assert_eq!(r.results.extension, p.extension);
            assert_eq!(r.results.sep1862, p.sep1862);
            assert_eq!(r.results.annotations, p.annotations);
        }
        assert_eq!(outcomes.get(2).unwrap_err().code, RpcError::INTERNAL_ERROR);
    }

    #[test]
    fn corrupt_data_is_an_error_not_a_panic() {
        let good = encode("tool", "HEAD", &parts());
        let mut cases = vec![
            String::new(),
            "x".into(),
            "99999999999999999999999:".into(),
            "4:tool,4:HEAD,99999:".into(),
            // Hints that are not four bits.
            "4:tool,4:HEAD,1:1,1:-,4:10x1,1:0,1:0,0:,1:^,0:,0:,0:,".into(),
            "4:tool,4:HEAD,1:1,1:-,3:101,1:0,1:0,0:,1:^,0:,0:,0:,".into(),
            format!("{good}1:x,"),
        ];
        for cut in 0..good.len() {
            if good.is_char_boundary(cut) {
                cases.push(good[..cut].to_string());
            }
        }
        // The same literal with four bits decodes: the two above fail on
        // their hints alone.
        let control: &'static str = "4:tool,4:HEAD,1:1,1:-,4:1001,1:0,1:0,0:,1:^,0:,0:,0:,";
        let outcomes: &'static Outcomes = Box::leak(Box::new(Outcomes::new(control)));
        let r = outcomes.get(0).unwrap();
        assert!(r.annotations.read_only && r.annotations.open_world);
        assert!(!r.annotations.destructive && !r.annotations.idempotent);
        for case in cases {
            let data: &'static str = Box::leak(case.into_boxed_str());
            let outcomes: &'static Outcomes = Box::leak(Box::new(Outcomes::new(data)));
            assert!(outcomes.get(0).is_err(), "{data:?}");
        }
    }
}
