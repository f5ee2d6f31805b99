//! Tool-name dispatch in constant time: a minimal perfect hash over the tool
//! names, computed when the code is generated (hash and displace, as in
//! CHD/`phf`), so resolving costs the same for 10 tools and for 10,000.

/// The seeded hash both the generator and [`NameIndex::get`] use: eight
/// bytes at a time (multiply and rotate; the last word overlaps the one
/// before, short keys are read as two overlapping halves), then the
/// SplitMix64 finalizer. A typical tool name costs four multiplications and
/// no loop over bytes.
#[inline]
pub fn hash(seed: u64, key: &str) -> u64 {
    let bytes = key.as_bytes();
    let n = bytes.len();
    let mut h = seed ^ (n as u64).wrapping_mul(K);
    if n >= 8 {
        let mut at = 0;
        while at + 8 < n {
            h = step(h, word(bytes, at));
            at += 8;
        }
        h = step(h, word(bytes, n - 8));
    } else if n >= 4 {
        h = step(h, (half(bytes, 0) << 32) | half(bytes, n - 4));
    } else if let (Some(&a), Some(&b), Some(&c)) = (bytes.first(), bytes.get(n / 2), bytes.last()) {
        h = step(h, (u64::from(a) << 16) | (u64::from(b) << 8) | u64::from(c));
    }
    mix(h)
}

#[inline]
fn step(h: u64, w: u64) -> u64 {
    (h ^ w).wrapping_mul(K).rotate_left(31)
}

/// Eight bytes at `at` (zero if out of range, which callers rule out).
#[inline]
fn word(bytes: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    if let Some(s) = bytes.get(at..at + 8) {
        w.copy_from_slice(s);
    }
    u64::from_le_bytes(w)
}

/// Four bytes at `at` (zero if out of range, which callers rule out).
#[inline]
fn half(bytes: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 4];
    if let Some(s) = bytes.get(at..at + 4) {
        w.copy_from_slice(s);
    }
    u64::from(u32::from_le_bytes(w))
}

const K: u64 = 0x9e37_79b9_7f4a_7c15;

#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The three values a key's slot is computed from: its bucket and two
/// independent 32-bit words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyHash {
    /// Selects the bucket (modulo the number of buckets).
    pub bucket: u32,
    /// Multiplied by the bucket's first displacement.
    pub f1: u32,
    /// Added to the bucket's second displacement.
    pub f2: u32,
}

impl KeyHash {
    /// The hash words of `key` under `seed`.
    #[inline]
    pub fn new(seed: u64, key: &str) -> KeyHash {
        let h = hash(seed, key);
        let h2 = (h ^ (h >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9) >> 32;
        KeyHash {
            bucket: (h >> 32) as u32,
            f1: h as u32,
            f2: h2 as u32,
        }
    }

    /// The slot for this key given its bucket's displacements, in `0..len`.
    #[inline]
    pub fn slot(self, (d1, d2): (u32, u32), len: u32) -> u32 {
        d2.wrapping_add(self.f1.wrapping_mul(d1))
            .wrapping_add(self.f2)
            % len.max(1)
    }
}

/// A perfect-hash table from tool names to slots `0..names.len()`.
#[derive(Clone, Copy, Debug)]
pub struct NameIndex {
    /// The seed the displacements were found for.
    pub seed: u64,
    /// One `(d1, d2)` pair per bucket.
    pub displacements: &'static [(u32, u32)],
    /// The names, each at its slot.
    pub names: &'static [&'static str],
}

impl NameIndex {
    /// The slot of `name`, or `None` when it is not one of the names.
    /// Inlined, so the table sizes of a generated `static` are constants and
    /// the remainders compile to multiplications.
    #[inline]
    pub fn get(&self, name: &str) -> Option<usize> {
        let buckets = u32::try_from(self.displacements.len()).ok()?;
        let len = u32::try_from(self.names.len()).ok()?;
        if buckets == 0 || len == 0 {
            return None;
        }
        let h = KeyHash::new(self.seed, name);
        let d = *self.displacements.get((h.bucket % buckets) as usize)?;
        let slot = h.slot(d, len) as usize;
        (*self.names.get(slot)? == name).then_some(slot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_counts_at_every_length() {
        // Changing any one byte of a key of any length changes its hash.
        for n in 0..40 {
            let key: String = (0..n).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            let base = hash(7, &key);
            for i in 0..n {
                let mut other = key.clone().into_bytes();
                other[i] = b'Z';
                let other = String::from_utf8(other).unwrap_or_default();
                assert_ne!(hash(7, &other), base, "length {n}, byte {i}");
            }
            assert_ne!(hash(8, &key), base, "seed, length {n}");
        }
        assert_ne!(hash(0, ""), hash(0, "\0"));
    }
}
