//! The common case of [`super::yaml::parse_within`], straight from the YAML
//! parser's events: no serde layer between the events and the tree.
//!
//! It decides only documents it is sure to read as serde-saphyr does (the
//! reference, [`super::yaml`]) and gives up on anything else, which is then
//! read by the reference: an anchor, alias or tag; a plain scalar other
//! than a letter-led string, `null`/`~`/empty, `true`/`false` or a decimal
//! integer; a key that is not a scalar, or two keys of one mapping that
//! read alike; nesting past [`MAX_DEPTH`] (half the reference's budget);
//! more nodes or events than its budgets; a `%YAML` directive or more than
//! one document; any syntax error (the reference words the message). Spans are the node's first event's,
//! as the reference gives them. The differential test
//! (`tests/yaml_fast.rs`) and the `rules_yaml` fuzz target hold the two to
//! the same trees on every rules file, fixture and fuzz input.

use std::borrow::Cow;

use granit_parser::{Event, Parser, ScalarStyle, Span};
use serde_json::Number;

use super::yaml::{YNode, YValue};

/// Nesting past this goes to the reference, well inside its own depth
/// budget (serde-saphyr's default `max_depth`, 64).
pub const MAX_DEPTH: usize = 32;

/// A collection being read: its node, where its items (or entries) start
/// on the shared stack, and a mapping's key waiting for its value.
enum Open {
    Seq(YNode, usize),
    Map(YNode, usize, Option<YNode>),
}

/// The document's tree, or `None` where the reference must decide.
pub fn parse(text: &str, max_nodes: usize, max_events: usize) -> Option<YNode> {
    let mut stack: Vec<Open> = Vec::new();
    // The items and entries of every open collection, innermost last: each
    // collection takes its own when it ends, into a vector of exactly their
    // number (no growing, no spare capacity in the tree).
    let mut items: Vec<YNode> = Vec::new();
    let mut entries: Vec<(YNode, YNode)> = Vec::new();
    let mut root: Option<YNode> = None;
    let (mut nodes, mut events, mut documents) = (0usize, 0usize, 0usize);
    for item in Parser::new_from_str(text) {
        let (event, span) = item.ok()?;
        events += 1;
        if events > max_events {
            return None;
        }
        let done = match event {
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => continue,
            Event::DocumentStart(_, version) => {
                documents += 1;
                if documents > 1 || version.is_some() {
                    return None;
                }
                continue;
            }
            Event::Scalar(value, style, anchor, tag) => {
                if anchor != 0 || tag.is_some() {
                    return None;
                }
                nodes += 1;
                node(scalar(value, style)?, &span)?
            }
            Event::SequenceStart(_, anchor, ref tag) | Event::MappingStart(_, anchor, ref tag) => {
                if anchor != 0 || tag.is_some() || stack.len() >= MAX_DEPTH {
                    return None;
                }
                nodes += 1;
                let start = node(YValue::Null, &span)?;
                stack.push(if matches!(event, Event::SequenceStart(..)) {
                    Open::Seq(start, items.len())
                } else {
                    Open::Map(start, entries.len(), None)
                });
                continue;
            }
            Event::SequenceEnd => match stack.pop()? {
                Open::Seq(mut seq, from) => {
                    seq.value = YValue::Seq(items.drain(from..).collect());
                    seq
                }
                Open::Map(..) => return None,
            },
            Event::MappingEnd => match stack.pop()? {
                Open::Map(mut map, from, None) => {
                    if repeats_a_key(&entries[from..]) {
                        return None;
                    }
                    map.value = YValue::Map(entries.drain(from..).collect());
                    map
                }
                _ => return None,
            },
            _ => return None,
        };
        if nodes > max_nodes {
            return None;
        }
        match stack.last_mut() {
            None if root.is_none() => root = Some(done),
            None => return None,
            Some(Open::Seq(..)) => items.push(done),
            Some(Open::Map(_, _, key)) => match key.take() {
                Some(k) => entries.push((k, done)),
                None if is_scalar(&done.value) => *key = Some(done),
                None => return None,
            },
        }
    }
    if !stack.is_empty() {
        return None;
    }
    root
}

fn node(value: YValue, span: &Span) -> Option<YNode> {
    let start = span.start.byte_offset()?;
    let end = span.end.byte_offset()?;
    (start <= end).then_some(YNode { value, start, end })
}

fn is_scalar(value: &YValue) -> bool {
    !matches!(value, YValue::Seq(_) | YValue::Map(_))
}

/// An untagged scalar's value, where the reference's reading is certain.
fn scalar(value: Cow<'_, str>, style: ScalarStyle) -> Option<YValue> {
    if !matches!(style, ScalarStyle::Plain) {
        return Some(YValue::String(value.into_owned()));
    }
    let text = value.as_ref();
    match text {
        "" | "~" | "null" => return Some(YValue::Null),
        "true" => return Some(YValue::Bool(true)),
        "false" => return Some(YValue::Bool(false)),
        _ => {}
    }
    if let Some(n) = decimal_integer(text) {
        return Some(YValue::Number(n));
    }
    let first = text.as_bytes()[0];
    let letter_led = first.is_ascii_alphabetic() || first == b'_' || first == b'/';
    // Words some YAML reading takes for a boolean, a null or a float.
    const WORDS: &[&str] = &[
        "true", "false", "null", "yes", "no", "on", "off", "y", "n", "inf", "infinity", "nan",
    ];
    let word = WORDS.iter().any(|w| text.eq_ignore_ascii_case(w));
    if letter_led && !word && !text.contains('$') && text.trim() == text {
        return Some(YValue::String(value.into_owned()));
    }
    // `1.0.0`: no number has two points.
    let dotted = text.split('.').count() > 2
        && text
            .split('.')
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
    dotted.then(|| YValue::String(value.into_owned()))
}

/// `0`, or a decimal integer without a sign, a leading zero or a separator,
/// that fits the reference's 64 bits; `-` before one that is not zero.
fn decimal_integer(text: &str) -> Option<Number> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let plain = !digits.is_empty()
        && digits.len() <= 18
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    if !plain || (negative && digits == "0") {
        return None;
    }
    let n: i64 = digits.parse().ok()?;
    Some(if negative {
        Number::from(-n)
    } else {
        Number::from(n as u64)
    })
}

/// Whether two keys of a mapping read alike (the reference decides whether
/// that is an error).
fn repeats_a_key(entries: &[(YNode, YNode)]) -> bool {
    // A few keys (as most mappings have) compare pairwise, without building
    // their texts.
    const FEW: usize = 8;
    if entries.len() <= FEW {
        fn text(node: &YNode) -> Option<&str> {
            match &node.value {
                YValue::String(s) => Some(s),
                _ => None,
            }
        }
        let alike = |a: &YNode, b: &YNode| match (text(a), text(b)) {
            (Some(a), Some(b)) => a == b,
            _ => a.key_string() == b.key_string(),
        };
        return entries
            .iter()
            .enumerate()
            .any(|(i, (a, _))| entries[i + 1..].iter().any(|(b, _)| alike(a, b)));
    }
    let mut keys: Vec<String> = entries.iter().map(|(k, _)| k.key_string()).collect();
    keys.sort_unstable();
    keys.windows(2).any(|pair| pair[0] == pair[1])
}
