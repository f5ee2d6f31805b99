//! A JSON scanner for the one message the proxy reads most of: a
//! `tools/list` answer, whose schemas it passes over to reach each tool's
//! members. serde_json's validating walk costs about eight instructions a
//! byte on such an answer (a call through its reader for each token); this
//! one walks the same grammar in tight loops, a string's bytes sixteen at a
//! time.
//!
//! It is a fast path, never the judge. Every method returns `None` both
//! for text that is not JSON and for text it does not read (a key with
//! escapes, nesting past [`DEPTH`]); the caller then reads the message
//! with serde_json, which decides. What it accepts, serde_json accepts:
//! the grammar of its `ignore_value` (the walk behind `RawValue` and
//! `IgnoredAny`), which a property test and a fuzz target hold it to.

/// How deep a value is walked before the scanner gives it to serde_json.
pub const DEPTH: usize = 128;

/// A cursor over one JSON text; made by [`crate::json::scan`], which
/// counts the read.
pub struct Scanner<'a> {
    text: &'a str,
    at: usize,
}

/// The bytes a string's walk stops at, eight at a time: `"`, `\` and the
/// control characters (JSON's strings forbid them unescaped). A byte's
/// high bit is set where one is; only the lowest set bit is exact (a
/// borrow can set the bits above it), and only it is read.
#[inline(always)]
fn stops(chunk: u64) -> u64 {
    const ONES: u64 = u64::MAX / 255;
    // `"` xor 2 is a space, and a control character xor 2 is another:
    // both are below `!`, one comparison for the two.
    let quote = chunk ^ (ONES * 2);
    let quote_or_control = quote.wrapping_sub(ONES * u64::from(b'!')) & !quote;
    let backslash = chunk ^ (ONES * u64::from(b'\\'));
    let backslash = backslash.wrapping_sub(ONES) & !backslash;
    (quote_or_control | backslash) & (ONES << 7)
}

impl<'a> Scanner<'a> {
    pub(crate) fn new(text: &'a str) -> Scanner<'a> {
        Scanner { text, at: 0 }
    }

    /// The text scanned.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// Where the cursor is, in bytes.
    pub fn at(&self) -> usize {
        self.at
    }

    /// The next byte after whitespace, not taken.
    #[inline]
    pub fn peek(&mut self) -> Option<u8> {
        let bytes = self.text.as_bytes();
        while let Some(&b) = bytes.get(self.at) {
            if !matches!(b, b' ' | b'\n' | b'\t' | b'\r') {
                return Some(b);
            }
            self.at += 1;
        }
        None
    }

    /// Takes `byte`, the next after whitespace.
    #[inline]
    pub fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// Only whitespace is left.
    pub fn end(&mut self) -> Option<()> {
        self.peek().is_none().then_some(())
    }

    /// A string written without escapes, after whitespace: what is between
    /// its quotes.
    pub fn plain_string(&mut self) -> Option<&'a str> {
        let bytes = self.text.as_bytes();
        let start = expect(bytes, self.at, b'"')?;
        // A backslash: the string is not its text (the caller gives the
        // message to serde_json).
        self.at = string_end::<false>(bytes, start)?;
        self.text.get(start..self.at - 1)
    }

    /// An object's members, after whitespace: `member` is given each key
    /// (written without escapes) with the cursor before its value, and
    /// takes the value. The text of the object.
    pub fn object(
        &mut self,
        mut member: impl FnMut(&mut Self, &'a str) -> Option<()>,
    ) -> Option<&'a str> {
        let start = self.at_byte(b'{')?;
        if self.peek()? != b'}' {
            loop {
                let key = self.plain_string()?;
                self.eat(b':')?;
                member(self, key)?;
                match self.peek()? {
                    b',' => self.at += 1,
                    b'}' => break,
                    _ => return None,
                }
            }
        }
        self.at += 1;
        self.text.get(start..self.at)
    }

    /// An array's items, after whitespace: `item` takes each. The text of
    /// the array.
    pub fn array(&mut self, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<&'a str> {
        let start = self.at_byte(b'[')?;
        if self.peek()? != b']' {
            loop {
                item(self)?;
                match self.peek()? {
                    b',' => self.at += 1,
                    b']' => break,
                    _ => return None,
                }
            }
        }
        self.at += 1;
        self.text.get(start..self.at)
    }

    /// One value after whitespace, walked: its text.
    pub fn value(&mut self) -> Option<&'a str> {
        let bytes = self.text.as_bytes();
        let start = space(bytes, self.at);
        self.at = skip(bytes, start)?;
        self.text.get(start..self.at)
    }

    /// One value after whitespace, walked, as a message's [`Raw`] value.
    ///
    /// [`Raw`]: crate::Raw
    pub fn raw(&mut self) -> Option<crate::Raw<'a>> {
        self.value().map(crate::Raw::walked)
    }

    /// Takes `byte` after whitespace; where it was.
    fn at_byte(&mut self, byte: u8) -> Option<usize> {
        let start = (self.peek()? == byte).then_some(self.at)?;
        self.at += 1;
        Some(start)
    }
}

/// Past the whitespace from `at` on.
#[inline(always)]
fn space(bytes: &[u8], mut at: usize) -> usize {
    while let Some(&b) = bytes.get(at) {
        if b > b' ' || !matches!(b, b' ' | b'\n' | b'\t' | b'\r') {
            break;
        }
        at += 1;
    }
    at
}

/// `expected` at `at`, after whitespace: past it.
#[inline(always)]
fn expect(bytes: &[u8], at: usize, expected: u8) -> Option<usize> {
    let at = space(bytes, at);
    (bytes.get(at) == Some(&expected)).then_some(at + 1)
}

