//! Go to definition: from an `inputSchemaFile` to the schema file, and from
//! a `$ref` (`#/$defs/locking`, `schemas/common.json#/$defs/path`) to the
//! definition it names, in this document or another file.

use std::path::Path;

use crate::convert::file_uri;

use lsp_types::{Location, Position, Range, Uri};

/// Where the name under byte `at` of `text` (the document at `uri`, read
/// from `path`) is defined.
pub(crate) fn definition(uri: &Uri, path: &str, text: &str, at: usize) -> Option<Location> {
    let at = at.min(text.len());
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let line = &text[start..end];
    let directory = Path::new(path).parent().unwrap_or(Path::new("."));
    if let Some(value) = value_after(line, "inputSchemaFile") {
        let file = directory.join(value);
        return Some(Location::new(file_uri(&file)?, Range::default()));
    }
    let reference = value_after(line, "$ref")?;
    let (file, pointer) = reference.split_once('#').unwrap_or((reference, ""));
    let (target_uri, target_text) = if file.is_empty() {
        (uri.clone(), text.to_string())
    } else {
        let file = directory.join(file);
        (file_uri(&file)?, std::fs::read_to_string(&file).ok()?)
    };
    let offset = pointer_offset(&target_text, pointer);
    let position = position_of(&target_text, offset);
    Some(Location::new(target_uri, Range::new(position, position)))
}

/// The value written after `key` on `line` (`key: value`, `"key": "value"`,
/// `key "value"`), without quotes.
fn value_after<'l>(line: &'l str, key: &str) -> Option<&'l str> {
    let rest = &line[line.find(key)? + key.len()..];
    let rest = rest.trim_start_matches(['"', '\'']).trim_start();
    let rest = rest.strip_prefix(':').unwrap_or(rest).trim_start();
    let value = rest
        .trim_start_matches(['"', '\''])
        .split(['"', '\'', ',', '}', ' '])
        .next()?
        .trim();
    (!value.is_empty()).then_some(value)
}

/// Where a JSON pointer's last member is written in `text` (YAML or JSON),
/// found member by member in order; the start when it is not found.
fn pointer_offset(text: &str, pointer: &str) -> usize {
    let mut at = 0;
    for segment in pointer.split('/').filter(|s| !s.is_empty()) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        let found = [
            format!("\"{segment}\""),
            format!("'{segment}'"),
            format!("{segment}:"),
        ]
        .iter()
        .filter_map(|needle| {
            text[at..]
                .match_indices(needle.as_str())
                .find(|(i, _)| {
                    // A whole key: not the tail of a longer name.
                    let before = text[..at + i].chars().next_back();
                    before.is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '$'))
                })
                .map(|(i, _)| at + i)
        })
        .min();
        match found {
            Some(offset) => at = offset,
            None => return at,
        }
    }
    at
}

fn position_of(text: &str, offset: usize) -> Position {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count();
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    Position::new(line as u32, before[start..].encode_utf16().count() as u32)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn schema_files_and_references_are_found() {
        let uri: Uri = "file:///r/x.yaml".parse().unwrap();
        let text = "tools:\n  - name: a\n    inputSchemaFile: schemas/a.json\n    inputSchema:\n      $defs:\n        locking: { type: string }\n      oneOf:\n        - $ref: '#/$defs/locking'\n";
        let at = text.find("schemas/a.json").unwrap() + 3;
        let found = definition(&uri, "/r/x.yaml", text, at).unwrap();
        assert_eq!(found.uri.as_str(), "file:///r/schemas/a.json");
        let at = text.find("$ref").unwrap() + 10;
        let found = definition(&uri, "/r/x.yaml", text, at).unwrap();
        assert_eq!(found.uri, uri);
        assert_eq!(found.range.start, Position::new(5, 8));
        assert!(definition(&uri, "/r/x.yaml", text, 0).is_none());
    }

    #[test]
    fn values_are_read_in_either_syntax() {
        assert_eq!(
            value_after("  inputSchemaFile \"s.json\"", "inputSchemaFile"),
            Some("s.json")
        );
        assert_eq!(
            value_after("{ \"$ref\": \"#/a/b\" }", "$ref"),
            Some("#/a/b")
        );
        assert_eq!(value_after("inputSchemaFile:", "inputSchemaFile"), None);
    }
}
