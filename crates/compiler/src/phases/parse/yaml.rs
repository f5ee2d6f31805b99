//! YAML to a span-carrying tree, through `serde-saphyr` (panic-free, with
//! resource budgets against alias bombs), before the format is decoded.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Number;

pub use super::tree::{YNode, YValue};

/// The largest rules or schema file the compiler reads, in bytes.
pub const MAX_FILE_BYTES: usize = 8 * 1024 * 1024;

/// A YAML document that failed to parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct YamlError {
    /// The parser's message, first line only.
    pub message: String,
    /// Byte offset of the error, when known.
    pub offset: Option<usize>,
    /// 1-based line and column, when known but no byte offset is.
    pub line_col: Option<(usize, usize)>,
    /// The document was over the size limit (`(size, limit)` in bytes), and
    /// not read: the loader words this with the setting that raises it.
    pub too_large: Option<(usize, usize)>,
}

/// Parses one YAML document into a [`YNode`], within [`MAX_FILE_BYTES`].
pub fn parse(text: &str) -> Result<YNode, YamlError> {
    parse_within(text, MAX_FILE_BYTES)
}

/// Parses one YAML document of at most `max_bytes` into a [`YNode`]; the
/// parser's node and event budgets grow with the limit.
pub fn parse_within(text: &str, max_bytes: usize) -> Result<YNode, YamlError> {
    parse_within_on(text, max_bytes, 1)
}

/// [`parse_within`] on up to `threads` cores (a large rules file's tools
/// are read in parallel: [`super::yaml_fast::parse_on`]); the tree does not
/// depend on `threads`.
pub fn parse_within_on(text: &str, max_bytes: usize, threads: usize) -> Result<YNode, YamlError> {
    if text.len() > max_bytes {
        return Err(YamlError {
            message: format!(
                "file is {} bytes, over the limit of {max_bytes} bytes",
                text.len()
            ),
            offset: None,
            line_col: None,
            too_large: Some((text.len(), max_bytes)),
        });
    }
    if text.trim().is_empty() {
        return Ok(YNode {
            value: YValue::Null,
            start: 0,
            end: 0,
        });
    }
    let (max_nodes, max_events) = budgets(max_bytes);
    if let Some(node) = super::yaml_fast::parse_on(text, max_nodes, max_events, threads) {
        return Ok(node);
    }
    parse_reference(text, max_bytes)
}

/// Node and event budgets sized for the file limit (a 1,000-tool file has
/// ~300,000 nodes).
fn budgets(max_bytes: usize) -> (usize, usize) {
    ((max_bytes / 2).max(4_000_000), max_bytes.max(8_000_000))
}

/// [`parse_within`] by serde-saphyr alone (the reference the fast path of
/// [`super::yaml_fast`] stands in for), without the size check.
pub fn parse_reference(text: &str, max_bytes: usize) -> Result<YNode, YamlError> {
    // Alias replay is capped far lower than the budgets, since rules files
    // have no use for large expansions and alias bombs live there.
    let (max_nodes, max_events) = budgets(max_bytes);
    let mut budget = serde_saphyr::Budget::default();
    budget.max_nodes = max_nodes;
    budget.max_events = max_events;
    let mut aliases = serde_saphyr::options::AliasLimits::default();
    aliases.max_total_replayed_events = 100_000;
    // YAML 1.2 booleans only (`true`, `false`): under YAML 1.1's `y`, `n`,
    // `on` and `off`, a property called `n` would become `"false"`.
    let options = serde_saphyr::options! {
        strict_booleans: true,
        with_snippet: false,
        budget: Some(budget),
        alias_limits: aliases,
    };
    serde_saphyr::from_str_with_options::<YNode>(text, options).map_err(|e| {
        let location = e.location();
        let offset = location
            .and_then(|l| l.span().byte_offset())
            .and_then(|o| usize::try_from(o).ok());
        let line_col = location.map(|l| (l.line() as usize, l.column() as usize));
        let message = e.to_string();
        let message = message.lines().next().unwrap_or("invalid YAML").to_string();
        let message = if message.starts_with("budget breached") {
            format!(
                "document exceeds the YAML resource budget ({}); alias bombs and oversized documents are refused",
                breach_kind(&message)
            )
        } else if let Some(rest) = message.strip_prefix("duplicate mapping key: ") {
            let key = rest.split(", set DuplicateKeyPolicy").next().unwrap_or(rest);
            format!("duplicate key `{}`", strip_location_suffix(key))
        } else if message.starts_with("alias replay limit exceeded") {
            "YAML aliases expand past the limit of 100000 replayed events; alias bombs are refused"
                .to_string()
        } else {
            strip_location_suffix(&message)
        };
        YamlError {
            message,
            offset,
            line_col,
            too_large: None,
        }
    })
}

/// `budget breached: Nodes { nodes: 250001 } at …` → `nodes: 250001`.
fn breach_kind(message: &str) -> String {
    match (message.find('{'), message.find('}')) {
        (Some(a), Some(b)) if a < b => message[a + 1..b].trim().to_string(),
        _ => "limit reached".to_string(),
    }
}

/// serde-saphyr appends `at line L column C`; diagnostics carry their own position.
fn strip_location_suffix(message: &str) -> String {
    match message.find(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

impl<'de> Deserialize<'de> for YNode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spanned = serde_saphyr::Spanned::<YValue>::deserialize(deserializer)?;
        let span = spanned.referenced.span();
        let start = span
            .byte_offset()
            .and_then(|o| usize::try_from(o).ok())
            .unwrap_or(0);
        let len = span
            .byte_len()
            .and_then(|o| usize::try_from(o).ok())
            .unwrap_or(0);
        Ok(YNode {
            value: spanned.value,
            start,
            end: start + len,
        })
    }
}

impl<'de> Deserialize<'de> for YValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(YValueVisitor)
    }
}

struct YValueVisitor;

impl<'de> Visitor<'de> for YValueVisitor {
    type Value = YValue;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<YValue, E> {
        Ok(YValue::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<YValue, E> {
        Ok(YValue::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<YValue, E> {
        Ok(YValue::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<YValue, E> {
        Number::from_f64(v)
            .map(YValue::Number)
            .ok_or_else(|| E::custom("non-finite numbers are not allowed"))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<YValue, E> {
        Ok(YValue::String(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<YValue, E> {
        Ok(YValue::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<YValue, E> {
        Ok(YValue::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<YValue, E> {
        Ok(YValue::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<YValue, D::Error> {
        YValue::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<YValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<YNode>()? {
            items.push(item);
        }
        Ok(YValue::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<YValue, A::Error> {
        let mut entries = Vec::new();
        while let Some((k, v)) = map.next_entry::<YNode, YNode>()? {
            entries.push((k, v));
        }
        Ok(YValue::Map(entries))
    }
}
