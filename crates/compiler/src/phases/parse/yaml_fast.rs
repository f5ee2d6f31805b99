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
//! (`crates/compiler/tests/it/yaml_fast.rs`) and the `rules_yaml` fuzz target hold the two to
//! the same trees on every rules file, fixture and fuzz input.

use std::borrow::Cow;

use granit_parser::{Event, Parser, ScalarStyle, Span};
use serde_json::Number;

use super::tree::{YNode, YValue};

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
    parse_counted(text, max_nodes, max_events, 0).map(|(node, _)| node)
}

/// How many nodes and events a reading counted.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    nodes: usize,
    events: usize,
}

/// [`parse`] of a document whose root sits `depth` collections deep in
/// the document it was cut from, with the nodes and events it counted.
fn parse_counted(
    text: &str,
    max_nodes: usize,
    max_events: usize,
    depth: usize,
) -> Option<(YNode, Counts)> {
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
                if anchor != 0 || tag.is_some() || depth + stack.len() >= MAX_DEPTH {
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
    Some((root?, Counts { nodes, events }))
}

/// Files smaller than this are read in one piece: cutting would not pay.
const CUT_MIN_BYTES: usize = 128 * 1024;

/// [`parse`] on up to `threads` cores: a large document is read by
/// [`parse_cut`] when it can be, else by [`parse`].
pub fn parse_on(text: &str, max_nodes: usize, max_events: usize, threads: usize) -> Option<YNode> {
    if threads > 1
        && text.len() >= CUT_MIN_BYTES
        && let Some(node) = parse_cut(text, max_nodes, max_events, threads)
    {
        return Some(node);
    }
    parse(text, max_nodes, max_events)
}

/// Where a document is cut: the offset of its `tools` key, and the items'
/// region as the offsets of the lines each item starts on, then its end.
struct Cut {
    key: usize,
    items: Vec<usize>,
    end: usize,
}

impl Cut {
    fn find(text: &str) -> Option<Cut> {
        if text.contains('\r') || text.contains('\t') {
            return None;
        }
        let mut lines = text.split_inclusive('\n').scan(0, |offset, line| {
            let start = *offset;
            *offset += line.len();
            Some((start, line.strip_suffix('\n').unwrap_or(line)))
        });
        let key = lines.find_map(|(start, line)| {
            let rest = line.strip_prefix("tools:")?;
            let after = rest.trim_start_matches(' ');
            let gap = after.len() < rest.len();
            (after.is_empty() || (gap && after.starts_with('#'))).then_some(start)
        })?;
        let mut indent = None;
        let mut items = Vec::new();
        let mut end = text.len();
        for (start, line) in lines {
            let rest = line.trim_start_matches(' ');
            let n = line.len() - rest.len();
            if rest.is_empty() || rest.starts_with('#') {
                continue;
            }
            let item = rest == "-" || rest.starts_with("- ");
            match indent {
                // Items at the key's margin are a sequence the parser
                // places differently from one read on its own: not cut.
                None if item && n > 0 => indent = Some(n),
                None => return None,
                Some(i) if n == i && item => {}
                Some(i) if n > i => continue,
                Some(_) => {
                    end = start;
                    break;
                }
            }
            items.push(start);
        }
        (items.len() > 1).then_some(Cut { key, items, end })
    }
}

/// [`parse`] in pieces, on up to `threads` cores: a document whose root
/// mapping has a `tools:` key (at the start of a line) over a block
/// sequence is cut at the lines its items start on, the pieces are read in
/// parallel, and the rest of the document (the items blanked out, so every
/// offset stays where it was) on its own; the items are then put in the
/// sequence.
///
/// The tree is the one [`parse`] gives, or `None`: every piece must read on
/// its own as a sequence (a cut inside a quoted scalar or a flow collection
/// does not), the rest must have `tools` at that line with nothing under
/// it, and the budgets are checked with room to spare (at the edge, the
/// whole reading decides). `crates/compiler/tests/it/yaml_fast.rs` holds the two to the same
/// trees.
pub fn parse_cut(text: &str, max_nodes: usize, max_events: usize, threads: usize) -> Option<YNode> {
    let cut = Cut::find(text)?;
    let (first, end) = (*cut.items.first()?, cut.end);
    // A few pieces per thread, of about the same size, each starting on an
    // item's line.
    let want = (threads * 2).min(cut.items.len());
    let size = (end - first).div_ceil(want);
    let mut starts = vec![first];
    for &line in &cut.items {
        if line >= starts.last().copied().unwrap_or(first) + size {
            starts.push(line);
        }
    }
    let mut pieces: Vec<(usize, usize)> = starts
        .windows(2)
        .map(|w| (w[0], w[1]))
        .chain(starts.last().map(|&s| (s, end)))
        .collect();
    // The rest, with the items' bytes blanked (newlines kept): the same
    // offsets, and `tools:` with nothing under it.
    let mut rest = String::with_capacity(text.len());
    rest.push_str(text.get(..first)?);
    rest.extend(
        text.get(first..end)?
            .bytes()
            .map(|b| if b == b'\n' { '\n' } else { ' ' }),
    );
    rest.push_str(text.get(end..)?);
    pieces.push((0, 0)); // the rest, read with the pieces
    let read = crate::par::map(&pieces, threads, None, |i, &(from, to)| {
        if i + 1 == pieces.len() {
            return parse_counted(&rest, max_nodes, max_events, 0);
        }
        // With the next line's indentation, which the whole reading takes
        // into a block scalar that ends the piece before it sees the line.
        let margin = text.get(to..)?.bytes().take_while(|&b| b == b' ').count();
        let piece = text.get(from..to + margin)?;
        let (mut node, counts) = parse_counted(piece, max_nodes, max_events, 1)?;
        shift(&mut node, from);
        Some((node, counts))
    });
    let mut read: Vec<(YNode, Counts)> = read
        .into_iter()
        .map(|r| r.ok().flatten())
        .collect::<Option<_>>()?;
    let (mut root, rest_counts) = read.pop()?;
    // Each piece: stream, document and sequence starts and ends around its
    // items; the rest: the empty value of `tools`.
    let mut counts = Counts {
        nodes: rest_counts.nodes,
        events: rest_counts.events + 1,
    };
    let mut items = Vec::new();
    let mut span = None;
    for (node, c) in read {
        let YValue::Seq(mut these) = node.value else {
            return None;
        };
        span.get_or_insert((node.start, node.end));
        items.append(&mut these);
        counts.nodes += c.nodes - 1;
        counts.events += c.events.checked_sub(6)?;
    }
    // Room to spare: at the edge, the whole reading decides.
    const SPARE: usize = 1024;
    if counts.nodes + SPARE > max_nodes || counts.events + SPARE > max_events {
        return None;
    }
    let (start, end) = span?;
    let YValue::Map(entries) = &mut root.value else {
        return None;
    };
    let (_, value) = entries
        .iter_mut()
        .find(|(k, _)| k.start == cut.key && k.value == YValue::String("tools".into()))?;
    if value.value != YValue::Null {
        return None;
    }
    *value = YNode {
        value: YValue::Seq(items),
        start,
        end,
    };
    Some(root)
}

/// Moves every span of `node` `by` bytes on.
fn shift(node: &mut YNode, by: usize) {
    node.start += by;
    node.end += by;
    match &mut node.value {
        YValue::Seq(items) => items.iter_mut().for_each(|n| shift(n, by)),
        YValue::Map(entries) => entries.iter_mut().for_each(|(k, v)| {
            shift(k, by);
            shift(v, by);
        }),
        _ => {}
    }
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
