//! Each tool's `tools/list` entry as generated code holds it, and the
//! `tools/list` results built from those entries on first use.
//!
//! A tool's three entries (one per dialect) share everything up to their
//! annotations, and differ after them only in the dialect's resolvable
//! marker. The literal (netstrings, see [`crate::outcomes`] for the rest of
//! it) holds that shared prefix once, the static hints as facts, what stands
//! between the annotations and the marker, whether the tool is resolvable,
//! and a mask of which entries are written out because the derivation
//! (prefix, the dialect's annotations, the rest, the marker) would not give
//! them byte for byte. [`encode`] decides, so the entries are the same
//! either way. The prefix also serves the tool's SEP-1862 results and, by
//! offset, its `inputSchema`.

use std::borrow::Cow;
use std::sync::OnceLock;

use crate::netstring::{self, Reader};
use crate::{Annotations, Dialect, ExtraHints};

/// A tool's `tools/list` entries as the generator knows them.
#[derive(Clone, Debug)]
pub struct EntryParts<'a> {
    /// The entry's text in each dialect, in the order of [`Dialect::ALL`].
    pub entries: [&'a str; 3],
    /// The tool's static (conservative) annotations.
    pub annotations: &'a Annotations,
    /// Whether the tool is resolvable (its entries carry the marker).
    pub resolvable: bool,
}

fn index(dialect: Dialect) -> usize {
    match dialect {
        Dialect::Extension => 0,
        Dialect::Sep1862 => 1,
        Dialect::Annotations => 2,
    }
}

/// The text `Dialect::mark_resolvable` adds at the end of an entry.
fn marker(dialect: Dialect) -> String {
    match dialect {
        Dialect::Extension => {
            let mut out = String::from(r#","_meta":{"#);
            crate::json::push_str_literal(&mut out, crate::EXTENSION_ID);
            out.push_str(r#":{"resolvable":true}}"#);
            out
        }
        Dialect::Sep1862 => r#","resolve":true"#.into(),
        Dialect::Annotations => r#","dynamicAnnotations":true"#.into(),
    }
}

/// The shared pieces of a tool's entries.
pub(crate) struct Entry<'a> {
    /// Everything up to the annotations' object, `"annotations":` included.
    pub(crate) prefix: &'a str,
    annotations: Annotations,
    between: &'a str,
    resolvable: bool,
    written: [Option<&'a str>; 3],
}

impl Entry<'_> {
    fn derive(&self, dialect: Dialect) -> String {
        let marker = if self.resolvable {
            marker(dialect)
        } else {
            String::new()
        };
        let hints = self.annotations.json_text(dialect != Dialect::Extension);
        [self.prefix, &hints, self.between, &marker, "}"].concat()
    }

    /// The entry in `dialect`.
    fn text(&self, dialect: Dialect) -> Cow<'_, str> {
        match self.written[index(dialect)] {
            Some(text) => Cow::Borrowed(text),
            None => Cow::Owned(self.derive(dialect)),
        }
    }
}

/// The entry part of a tool's literal (what generated code holds for a tool
/// that is not resolvable; a resolvable tool's outcomes follow it).
pub fn encode(parts: &EntryParts<'_>) -> String {
    let every = parts.annotations.json_text(true);
    let sep1862 = parts.entries[index(Dialect::Sep1862)];
    let needle = format!(r#""annotations":{every}"#);
    // The prefix and the rest as the SEP-1862 entry shows them; when it is
    // not shaped so, every entry is written out.
    let (prefix, between) = match sep1862.find(&needle) {
        Some(at) => {
            let rest = &sep1862[at + needle.len()..];
            let end = if parts.resolvable {
                marker(Dialect::Sep1862) + "}"
            } else {
                "}".into()
            };
            (
                &sep1862[..at + r#""annotations":"#.len()],
                rest.strip_suffix(end.as_str()).unwrap_or(""),
            )
        }
        None => ("", ""),
    };
    let entry = Entry {
        prefix,
        annotations: parts.annotations.clone(),
        between,
        resolvable: parts.resolvable,
        written: [None; 3],
    };
    let derived = Dialect::ALL.map(|d| entry.derive(d));
    let a = parts.annotations;
    let mut out = String::new();
    netstring::put(&mut out, prefix);
    netstring::put_bits(
        &mut out,
        [a.read_only, a.destructive, a.idempotent, a.open_world],
    );
    let extra: Vec<(&str, bool)> = a.extra.iter().collect();
    netstring::put(&mut out, &extra.len().to_string());
    for (name, value) in extra {
        netstring::put(&mut out, name);
        netstring::put_flag(&mut out, value);
    }
    netstring::put(&mut out, between);
    netstring::put_flag(&mut out, parts.resolvable);
    netstring::put_texts(
        &mut out,
        &derived.each_ref().map(String::as_str),
        &parts.entries,
    );
    out
}

/// Reads the entry part of a tool's literal.
pub(crate) fn read<'a>(r: &mut Reader<'a>) -> Option<Entry<'a>> {
    let prefix = r.field()?;
    let [read_only, destructive, idempotent, open_world] = r.bits()?;
    let extras = r.count()?;
    let mut extra = Vec::with_capacity(extras);
    for _ in 0..extras {
        extra.push((r.field()?.to_string(), r.flag()?));
    }
    let between = r.field()?;
    let resolvable = r.flag()?;
    let mut written = [None; 3];
    for (slot, write) in written.iter_mut().zip(r.mask::<3>()?) {
        if write {
            *slot = Some(r.field()?);
        }
    }
    Some(Entry {
        prefix,
        annotations: Annotations {
            read_only,
            destructive,
            idempotent,
            open_world,
            extra: ExtraHints::Owned(extra),
        },
        between,
        resolvable,
        written,
    })
}

