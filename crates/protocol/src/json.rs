//! The one way the proxy's crates read JSON text: serde_json's readers,
//! counted. Each crate's `clippy.toml` disallows serde_json's own readers,
//! so every read of a message goes through here, and [`reads`] tells how
//! many reads this thread has made and how many bytes they covered — the
//! figure the tests that hold "a message is read once" count.

use std::cell::Cell;

use serde::Deserialize;
use serde_json::de::StrRead;

thread_local! {
    static READS: Cell<Reads> = const { Cell::new(Reads { reads: 0, bytes: 0 }) };
}

/// Reads made by this thread so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reads {
    /// How many times a text was read.
    pub reads: u64,
    /// How many bytes those texts held.
    pub bytes: u64,
}

impl std::ops::Sub for Reads {
    type Output = Reads;
    fn sub(self, earlier: Reads) -> Reads {
        Reads {
            reads: self.reads - earlier.reads,
            bytes: self.bytes - earlier.bytes,
        }
    }
}

fn count(bytes: usize) {
    READS.with(|reads| {
        let mut now = reads.get();
        now.reads += 1;
        now.bytes += bytes as u64;
        reads.set(now);
    });
}

/// The reads this thread has made so far.
pub fn reads() -> Reads {
    READS.with(Cell::get)
}

/// [`serde_json::from_str`], counted.
///
/// # Errors
///
/// As [`serde_json::from_str`]: `text` is not JSON, or not a `T`.
#[allow(clippy::disallowed_methods)]
pub fn from_str<'a, T: Deserialize<'a>>(text: &'a str) -> serde_json::Result<T> {
    count(text.len());
    serde_json::from_str(text)
}

/// [`serde_json::from_slice`], counted.
///
/// # Errors
///
/// As [`serde_json::from_slice`]: `bytes` are not JSON, or not a `T`.
#[allow(clippy::disallowed_methods)]
pub fn from_slice<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> serde_json::Result<T> {
    count(bytes.len());
    serde_json::from_slice(bytes)
}

/// [`serde_json::Deserializer::from_str`], counted: a reader for a seed.
#[allow(clippy::disallowed_methods)]
pub fn deserializer(text: &str) -> serde_json::Deserializer<StrRead<'_>> {
    count(text.len());
    serde_json::Deserializer::from_str(text)
}

/// A [`Scanner`](crate::scan::Scanner) over `text`, counted: the fast path
/// of a read that serde_json makes when the scanner does not.
pub fn scan(text: &str) -> crate::scan::Scanner<'_> {
    count(text.len());
    crate::scan::Scanner::new(text)
}
