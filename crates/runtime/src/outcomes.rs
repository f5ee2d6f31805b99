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
//! The literal is the tool's `tools/list` entry ([`crate::listing`]), then,
//! as netstrings, the tool name, the SEP-1862 head the outcomes share
//! (`{"tool":` and the entry's prefix, derived, or written out), the two
//! ends of a SEP-1862 tail around its `securitySchemes`, the number of
//! outcomes, then for each outcome its variant (`-` for none, `=` and the
//! name), its four core hints as `0`/`1`, its extra hints (a count, then name
//! and `0`/`1` each), its scopes (a count, then each), and which of its five
//! result texts (extension; SEP-1862 head, annotations and tail;
//! `tools/annotations`) follow written out (`=`) rather than derived from the
//! facts before them (`^`), then those texts. [`encode`] writes a text out
//! only where the derivation would not give it byte for byte, so the texts
//! are the same either way; [`encode`] and [`Outcomes::get`] are the two
//! ends of it.
//!
//! Derived, the extension result is
//! `{"resultType":"complete","name":<tool>,"annotations":<core hints>}`, the
//! `tools/annotations` result `{"annotations":<every hint>}`, a SEP-1862
//! result the shared head, every hint, and the tail's two ends around the
//! outcome's `securitySchemes` ([`security_schemes_text`]). Generated code
//! thus holds a few dozen bytes per outcome, not every dialect's text.

use std::sync::OnceLock;

use crate::netstring::{self, Reader};
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

/// SEP-1488 `securitySchemes` for a set of scopes, as JSON text: what
/// [`crate::Dialect::result`] puts in a SEP-1862 result.
pub fn security_schemes_text(scopes: &[&str]) -> String {
    if scopes.is_empty() {
        return r#"[{"type":"noauth"}]"#.into();
    }
    let mut out = String::from(r#"[{"type":"oauth2","scopes":["#);
    for (i, scope) in scopes.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        crate::json::push_str_literal(&mut out, scope);
    }
    out.push_str("]}]");
    out
}

/// The tool's texts the derived results share.
struct Shared<'a> {
    tool: &'a str,
    tail: [&'a str; 2],
}

