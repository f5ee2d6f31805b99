//! Canonical printing of rules files in either syntax: `fmt` and `convert`.
//!
//! Printing goes from the AST, so a file keeps its choices (structured or
//! expression `when`, `inputSchemaFile`); comments are carried over, each
//! before the item that followed it (or at the end of the line it ended).
//! [`format_file`] re-reads what it printed and refuses to return it unless
//! it compiles to the same IR as the input.

mod rules;
mod unlower;
mod yaml;

use std::path::Path;

use serde_json::Value;

use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::parse::yaml::{YNode, YValue};
use crate::project::{self, LoadOptions, Until};

/// The two syntaxes of a rules file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// YAML (`.yaml`, `.yml`).
    Yaml,
    /// The standalone DSL (`.rules`).
    Rules,
}

impl Syntax {
    /// The syntax of a path, by extension.
    pub fn of(path: &Path) -> Syntax {
        if project::is_dsl(path) {
            Syntax::Rules
        } else {
            Syntax::Yaml
        }
    }
}

/// Why a file could not be formatted.
#[derive(Debug)]
pub enum FormatError {
    /// The file has front-end errors (it is never rewritten then); rendered.
    Invalid(String),
    /// The printed text would not mean the same: a bug, reported as such.
    Internal(String),
}

/// Codes that mean the front end did not read everything the file says.
const FRONT_END: &[Code] = &[
    Code::Syntax,
    Code::UnknownField,
    Code::MissingField,
    Code::InvalidValue,
    Code::Io,
];

/// Formats `text` (read from `path`) canonically in syntax `to`.
pub fn format_file(path: &Path, text: &str, to: Syntax) -> Result<String, FormatError> {
    format_file_with(path, text, to, &LoadOptions::default())
}

/// [`format_file`] within `options`' limits (the file-size limit matters:
/// the input and the output are compiled to compare them).
pub fn format_file_with(
    path: &Path,
    text: &str,
    to: Syntax,
    options: &LoadOptions,
) -> Result<String, FormatError> {
    let from = Syntax::of(path);
    let name = path.to_string_lossy();
    // Formatting writes the decoded file back.
    let options = &LoadOptions {
        keep_files: true,
        ..*options
    };
    // Checked, not analysed: the comparison below is of the rules as
    // written, and equal rules analyse alike.
    let before = project::load_str_to(&name, text, Until::Checked, options);
    // The file's errors (those `keep` selects), rendered, when it has any.
    let invalid = |keep: &dyn Fn(&Diagnostic) -> bool| {
        let errors: Vec<Diagnostic> = before
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error && keep(d))
            .cloned()
            .collect();
        (!errors.is_empty()).then(|| {
            FormatError::Invalid(crate::diagnostic::render_human(
                &before.sources,
                &errors,
                false,
            ))
        })
    };
    if let Some(invalid) = invalid(&|d| FRONT_END.contains(&d.code)) {
        return Err(invalid);
    }
    let Some(rules) = before.files.first() else {
        return Err(FormatError::Internal("the file declares nothing".into()));
    };
    let comments = match from {
        Syntax::Yaml => yaml_comments(text, options.max_file_bytes),
        Syntax::Rules => rules_comments(text),
    };
    let comments = match (from, to) {
        (Syntax::Yaml, Syntax::Rules) => without_yaml_modeline(text, comments),
        _ => comments,
    };
    let out = match to {
        // YAML allows no control character but tab, even in a comment: a
        // `.rules` comment with one keeps its place, the character shown
        // as U+FFFD.
        Syntax::Yaml => yaml::print(rules, text, yaml_safe(comments)),
        Syntax::Rules => rules::print(rules, text, comments),
    };
    // The output must compile to the same IR (spans aside) as the input.
    let out_name = match (from, to) {
        (a, b) if a == b => name.to_string(),
        (_, Syntax::Rules) => path.with_extension("rules").to_string_lossy().into_owned(),
        (_, Syntax::Yaml) => path.with_extension("yaml").to_string_lossy().into_owned(),
    };
    let after = project::load_str_to(&out_name, &out, Until::Checked, options);
    if !same_rules(&before, &after) {
        // A file with errors may hold what the other syntax cannot say
        // (`inputSchema: null`): its errors are the answer, not ours.
        if let Some(invalid) = invalid(&|_| true) {
            return Err(invalid);
        }
        let detail = after
            .diagnostics
            .iter()
            .find(|d| d.severity == Severity::Error)
            .map(|d| format!(": {}: {}", d.code, d.message))
            .unwrap_or_default();
        return Err(FormatError::Internal(format!(
            "the formatted text does not compile to the same rules{detail}; the file was not changed"
        )));
    }
    Ok(out)
}

/// Whether the printed file (`after`) says what the input (`before`) says:
/// the same servers (spans aside), from as many files, with the same errors.
/// The errors matter on their own: a file can lower to the same servers and
/// still be one `check` refuses (`tools:` null where the input had
/// `tools: []`), and `fmt --write` must never write a file it would not
/// accept back.
fn same_rules(before: &project::Project, after: &project::Project) -> bool {
    let errors = |p: &project::Project| {
        let mut codes: Vec<Code> = p
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| d.code)
            .collect();
        codes.sort_unstable();
        codes
    };
    after.servers == before.servers
        && after.files.len() == before.files.len()
        && errors(after) == errors(before)
}

