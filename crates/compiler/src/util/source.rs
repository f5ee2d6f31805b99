//! Source files and spans: every node the front end produces points back here.

use std::path::{Path, PathBuf};

/// Index of a file in a [`SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileId(pub u32);

/// A byte range in one source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    /// The file.
    pub file: FileId,
    /// First byte.
    pub start: usize,
    /// One past the last byte (`start == end` for a point).
    pub end: usize,
}

impl Span {
    /// A span from `start` to `end` in `file`.
    pub fn new(file: FileId, start: usize, end: usize) -> Self {
        Span {
            file,
            start,
            end: end.max(start),
        }
    }
}

/// A value with the span it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Spanned<T> {
    /// The value.
    pub value: T,
    /// Where it was written.
    pub span: Span,
}

impl<T> Spanned<T> {
    /// Pairs a value with its span.
    pub fn new(value: T, span: Span) -> Self {
        Spanned { value, span }
    }
}

/// One loaded file.
#[derive(Debug)]
pub struct SourceFile {
    /// The path as given by the user (relative paths stay relative: output must
    /// not depend on the machine).
    pub path: PathBuf,
    /// The text.
    pub text: String,
    line_starts: Vec<usize>,
}

impl SourceFile {
    fn new(path: PathBuf, text: String) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        SourceFile {
            path,
            text,
            line_starts,
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.line_starts[line];
        let column = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count());
        (line + 1, column + 1)
    }

    /// The whole lines that hold bytes `start..end`: their byte range
    /// (through the last line's newline) and the 1-based number of the
    /// first. What a diagnostic shows of a file, without the rest of it.
    pub fn lines_around(&self, start: usize, end: usize) -> (std::ops::Range<usize>, usize) {
        let line_of = |offset: usize| match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = start.min(self.text.len());
        let end = end.clamp(start, self.text.len());
        let first = line_of(start);
        let last = line_of(end);
        let to = self
            .line_starts
            .get(last + 1)
            .copied()
            .unwrap_or(self.text.len());
        (self.line_starts[first]..to, first + 1)
    }

    /// Byte offset of a 1-based line and column (in characters).
    pub fn offset_of(&self, line: usize, column: usize) -> usize {
        let Some(&start) = self.line_starts.get(line.saturating_sub(1)) else {
            return self.text.len();
        };
        let rest = &self.text[start..];
        rest.char_indices()
            .nth(column.saturating_sub(1))
            .map_or(self.text.len(), |(i, _)| start + i)
    }

    /// The path with forward slashes, as written in diagnostics and output.
    pub fn display_path(&self) -> String {
        display_path(&self.path)
    }
}

/// A path with `/` separators whatever the platform.
pub fn display_path(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
        .replace("//", "/")
}

/// All files of one compilation.
#[derive(Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a file's text and returns its id.
    pub fn add(&mut self, path: impl Into<PathBuf>, text: String) -> FileId {
        let id = FileId(u32::try_from(self.files.len()).unwrap_or(u32::MAX));
        self.files.push(SourceFile::new(path.into(), text));
        id
    }

    /// The file with this id.
    pub fn get(&self, id: FileId) -> Option<&SourceFile> {
        self.files.get(id.0 as usize)
    }

    /// Every file, in the order added.
    pub fn files(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files
            .iter()
            .enumerate()
            .map(|(i, f)| (FileId(i as u32), f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters_and_lines_from_one() {
        let f = SourceFile::new("a".into(), "ab\né: x\n".into());
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(3), (2, 1));
        // `:` follows a two-byte character
        assert_eq!(f.line_col(5), (2, 2));
        assert_eq!(f.offset_of(2, 2), 5);
        assert_eq!(f.offset_of(9, 1), f.text.len());
    }
}