impl Shared<'_> {
    /// An outcome's result texts as derived from its facts: extension, the
    /// SEP-1862 annotations and tail, `tools/annotations` (the SEP-1862 head
    /// is the tool's).
    fn derive(&self, annotations: &Annotations, scopes: &[&str]) -> [String; 4] {
        let mut extension = String::from(r#"{"resultType":"complete","name":"#);
        crate::json::push_str_literal(&mut extension, self.tool);
        extension.push_str(r#","annotations":"#);
        extension.push_str(&annotations.json_text(false));
        extension.push('}');
        let every = annotations.json_text(true);
        let tail = [self.tail[0], &security_schemes_text(scopes), self.tail[1]].concat();
        let annotations = format!(r#"{{"annotations":{every}}}"#);
        [extension, every, tail, annotations]
    }
}

fn annotations_of(core: [bool; 4], extra: ExtraHints) -> Annotations {
    let [read_only, destructive, idempotent, open_world] = core;
    Annotations {
        read_only,
        destructive,
        idempotent,
        open_world,
        extra,
    }
}

/// The ends of a SEP-1862 tail around `schemes`, its last occurrence; the
/// whole tail and nothing when it is not there.
fn tail_ends<'a>(tail: &'a str, schemes: &str) -> [&'a str; 2] {
    match tail.rfind(schemes) {
        Some(at) => [&tail[..at], &tail[at + schemes.len()..]],
        None => [tail, ""],
    }
}

/// The head a tool's SEP-1862 results share when derived from its entry.
fn derived_head(prefix: &str) -> String {
    format!(r#"{{"tool":{prefix}"#)
}

/// A tool's literal: its `entry` (as [`crate::listing::encode`] wrote it),
/// then its outcomes (decoded by [`Outcomes::get`]). Outcomes whose SEP-1862
/// text starts with `head` share it; a text the derivation gives byte for
/// byte is left out.
pub fn encode(entry: &str, tool: &str, head: &str, outcomes: &[OutcomeParts<'_>]) -> String {
    let prefix = crate::listing::read(&mut Reader { rest: entry }).map_or("", |e| e.prefix);
    // The tail's ends, from the first outcome (they are the same for every
    // outcome of a tool shaped the usual way; any other is written out).
    let tail = outcomes.first().map_or(["", ""], |o| {
        tail_ends(o.sep1862[2], &security_schemes_text(&o.scopes))
    });
    let shared = Shared { tool, tail };
    let mut out = entry.to_string();
    netstring::put(&mut out, tool);
    netstring::put_texts(&mut out, &[&derived_head(prefix)], &[head]);
    netstring::put(&mut out, tail[0]);
    netstring::put(&mut out, tail[1]);
    netstring::put(&mut out, &outcomes.len().to_string());
    for o in outcomes {
        match o.variant {
            Some(v) => {
                netstring::put(&mut out, "=");
                netstring::put(&mut out, v);
            }
            None => netstring::put(&mut out, "-"),
        }
        netstring::put_bits(&mut out, o.core);
        netstring::put(&mut out, &o.extra.len().to_string());
        for (name, value) in &o.extra {
            netstring::put(&mut out, name);
            netstring::put_flag(&mut out, *value);
        }
        netstring::put(&mut out, &o.scopes.len().to_string());
        for scope in &o.scopes {
            netstring::put(&mut out, scope);
        }
        let extra = o
            .extra
            .iter()
            .map(|(k, v)| ((*k).to_string(), *v))
            .collect();
        let [extension, middle, tail, annotations] =
            shared.derive(&annotations_of(o.core, ExtraHints::Owned(extra)), &o.scopes);
        let [sep_head, sep_middle, sep_tail] = o.sep1862;
        netstring::put_texts(
            &mut out,
            &[&extension, head, &middle, &tail, &annotations],
            &[o.extension, sep_head, sep_middle, sep_tail, o.annotations],
        );
    }
    out
}

/// A text made at decoding, held for the process's lifetime (decoded once,
/// as a static table would be).
fn leak(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

fn decode(data: &'static str) -> Option<Box<[Resolved]>> {
    let mut r = Reader { rest: data };
    let entry = crate::listing::read(&mut r)?;
    let tool = r.field()?;
    let head = match r.mask::<1>()? {
        [true] => r.field()?,
        [false] => leak(derived_head(entry.prefix)),
    };
    let tail = [r.field()?, r.field()?];
    let shared = Shared { tool, tail };
    let n = r.count()?;
    let mut outcomes = Vec::with_capacity(n);
    for _ in 0..n {
        let variant = match r.field()? {
            "-" => None,
            "=" => Some(r.field()?),
            _ => return None,
        };
        let core = r.bits()?;
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
        let annotations = annotations_of(
            core,
            ExtraHints::Static(Box::leak(extra.into_boxed_slice())),
        );
        let written = r.mask::<5>()?;
        let [extension, middle, tail, annotation] =
            shared.derive(&annotations, &required_scopes).map(Some);
        let mut derived = [extension, None, middle, tail, annotation];
        let mut texts = [""; 5];
        for (i, text) in texts.iter_mut().enumerate() {
            *text = match (written[i], i) {
                (true, _) => r.field()?,
                (false, 1) => head,
                (false, _) => leak(derived[i].take()?),
            };
        }
        let [extension, sep_head, sep_middle, sep_tail, annotation] = texts;
        outcomes.push(Resolved {
            tool,
            variant,
            annotations,
            required_scopes: Box::leak(required_scopes.into_boxed_slice()),
            results: ResultTexts {
                extension,
                sep1862: [sep_head, sep_middle, sep_tail],
                annotations: annotation,
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

    /// The entry part of a literal whose entries are all written out.
    const ENTRY: &str = "0:,4:0000,1:0,0:,1:0,3:===,0:,0:,0:,";

    #[test]
    fn outcomes_decode_to_what_was_encoded() {
        let data = encode(ENTRY, "tool", "HEAD", &parts());
        let data: &'static str = Box::leak(data.into_boxed_str());
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
        let good = encode(ENTRY, "tool", "HEAD", &parts());
        let mut cases = vec![
            String::new(),
            "x".into(),
            "99999999999999999999999:".into(),
            format!("{ENTRY}4:tool,1:=,4:HEAD,0:,0:,99999:"),
            // Hints that are not four bits.
            format!("{ENTRY}4:tool,1:=,4:HEAD,0:,0:,1:1,1:-,4:10x1,1:0,1:0,5:^^^^^,"),
            format!("{ENTRY}4:tool,1:=,4:HEAD,0:,0:,1:1,1:-,3:101,1:0,1:0,5:^^^^^,"),
            // A mask that is not five marks, or marks a text that is not there.
            format!("{ENTRY}4:tool,1:=,4:HEAD,0:,0:,1:1,1:-,4:1001,1:0,1:0,4:^^^^,"),
            format!("{ENTRY}4:tool,1:=,4:HEAD,0:,0:,1:1,1:-,4:1001,1:0,1:0,5:^^x^^,"),
            format!("{ENTRY}4:tool,1:=,4:HEAD,0:,0:,1:1,1:-,4:1001,1:0,1:0,5:^^^^=,"),
            format!("{good}1:x,"),
        ];
        for cut in 0..good.len() {
            if good.is_char_boundary(cut) {
                cases.push(good[..cut].to_string());
            }
        }
        // The same literal with four bits decodes: the two above fail on
        // their hints alone.
        let control = format!("{ENTRY}4:tool,1:=,4:HEAD,0:,0:,1:1,1:-,4:1001,1:0,1:0,5:^^^^^,");
        let control: &'static str = Box::leak(control.into_boxed_str());
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

    /// Outcomes whose texts are what the derivation gives are held as
    /// facts only, and decode to the same texts; the texts agree with
    /// `Dialect::result` as JSON.
    #[test]
    fn derivable_texts_are_left_out_and_derived_back() {
        use crate::{Dialect, Resolution};
        let tool_json = serde_json::json!({"name": "t\"q", "inputSchema": {"type": "object"}});
        let head = r#"{"tool":{"name":"t\"q","inputSchema":{"type":"object"},"annotations":"#;
        type Facts = (
            Option<&'static str>,
            [bool; 4],
            Vec<(&'static str, bool)>,
            Vec<&'static str>,
        );
        let facts: [Facts; 3] = [
            (
                Some("read"),
                [true, false, true, false],
                vec![("agencyHint", false)],
                vec!["files:read", "x\"y"],
            ),
            (
                Some("write"),
                [false, true, false, true],
                vec![("agencyHint", true)],
                vec![],
            ),
            (
                None,
                [false, true, false, true],
                vec![("agencyHint", true), ("zHint", false)],
                vec!["a"],
            ),
        ];
        let mut texts = Vec::new();
        for (variant, core, extra, scopes) in &facts {
            let annotations = annotations_of(
                *core,
                ExtraHints::Owned(extra.iter().map(|(k, v)| ((*k).to_string(), *v)).collect()),
            );
            let resolution = Resolution {
                tool: "t\"q".into(),
                variant: variant.map(str::to_string),
                annotations: annotations.clone(),
                required_scopes: scopes.iter().map(|s| (*s).to_string()).collect(),
            };
            let every = annotations.json_text(true);
            let schemes = security_schemes_text(scopes);
            texts.push((
                Shared {
                    tool: "t\"q",
                    tail: ["", ""],
                }
                .derive(&annotations, scopes)[0]
                    .clone(),
                every.clone(),
                format!(r#","resolve":true,"securitySchemes":{schemes}}}}}"#),
                format!(r#"{{"annotations":{every}}}"#),
            ));
            for d in Dialect::ALL {
                let expected = d.result(&tool_json, &resolution);
                let t = texts.last().unwrap();
                let text = match d {
                    Dialect::Extension => t.0.clone(),
                    Dialect::Sep1862 => [head, &t.1, &t.2].concat(),
                    Dialect::Annotations => t.3.clone(),
                };
                let got: serde_json::Value = serde_json::from_str(&text).unwrap();
                assert_eq!(got, expected, "{d}");
            }
        }
        let parts: Vec<OutcomeParts<'_>> = facts
            .iter()
            .zip(&texts)
            .map(|((variant, core, extra, scopes), t)| OutcomeParts {
                variant: *variant,
                core: *core,
                extra: extra.clone(),
                scopes: scopes.clone(),
                extension: &t.0,
                sep1862: [head, &t.1, &t.2],
                annotations: &t.3,
            })
            .collect();
        // The entry whose prefix the head is.
        let entry = format!(
            "{}:{},4:0000,1:0,0:,1:0,3:===,0:,0:,0:,",
            head.len() - 8,
            &head[8..]
        );
        let data = encode(&entry, "t\"q", head, &parts);
        assert_eq!(data.matches("5:^^^^^,").count(), 3, "{data}");
        assert!(data.contains(",1:^,"), "the head is derived: {data}");
        assert!(!data.contains("resultType"), "{data}");
        let data: &'static str = Box::leak(data.into_boxed_str());
        let outcomes: &'static Outcomes = Box::leak(Box::new(Outcomes::new(data)));
        for (i, p) in parts.iter().enumerate() {
            let r = outcomes.get(i).unwrap();
            assert_eq!(r.results.extension, p.extension);
            assert_eq!(r.results.sep1862, p.sep1862);
            assert_eq!(r.results.annotations, p.annotations);
            assert_eq!(r.required_scopes, p.scopes.as_slice());
        }
    }
}