/// A key and its colon from `at` (whitespace first): past the colon.
#[inline(always)]
fn key(bytes: &[u8], at: usize) -> Option<usize> {
    let at = expect(bytes, at, b'"')?;
    expect(bytes, string_end::<true>(bytes, at)?, b':')
}

/// Walks the value at `at` (whitespace first), as serde_json's
/// `ignore_value` does, without recursion: where it ends. Containers open
/// are a stack of bits (1: an object), [`DEPTH`] of them at most.
fn skip(bytes: &[u8], mut at: usize) -> Option<usize> {
    let mut open: u128 = 0;
    let mut depth = 0;
    loop {
        at = space(bytes, at);
        // One value, or the opening of one.
        match *bytes.get(at)? {
            b'"' => at = string_end::<true>(bytes, at + 1)?,
            open_byte @ (b'{' | b'[') => {
                if depth == DEPTH {
                    return None;
                }
                let object = open_byte == b'{';
                let after = space(bytes, at + 1);
                let close = if object { b'}' } else { b']' };
                if bytes.get(after) == Some(&close) {
                    at = after + 1;
                } else {
                    open = open << 1 | u128::from(object);
                    depth += 1;
                    at = if object { key(bytes, after)? } else { after };
                    continue;
                }
            }
            b'n' => at = word(bytes, at, b"null")?,
            b't' => at = word(bytes, at, b"true")?,
            b'f' => at = word(bytes, at, b"false")?,
            b'-' | b'0'..=b'9' => at = number(bytes, at)?,
            _ => return None,
        }
        // After a value: a comma and the next, or the containers it closes.
        loop {
            if depth == 0 {
                return Some(at);
            }
            at = space(bytes, at);
            let object = open & 1 == 1;
            match (*bytes.get(at)?, object) {
                (b',', true) => {
                    at = key(bytes, at + 1)?;
                    break;
                }
                (b',', false) => {
                    at += 1;
                    break;
                }
                (b'}', true) | (b']', false) => {
                    at += 1;
                    open >>= 1;
                    depth -= 1;
                }
                _ => return None,
            }
        }
    }
}

/// `word` at `at`, exactly: past it.
#[inline(always)]
fn word(bytes: &[u8], at: usize, word: &[u8]) -> Option<usize> {
    (bytes.get(at..at + word.len())? == word).then_some(at + word.len())
}

/// Past the digits from `at` on; with how many there were.
#[inline(always)]
fn digits(bytes: &[u8], mut at: usize) -> (usize, usize) {
    let start = at;
    while bytes.get(at).is_some_and(u8::is_ascii_digit) {
        at += 1;
    }
    (at, at - start)
}

/// A number as JSON writes it at `at`: `-`, then `0` or digits not
/// starting with `0`, then a fraction and an exponent, each with a digit
/// at least (its size is not read). Past it.
fn number(bytes: &[u8], mut at: usize) -> Option<usize> {
    if bytes.get(at) == Some(&b'-') {
        at += 1;
    }
    match bytes.get(at)? {
        b'0' => {
            at += 1;
            if bytes.get(at).is_some_and(u8::is_ascii_digit) {
                return None;
            }
        }
        b'1'..=b'9' => at = digits(bytes, at).0,
        _ => return None,
    }
    if bytes.get(at) == Some(&b'.') {
        let (after, n) = digits(bytes, at + 1);
        at = (n > 0).then_some(after)?;
    }
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(bytes.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        let (after, n) = digits(bytes, at);
        at = (n > 0).then_some(after)?;
    }
    Some(at)
}

/// Past the closing quote of the string whose text starts at `at` (after
/// its opening quote); without `ESCAPES`, `None` at a backslash.
#[inline(always)]
fn string_end<const ESCAPES: bool>(bytes: &[u8], mut at: usize) -> Option<usize> {
    loop {
        at = stop(bytes, at)?;
        match *bytes.get(at)? {
            b'"' => return Some(at + 1),
            b'\\' if ESCAPES => {
                at += 1;
                match *bytes.get(at)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => at += 1,
                    b'u' => {
                        let hex = bytes.get(at + 1..at + 5)?;
                        hex.iter().all(u8::is_ascii_hexdigit).then_some(())?;
                        at += 5;
                    }
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
}

/// Where the first byte a string's walk stops at is, from `at` on: sixteen
/// bytes a step, as two words tested at once and one branch (most strings
/// end in their first sixteen bytes), the last few one at a time.
#[inline(always)]
fn stop(bytes: &[u8], at: usize) -> Option<usize> {
    let (blocks, rest) = bytes.get(at..)?.as_chunks::<16>();
    let mut at = at;
    for block in blocks {
        let (low, high) = block.split_at(8);
        let low = stops(u64::from_le_bytes(low.try_into().ok()?));
        let high = stops(u64::from_le_bytes(high.try_into().ok()?));
        if low | high != 0 {
            // The lowest set bit of the first word with one is exact.
            let bit = if low != 0 {
                low.trailing_zeros()
            } else {
                64 + high.trailing_zeros()
            };
            return Some(at + bit as usize / 8);
        }
        at += 16;
    }
    rest.iter().position(|&b| is_stop(b)).map(|i| at + i)
}

/// `"`, `\\` or a control character (as [`stops`] tests them).
#[inline(always)]
fn is_stop(b: u8) -> bool {
    ((b ^ 2) < b'!') | (b == b'\\')
}

#[cfg(test)]
pub(crate) mod tests;