/// The `tools/list` results of a generated resolver, one per dialect, built
/// from its tools' literals the first time each is asked for.
#[derive(Debug)]
pub struct ToolsList {
    tools: &'static [&'static str],
    texts: [OnceLock<String>; 3],
}

impl ToolsList {
    /// The list of `tools`, each a literal [`encode`] wrote (possibly
    /// followed by the tool's outcomes), in listing order.
    pub const fn new(tools: &'static [&'static str]) -> Self {
        ToolsList {
            tools,
            texts: [OnceLock::new(), OnceLock::new(), OnceLock::new()],
        }
    }

    /// The `tools/list` result for `dialect`, as JSON text. A literal that
    /// is not what [`encode`] writes (never one of generated code) makes it
    /// list no tools rather than a broken one.
    pub fn get(&'static self, dialect: Dialect) -> &'static str {
        self.texts[index(dialect)].get_or_init(|| {
            self.build(dialect)
                .unwrap_or_else(|| r#"{"tools":[]}"#.to_string())
        })
    }

    fn build(&self, dialect: Dialect) -> Option<String> {
        let mut out = String::from(r#"{"tools":["#);
        for (i, data) in self.tools.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let entry = read(&mut Reader { rest: data })?;
            out.push_str(&entry.text(dialect));
        }
        out.push_str("]}");
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn annotations() -> Annotations {
        Annotations {
            read_only: false,
            destructive: true,
            idempotent: false,
            open_world: true,
            extra: ExtraHints::Owned(vec![("agencyHint".into(), false)]),
        }
    }

    /// A tool's entries as the generator writes them: `head`, the
    /// dialect's annotations, `rest`, the marker.
    fn entries(head: &str, rest: &str, a: &Annotations, resolvable: bool) -> [String; 3] {
        Dialect::ALL.map(|d| {
            let hints = a.json_text(d != Dialect::Extension);
            let marker = if resolvable { marker(d) } else { String::new() };
            format!("{head}{hints}{rest}{marker}}}")
        })
    }

    /// Entries the derivation gives are held once, as a prefix and facts;
    /// others are written out; either way the list has them byte for byte.
    #[test]
    fn entries_round_trip_derived_or_written() {
        let a = annotations();
        let plain = (
            r#"{"name":"p","inputSchema":{"type":"object"},"annotations":"#,
            "",
        );
        let odd = (
            r#"{"name":"o\"","annotations":"#,
            r#","zz":{"annotations":1}"#,
        );
        let mut all = Vec::new();
        for ((head, rest), resolvable) in [(plain, true), (plain, false), (odd, true)] {
            let texts = entries(head, rest, &a, resolvable);
            let parts = EntryParts {
                entries: texts.each_ref().map(String::as_str),
                annotations: &a,
                resolvable,
            };
            let data = encode(&parts);
            all.push((data, texts));
        }
        // The plain tool's entries are derived; so are the odd one's (its
        // `zz` stands between the annotations and the marker).
        for (data, _) in &all {
            assert!(data.contains("3:^^^,"), "{data}");
        }
        // A written-out entry: the SEP-1862 text does not hold the
        // annotations the facts say.
        let texts = entries(plain.0, plain.1, &a, true);
        let mut other = a.clone();
        other.read_only = true;
        let data = encode(&EntryParts {
            entries: texts.each_ref().map(String::as_str),
            annotations: &other,
            resolvable: true,
        });
        assert!(data.contains("3:===,"), "{data}");
        all.push((data, texts));

        let literals: Vec<&'static str> = all
            .iter()
            .map(|(d, _)| &*Box::leak(d.clone().into_boxed_str()))
            .collect();
        let list: &'static ToolsList = Box::leak(Box::new(ToolsList::new(Box::leak(
            literals.into_boxed_slice(),
        ))));
        for d in Dialect::ALL {
            let expected: Vec<&str> = all.iter().map(|(_, t)| t[index(d)].as_str()).collect();
            assert_eq!(
                list.get(d),
                format!(r#"{{"tools":[{}]}}"#, expected.join(","))
            );
        }
    }

    #[test]
    fn a_corrupt_literal_lists_nothing() {
        let list: &'static ToolsList = Box::leak(Box::new(ToolsList::new(&["3:abc,1:0,"])));
        assert_eq!(list.get(Dialect::Sep1862), r#"{"tools":[]}"#);
        let empty: &'static ToolsList = Box::leak(Box::new(ToolsList::new(&[])));
        assert_eq!(empty.get(Dialect::Extension), r#"{"tools":[]}"#);
    }
}
