//! Tool-name dispatch in constant time: a minimal perfect hash over the tool
//! names, computed when the code is generated (hash and displace, as in
//! CHD/`phf`), so resolving costs the same for 10 tools and for 10,000.

/// The seeded hash both the generator and [`NameIndex::get`] use: FNV-1a over
/// the bytes, then the SplitMix64 finalizer for avalanche.
pub fn hash(seed: u64, key: &str) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325 ^ seed;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    mix(h)
}

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
    pub fn new(seed: u64, key: &str) -> KeyHash {
        let h = hash(seed, key);
        let h2 = mix(h ^ 0x9e37_79b9_7f4a_7c15);
        KeyHash {
            bucket: (h >> 32) as u32,
            f1: h as u32,
            f2: h2 as u32,
        }
    }

    /// The slot for this key given its bucket's displacements, in `0..len`.
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
