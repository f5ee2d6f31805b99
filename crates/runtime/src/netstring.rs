//! Netstrings (`<byte length>:<bytes>,`), the framing of the literals
//! generated code holds ([`crate::listing`], [`crate::outcomes`]): any text
//! fits without escaping, and a reader never scans a field's bytes.

/// Appends `field` as one netstring.
pub(crate) fn put(out: &mut String, field: &str) {
    out.push_str(&field.len().to_string());
    out.push(':');
    out.push_str(field);
    out.push(',');
}

/// Appends a flag as `1` or `0`.
pub(crate) fn put_flag(out: &mut String, b: bool) {
    put(out, if b { "1" } else { "0" });
}

/// Reads netstrings off a text.
pub(crate) struct Reader<'a> {
    pub(crate) rest: &'a str,
}

impl<'a> Reader<'a> {
    pub(crate) fn field(&mut self) -> Option<&'a str> {
        let (len, rest) = self.rest.split_once(':')?;
        let len: usize = len.parse().ok()?;
        let field = rest.get(..len)?;
        self.rest = rest.get(len..)?.strip_prefix(',')?;
        Some(field)
    }

    /// A count of items to follow. Every item takes at least one byte: a
    /// count beyond what is left is corrupt, and never allocated for.
    pub(crate) fn count(&mut self) -> Option<usize> {
        let n: usize = self.field()?.parse().ok()?;
        (n <= self.rest.len()).then_some(n)
    }

    pub(crate) fn flag(&mut self) -> Option<bool> {
        match self.field()? {
            "0" => Some(false),
            "1" => Some(true),
            _ => None,
        }
    }

    /// Four flags in one field, as `0`/`1`.
    pub(crate) fn bits(&mut self) -> Option<[bool; 4]> {
        let mut out = [false; 4];
        match self.field()?.as_bytes() {
            bits @ [_, _, _, _] => {
                for (flag, bit) in out.iter_mut().zip(bits) {
                    *flag = match bit {
                        b'0' => false,
                        b'1' => true,
                        _ => return None,
                    };
                }
                Some(out)
            }
            _ => None,
        }
    }

    /// A mask of `N` marks, each `^` (derived) or `=` (written out).
    pub(crate) fn mask<const N: usize>(&mut self) -> Option<[bool; N]> {
        let field = self.field()?.as_bytes();
        if field.len() != N {
            return None;
        }
        let mut out = [false; N];
        for (written, mark) in out.iter_mut().zip(field) {
            *written = match mark {
                b'=' => true,
                b'^' => false,
                _ => return None,
            };
        }
        Some(out)
    }
}

/// Appends four flags as one field.
pub(crate) fn put_bits(out: &mut String, bits: [bool; 4]) {
    let text: String = bits.iter().map(|&b| if b { '1' } else { '0' }).collect();
    put(out, &text);
}

/// Appends the mask of which `texts` differ from their `derived` forms,
/// then those texts: the reader takes a derived text where the mask says `^`.
pub(crate) fn put_texts(out: &mut String, derived: &[&str], texts: &[&str]) {
    let mask: String = derived
        .iter()
        .zip(texts)
        .map(|(d, t)| if d == t { '^' } else { '=' })
        .collect();
    put(out, &mask);
    for (d, t) in derived.iter().zip(texts) {
        if d != t {
            put(out, t);
        }
    }
}