/// The comments of a YAML file without its `# yaml-language-server: …`
/// modeline (the YAML language server's, meaningless in a `.rules` file),
/// nor an empty comment line right after it that only set it apart.
fn without_yaml_modeline(text: &str, comments: Vec<Comment>) -> Vec<Comment> {
    let mut out: Vec<Comment> = Vec::with_capacity(comments.len());
    let mut after_modeline: Option<usize> = None;
    for comment in comments {
        if comment.own_line
            && comment
                .text
                .trim_start()
                .starts_with("yaml-language-server:")
        {
            after_modeline = text[comment.offset..]
                .find('\n')
                .map(|e| comment.offset + e + 1);
            continue;
        }
        let next_line = after_modeline.take();
        let set_apart = comment.own_line
            && comment.text.trim().is_empty()
            && next_line.is_some_and(|start| text[start..comment.offset].trim().is_empty());
        if !set_apart {
            out.push(comment);
        }
    }
    out
}

/// Comments whose text YAML can hold: what YAML does not count printable
/// (control characters but tab, U+FFFE, U+FFFF) becomes U+FFFD.
fn yaml_safe(mut comments: Vec<Comment>) -> Vec<Comment> {
    let unprintable =
        |c: char| (c.is_control() && c != '\t') || matches!(c, '\u{fffe}' | '\u{ffff}');
    for comment in &mut comments {
        if comment.text.chars().any(unprintable) {
            comment.text = comment
                .text
                .chars()
                .map(|c| if unprintable(c) { '\u{fffd}' } else { c })
                .collect();
        }
    }
    comments
}

/// A comment in the input, to be carried to the output.
#[derive(Clone, Debug)]
pub struct Comment {
    /// Byte offset of its marker.
    pub offset: usize,
    /// The text after the marker, trimmed at the end.
    pub text: String,
    /// Whether it is alone on its line (else it trails code).
    pub own_line: bool,
}

fn comment_at(text: &str, start: usize, marker: usize) -> Comment {
    let end = text[start..].find('\n').map_or(text.len(), |e| start + e);
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    Comment {
        offset: start,
        text: text[start + marker..end].trim_end().to_string(),
        own_line: text[line_start..start].trim().is_empty(),
    }
}

/// `#` comments of a YAML file: a `#` at a line start or after blank space,
/// outside every scalar the parser saw.
fn yaml_comments(text: &str, max_bytes: usize) -> Vec<Comment> {
    let mut scalars = Vec::new();
    if let Ok(root) = crate::parse::yaml::parse_within(text, max_bytes) {
        collect_scalars(&root, &mut scalars);
    }
    scalars.sort_unstable();
    let inside = |p: usize| {
        let i = scalars.partition_point(|&(s, _)| s <= p);
        i > 0 && scalars[i - 1].1 > p
    };
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'#'
            && (i == 0 || matches!(bytes[i - 1], b' ' | b'\t' | b'\n'))
            && !inside(i)
        {
            let c = comment_at(text, i, 1);
            i = text[i..].find('\n').map_or(text.len(), |e| i + e);
            out.push(c);
            continue;
        }
        i += 1;
    }
    out
}

fn collect_scalars(node: &YNode, out: &mut Vec<(usize, usize)>) {
    match &node.value {
        YValue::Seq(items) => items.iter().for_each(|n| collect_scalars(n, out)),
        YValue::Map(entries) => {
            for (k, v) in entries {
                collect_scalars(k, out);
                collect_scalars(v, out);
            }
        }
        _ => out.push((node.start, node.end)),
    }
}

/// `//` comments of a `.rules` file, outside strings and quoted names.
fn rules_comments(text: &str) -> Vec<Comment> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                out.push(comment_at(text, i, 2));
                i = text[i..].find('\n').map_or(text.len(), |e| i + e);
                continue;
            }
            b'"' | b'\'' | b'`' => {
                i = crate::parse::grammar::skip_quoted(bytes, i);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Builds output line by line, placing comments at the first line printed
/// for code that came after them.
struct Out<'a> {
    buf: String,
    source: &'a str,
    comments: Vec<Comment>,
    next: usize,
    marker: &'static str,
}

impl<'a> Out<'a> {
    fn new(source: &'a str, comments: Vec<Comment>, marker: &'static str) -> Self {
        Out {
            buf: String::new(),
            source,
            comments,
            next: 0,
            marker,
        }
    }

    fn blank(&mut self) {
        if !self.buf.is_empty() && !self.buf.ends_with("\n\n") {
            self.buf.push('\n');
        }
    }

    /// Writes the comments that come before `at` in the source.
    fn comments_before(&mut self, indent: usize, at: usize) {
        while let Some(c) = self.comments.get(self.next) {
            if c.offset >= at {
                break;
            }
            let c = c.clone();
            self.next += 1;
            self.push_comment(indent, &c);
        }
    }

