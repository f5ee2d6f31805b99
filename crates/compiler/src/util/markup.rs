//! Escaping for the Markdown and HTML the reports write (`diff --format
//! markdown`, `explain --format markdown|html`): the one place that knows
//! which characters those formats give a meaning to.

use std::fmt::Write as _;

/// Text for a cell of a GitHub-flavoured Markdown table: `|` would end the
/// cell and a line break the row, and `<`, `>` and `&` would be read as
/// HTML; backslash escapes keep Markdown's own punctuation literal.
pub fn md_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '\n' => out.push_str("<br>"),
            '\r' => {}
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:04x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// `text` as an inline code span that is safe in a table cell: the fence is
/// one backtick longer than the longest run of backticks inside, `|` is
/// escaped (GitHub splits cells before it reads code spans) and line breaks
/// become spaces, as a code span would show them anyway.
pub fn md_code(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let body: String = text
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect::<String>()
        .replace('|', "\\|");
    // A span that starts or ends with a backtick needs a space of padding.
    let pad = if body.starts_with('`') || body.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{body}{pad}{fence}")
}

/// Text for HTML element content or a double-quoted attribute.
pub fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_cells_keep_their_row() {
        assert_eq!(
            md_cell("a|b\nc <d> & `e`"),
            "a\\|b<br>c &lt;d&gt; &amp; \\`e\\`"
        );
        assert_eq!(md_cell("x\u{7}"), "x\\u{0007}");
    }

    #[test]
    fn code_spans_outlast_the_backticks_inside() {
        assert_eq!(md_code(r#"{"a":1}"#), r#"`{"a":1}`"#);
        assert_eq!(md_code("a`b"), "``a`b``");
        assert_eq!(md_code("`a"), "`` `a ``");
        assert_eq!(md_code("a|b\nc"), "`a\\|b c`");
    }

    #[test]
    fn html_text_is_inert() {
        assert_eq!(
            html(r#"<script>"x"&'y'"#),
            "&lt;script&gt;&quot;x&quot;&amp;&#39;y&#39;"
        );
    }
}
