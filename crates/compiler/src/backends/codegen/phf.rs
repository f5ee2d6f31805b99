//! Building the minimal perfect hash the generated dispatch uses (hash and
//! displace; the lookup side is `mcp_resolve_runtime::index`).

use mcp_resolve_runtime::index::KeyHash;

/// A perfect hash over a set of distinct keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    /// The seed the displacements work for.
    pub seed: u64,
    /// One `(d1, d2)` per bucket.
    pub displacements: Vec<(u32, u32)>,
    /// For each slot, the index of the key stored there.
    pub order: Vec<usize>,
}

/// Keys per bucket, on average.
const LAMBDA: usize = 4;
/// Seeds tried before giving up (each succeeds with high probability).
const MAX_SEEDS: u64 = 64;

/// Builds the table, deterministically. `None` when keys repeat (or, in
/// theory, when no seed works).
pub fn build(keys: &[&str]) -> Option<Table> {
    let n = keys.len();
    let len = u32::try_from(n).ok()?;
    if n == 0 {
        return Some(Table {
            seed: 0,
            displacements: Vec::new(),
            order: Vec::new(),
        });
    }
    let mut sorted: Vec<&str> = keys.to_vec();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return None;
    }
    let buckets = n.div_ceil(LAMBDA);
    let bucket_count = u32::try_from(buckets).ok()?;
    (0..MAX_SEEDS).find_map(|seed| try_seed(keys, seed, len, bucket_count))
}

fn try_seed(keys: &[&str], seed: u64, len: u32, bucket_count: u32) -> Option<Table> {
    let hashes: Vec<KeyHash> = keys.iter().map(|k| KeyHash::new(seed, k)).collect();
    let mut buckets: Vec<Vec<usize>> = vec![Vec::new(); bucket_count as usize];
    for (i, h) in hashes.iter().enumerate() {
        buckets[(h.bucket % bucket_count) as usize].push(i);
    }
    let mut by_size: Vec<usize> = (0..buckets.len()).collect();
    by_size.sort_by(|a, b| buckets[*b].len().cmp(&buckets[*a].len()).then(a.cmp(b)));

    let mut slots: Vec<Option<usize>> = vec![None; len as usize];
    let mut displacements = vec![(0u32, 0u32); buckets.len()];
    // Slots claimed while trying one displacement, stamped with the attempt.
    let mut stamp = vec![0u64; len as usize];
    let mut attempt = 0u64;
    for b in by_size {
        let members = &buckets[b];
        if members.is_empty() {
            continue;
        }
        let mut placed = false;
        'search: for d1 in 0..len {
            for d2 in 0..len {
                attempt += 1;
                let mut ok = true;
                for &k in members {
                    let s = hashes[k].slot((d1, d2), len) as usize;
                    if slots[s].is_some() || stamp[s] == attempt {
                        ok = false;
                        break;
                    }
                    stamp[s] = attempt;
                }
                if ok {
                    for &k in members {
                        slots[hashes[k].slot((d1, d2), len) as usize] = Some(k);
                    }
                    displacements[b] = (d1, d2);
                    placed = true;
                    break 'search;
                }
            }
        }
        if !placed {
            return None;
        }
    }
    let order = slots.into_iter().collect::<Option<Vec<usize>>>()?;
    Some(Table {
        seed,
        displacements,
        order,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use mcp_resolve_runtime::index::NameIndex;

    fn leak(keys: &[String], table: &Table) -> NameIndex {
        let names: Vec<&'static str> = table
            .order
            .iter()
            .map(|&i| &*Box::leak(keys[i].clone().into_boxed_str()))
            .collect();
        NameIndex {
            seed: table.seed,
            displacements: Box::leak(table.displacements.clone().into_boxed_slice()),
            names: Box::leak(names.into_boxed_slice()),
        }
    }

    #[test]
    fn every_key_finds_its_slot_and_nothing_else_does() {
        for n in [0usize, 1, 2, 3, 7, 100, 2000] {
            let keys: Vec<String> = (0..n).map(|i| format!("tool_{i}")).collect();
            let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
            let table = build(&refs).unwrap();
            assert_eq!(table, build(&refs).unwrap(), "deterministic");
            let index = leak(&keys, &table);
            for (i, k) in keys.iter().enumerate() {
                let slot = index.get(k).unwrap();
                assert_eq!(table.order[slot], i);
            }
            for miss in ["", "tool_", "tool_x", "Tool_1", "tool_1 "] {
                assert_eq!(index.get(miss), None, "{miss:?} in {n}");
            }
        }
    }

    #[test]
    fn repeated_keys_are_refused() {
        assert_eq!(build(&["a", "b", "a"]), None);
    }
}