    /// A line for code written at `anchor` in the source (if known).
    fn line(&mut self, indent: usize, text: &str, anchor: Option<usize>) {
        if let Some(at) = anchor {
            self.comments_before(indent, at);
        }
        for _ in 0..indent {
            self.buf.push(' ');
        }
        self.buf.push_str(text);
        if let Some(at) = anchor {
            let line_end = self.source[at.min(self.source.len())..]
                .find('\n')
                .map_or(self.source.len(), |e| at + e);
            let mut trailing = Vec::new();
            while let Some(c) = self.comments.get(self.next) {
                if c.offset >= line_end || c.own_line {
                    break;
                }
                trailing.push(c.text.trim().to_string());
                self.next += 1;
            }
            self.push_trailing(&trailing);
        }
        self.buf.push('\n');
    }

    /// The line of a key whose value is a block starting at `block` on a
    /// later source line: comments before the block's first line go above
    /// it, except one trailing the key's own source line, which stays
    /// trailing. (Anchoring at the block would take the comment trailing
    /// the block's first line for the key's, and move it on every run.)
    fn key_line(&mut self, indent: usize, text: &str, block: usize) {
        let block = block.min(self.source.len());
        let block_line = self.source[..block].rfind('\n').map_or(0, |i| i + 1);
        let key_line = self.source[..block_line.saturating_sub(1)]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        let mut trailing = Vec::new();
        while let Some(c) = self.comments.get(self.next) {
            if c.offset >= block_line {
                break;
            }
            let c = c.clone();
            self.next += 1;
            if !c.own_line && c.offset >= key_line {
                trailing.push(c.text.trim().to_string());
            } else {
                self.push_comment(indent, &c);
            }
        }
        for _ in 0..indent {
            self.buf.push(' ');
        }
        self.buf.push_str(text);
        self.push_trailing(&trailing);
        self.buf.push('\n');
    }

    /// `  # a b` after a line's code, for the comments that trailed it.
    fn push_trailing(&mut self, trailing: &[String]) {
        if trailing.is_empty() {
            return;
        }
        self.buf.push_str("  ");
        self.buf.push_str(self.marker);
        let text = trailing.join(" ");
        let text = text.trim();
        if !text.is_empty() {
            self.buf.push(' ');
            self.buf.push_str(text);
        }
    }

    fn push_comment(&mut self, indent: usize, c: &Comment) {
        for _ in 0..indent {
            self.buf.push(' ');
        }
        self.buf.push_str(self.marker);
        let body = c.text.strip_prefix(' ').unwrap_or(&c.text);
        if !body.is_empty() {
            self.buf.push(' ');
            self.buf.push_str(body);
        }
        self.buf.push('\n');
    }

    fn finish(mut self) -> String {
        let rest: Vec<Comment> = self.comments[self.next..].to_vec();
        if !rest.is_empty() {
            self.blank();
        }
        for c in rest {
            self.push_comment(0, &c);
        }
        while self.buf.ends_with("\n\n") {
            self.buf.pop();
        }
        self.buf
    }
}

/// Whether a JSON value prints on one line within `width` characters.
fn inline_len(v: &Value) -> Option<usize> {
    match v {
        Value::Array(items) => {
            let mut n = 2;
            for i in items {
                n += inline_len(i)? + 2;
            }
            Some(n)
        }
        Value::Object(m) => {
            let mut n = 4;
            for (k, v) in m {
                if matches!(v, Value::Object(o) if !o.is_empty()) {
                    // One level of nesting at most on a line.
                    if let Value::Object(o) = v
                        && o.values().any(|x| x.is_object() || x.is_array())
                    {
                        return None;
                    }
                }
                n += k.len() + 4 + inline_len(v)?;
            }
            Some(n)
        }
        other => Some(other.to_string().len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(name: &str, text: &str) -> project::Project {
        project::load_str_to(name, text, Until::Checked, &LoadOptions::default())
    }

    /// The guard in front of every formatted text: an output that lowers to
    /// the same servers but that `check` refuses is not the same rules (the
    /// fuzz finding behind it: `tools: []` printed as `tools:`, null).
    #[test]
    fn an_output_with_new_errors_is_not_the_same_rules() {
        let head = "version: 1\nserver: { name: s, version: \"1\" }\n";
        let empty = checked("a.yaml", &format!("{head}tools: []\n"));
        let null = checked("a.yaml", &format!("{head}tools:\n"));
        assert!(
            !empty
                .diagnostics
                .iter()
                .any(|d| d.severity == Severity::Error)
        );
        assert!(
            null.diagnostics
                .iter()
                .any(|d| d.severity == Severity::Error)
        );
        assert!(same_rules(&empty, &empty));
        // Lowered alike: only the errors tell them apart.
        assert_eq!(empty.servers, null.servers);
        assert!(!same_rules(&empty, &null));
        // The same rules in the other syntax are the same rules.
        let rules = checked("a.rules", "version 1\nserver s version \"1\"\n");
        assert!(same_rules(&empty, &rules), "{:?}", rules.diagnostics);
    }
}
