//! The string domain: one witness for every distinct way the string
//! predicates of a column can evaluate.
//!
//! Every `pattern` becomes a DFA (regex-automata, unanchored search, the same
//! syntax as the `regex` crate the resolver uses); `const` and `enum` strings
//! become one trie; `minLength`/`maxLength` become a character counter; a
//! UTF-8 automaton keeps every explored string valid. A breadth-first walk of
//! the product of these automata visits every reachable combination of
//! states, so every *signature* (which literal the string equals, which
//! patterns it matches, which length bucket it falls in) that some string has
//! is found, with the shortest such string as its witness. Signatures no
//! string has are, by construction, never produced: emptiness is exact.

use std::collections::hash_map::Entry;
use std::collections::{BTreeSet, VecDeque};
use std::rc::Rc;

use regex_automata::dfa::Automaton;
use regex_automata::dfa::dense::{self, DFA};
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};
use serde_json::Value;

use super::matrix::Budget;
use super::{FastMap as HashMap, Inconclusive};
use crate::ir::{Pred, PredKind};

/// Size limit for one pattern's DFA (and for its determinization).
pub const DFA_SIZE_LIMIT: usize = 1 << 20;

type Dfa = Rc<DFA<Vec<u32>>>;

/// Compiled pattern DFAs by source, shared by every column of a run.
#[derive(Default)]
pub struct DfaCache {
    dfas: HashMap<String, Result<Dfa, String>>,
}

impl DfaCache {
    /// The DFA for `pattern`, built once per run. Building charges the run's
    /// budget by the memory built (a failed build by the size limit).
    fn get(&mut self, pattern: &str, budget: &mut Budget) -> Result<Dfa, Inconclusive> {
        if budget.is_traced() {
            // Apart from the run, this cache is the thread's: whether the
            // run pays for the build is for the ledger to say.
            let entry = self
                .dfas
                .entry(pattern.to_string())
                .or_insert_with(|| build_dfa(pattern).map(Rc::new));
            let bytes = entry.as_ref().map_or(DFA_SIZE_LIMIT, |d| d.memory_usage());
            budget.note_dfa(pattern, bytes as u64);
        } else if !self.dfas.contains_key(pattern) {
            // A build may cost up to the size limit: only start one the budget can pay.
            if budget.run_left() < DFA_SIZE_LIMIT as u64 {
                budget.spend_run(u64::MAX)?;
            }
            let built = build_dfa(pattern).map(Rc::new);
            let bytes = built.as_ref().map_or(DFA_SIZE_LIMIT, |d| d.memory_usage());
            budget.spend_run(bytes as u64)?;
            self.dfas.insert(pattern.to_string(), built);
        }
        let Some(entry) = self.dfas.get(pattern) else {
            return Err(Inconclusive("internal: DFA cache miss".to_string()));
        };
        entry.clone().map_err(|why| {
            Inconclusive(format!(
                "pattern {} has no DFA within limits: {why}",
                Value::String(pattern.to_string())
            ))
        })
    }
}

fn build_dfa(pattern: &str) -> Result<DFA<Vec<u32>>, String> {
    dense::Builder::new()
        .configure(
            DFA::config()
                .match_kind(MatchKind::All)
                .start_kind(regex_automata::dfa::StartKind::Unanchored)
                .minimize(false)
                .dfa_size_limit(Some(DFA_SIZE_LIMIT))
                .determinize_size_limit(Some(DFA_SIZE_LIMIT)),
        )
        .thompson(regex_automata::nfa::thompson::Config::new().nfa_size_limit(Some(DFA_SIZE_LIMIT)))
        .build(pattern)
        .map_err(|e| {
            let text = e.to_string();
            text.lines().next().unwrap_or("").to_string()
        })
}

/// The string predicates of a column, gathered from its leaves.
#[derive(Default)]
pub struct StringPreds {
    literals: BTreeSet<String>,
    patterns: BTreeSet<String>,
    /// Character counts at which some length predicate changes value.
    length_cuts: BTreeSet<u64>,
}

impl StringPreds {
    /// Adds a leaf predicate; those that do not look at strings are ignored.
    pub fn add(&mut self, pred: &Pred) {
        match &pred.kind {
            PredKind::Const(Value::String(s)) => {
                self.literals.insert(s.clone());
            }
            PredKind::Enum(vs) => {
                for v in vs {
                    if let Value::String(s) = v {
                        self.literals.insert(s.clone());
                    }
                }
            }
            PredKind::Pattern(p) => {
                self.patterns.insert(p.clone());
            }
            PredKind::MinLength(n) => {
                self.length_cuts.insert(*n);
            }
            PredKind::MaxLength(n) => {
                self.length_cuts.insert(n.saturating_add(1));
            }
            _ => {}
        }
    }
}

/// One string per reachable signature, shortest first.
pub fn witnesses(
    preds: &StringPreds,
    cache: &mut DfaCache,
    max_states: usize,
    budget: &mut Budget,
) -> Result<Vec<String>, Inconclusive> {
    if preds.patterns.is_empty() && preds.length_cuts.is_empty() {
        // Only equality: each literal, and one string that is none of them.
        let mut out: Vec<String> = preds.literals.iter().cloned().collect();
        if let Some(other) = (0..=preds.literals.len())
            .map(short_string)
            .find(|s| !preds.literals.contains(s))
        {
            out.insert(0, other);
        }
        return Ok(out);
    }
    Product::new(preds, cache, budget)?.explore(max_states, budget)
}

/// The `n`th string in the order "", "a", …, "z", "aa", "ab", ….
fn short_string(mut n: usize) -> String {
    let mut out = Vec::new();
    while n > 0 {
        n -= 1;
        out.push(b'a' + (n % 26) as u8);
        n /= 26;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

const NO_NODE: u32 = u32::MAX;

#[derive(Default)]
struct Trie {
    edges: HashMap<(u32, u8), u32>,
    terminal: HashMap<u32, u32>,
    nodes: u32,
}

impl Trie {
    fn new<'a>(words: impl Iterator<Item = &'a String>) -> Trie {
        let mut t = Trie {
            nodes: 1,
            ..Trie::default()
        };
        for (id, w) in words.enumerate() {
            let mut node = 0;
            for &b in w.as_bytes() {
                node = match t.edges.entry((node, b)) {
                    Entry::Occupied(e) => *e.get(),
                    Entry::Vacant(e) => {
                        let n = t.nodes;
                        t.nodes += 1;
                        *e.insert(n)
                    }
                };
            }
            t.terminal.insert(node, id as u32);
        }
        t
    }

    fn next(&self, node: u32, b: u8) -> u32 {
        if node == NO_NODE {
            return NO_NODE;
        }
        self.edges.get(&(node, b)).copied().unwrap_or(NO_NODE)
    }
}

/// The state of one pattern's automaton: once a match has been seen the
/// string matches whatever follows (unanchored search).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Re {
    Live(StateID),
    Matched,
    Never,
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    trie: u32,
    utf8: u8,
    len: u64,
    res: Vec<Re>,
}

struct Product {
    trie: Trie,
    dfas: Vec<Dfa>,
    cuts: Vec<u64>,
    cap: u64,
    /// One representative byte per class of bytes every automaton treats alike.
    alphabet: Vec<u8>,
}

/// UTF-8 decoding: state 0 is "between characters"; `None` rejects the byte.
fn utf8_next(state: u8, b: u8) -> Option<u8> {
    let cont = |lo: u8, hi: u8, next: u8| (lo..=hi).contains(&b).then_some(next);
    match state {
        0 => match b {
            0x00..=0x7F => Some(0),
            0xC2..=0xDF => Some(1),
            0xE0 => Some(4),
            0xE1..=0xEC | 0xEE..=0xEF => Some(2),
            0xED => Some(5),
            0xF0 => Some(6),
            0xF1..=0xF3 => Some(3),
            0xF4 => Some(7),
            _ => None,
        },
        1 => cont(0x80, 0xBF, 0),
        2 => cont(0x80, 0xBF, 1),
        3 => cont(0x80, 0xBF, 2),
        4 => cont(0xA0, 0xBF, 1),
        5 => cont(0x80, 0x9F, 1),
        6 => cont(0x90, 0xBF, 2),
        7 => cont(0x80, 0x8F, 2),
        _ => None,
    }
}

/// Bytes at which some UTF-8 decoding decision changes.
const UTF8_CUTS: [u8; 13] = [
    0x80, 0x90, 0xA0, 0xC0, 0xC2, 0xE0, 0xE1, 0xED, 0xEE, 0xF0, 0xF1, 0xF4, 0xF5,
];

/// Preference for representative bytes, so witnesses read well.
fn byte_rank(b: u8) -> u32 {
    match b {
        b'a'..=b'z' => 0,
        b'0'..=b'9' => 1,
        b'A'..=b'Z' => 2,
        b'_' | b'-' | b'.' | b'/' => 3,
        0x21..=0x7E => 4,
        b' ' => 5,
        0x80.. => 6,
        _ => 7,
    }
}

impl Product {
    fn new(
        preds: &StringPreds,
        cache: &mut DfaCache,
        budget: &mut Budget,
    ) -> Result<Product, Inconclusive> {
        let trie = Trie::new(preds.literals.iter());
        let dfas = preds
            .patterns
            .iter()
            .map(|p| cache.get(p, budget))
            .collect::<Result<Vec<_>, _>>()?;
        let cuts: Vec<u64> = preds.length_cuts.iter().copied().collect();
        let cap = cuts.last().copied().unwrap_or(0);
        let literal_bytes: BTreeSet<u8> = preds.literals.iter().flat_map(|s| s.bytes()).collect();
        let mut classes: HashMap<Vec<u16>, u8> = HashMap::default();
        for b in 0..=255u8 {
            let mut key = vec![UTF8_CUTS.iter().filter(|&&c| b >= c).count() as u16];
            key.push(if literal_bytes.contains(&b) {
                u16::from(b)
            } else {
                256
            });
            key.extend(dfas.iter().map(|d| u16::from(d.byte_classes().get(b))));
            match classes.entry(key) {
                Entry::Vacant(e) => {
                    e.insert(b);
                }
                Entry::Occupied(mut e) => {
                    if byte_rank(b) < byte_rank(*e.get()) {
                        e.insert(b);
                    }
                }
            }
        }
        let mut alphabet: Vec<u8> = classes.into_values().collect();
        alphabet.sort_by_key(|&b| (byte_rank(b), b));
        Ok(Product {
            trie,
            dfas,
            cuts,
            cap,
            alphabet,
        })
    }

    fn start(&self) -> Result<Key, Inconclusive> {
        let config = start::Config::new().anchored(Anchored::No);
        let res = self
            .dfas
            .iter()
            .map(|d| {
                d.start_state(&config)
                    .map(|s| classify(d, s))
                    .map_err(|e| Inconclusive(format!("pattern has no start state: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Key {
            trie: 0,
            utf8: 0,
            len: 0,
            res,
        })
    }

    fn step(&self, key: &Key, b: u8) -> Option<Key> {
        let utf8 = utf8_next(key.utf8, b)?;
        let len = if (0x80..0xC0).contains(&b) {
            key.len
        } else {
            (key.len + 1).min(self.cap)
        };
        let res = key
            .res
            .iter()
            .zip(&self.dfas)
            .map(|(r, d)| match *r {
                Re::Live(s) => classify(d, d.next_state(s, b)),
                other => other,
            })
            .collect();
        Some(Key {
            trie: self.trie.next(key.trie, b),
            utf8,
            len,
            res,
        })
    }

    /// The signature of the string that ends in this state.
    fn signature(&self, key: &Key) -> Vec<u64> {
        let literal = self
            .trie
            .terminal
            .get(&key.trie)
            .map_or(u64::MAX, |&id| u64::from(id));
        let bucket = self.cuts.iter().filter(|&&c| key.len >= c).count() as u64;
        let mut sig = vec![literal, bucket];
        sig.extend(key.res.iter().zip(&self.dfas).map(|(r, d)| match *r {
            Re::Matched => 1,
            Re::Never => 0,
            Re::Live(s) => u64::from(d.is_match_state(d.next_eoi_state(s))),
        }));
        sig
    }

    /// No successor can change the signature.
    fn settled(&self, key: &Key) -> bool {
        key.utf8 == 0
            && key.trie == NO_NODE
            && key.len >= self.cap
            && key.res.iter().all(|r| !matches!(r, Re::Live(_)))
    }

    fn explore(&self, max_states: usize, budget: &mut Budget) -> Result<Vec<String>, Inconclusive> {
        let start = self.start()?;
        // (parent index, byte) per visited state, for rebuilding witnesses.
        let mut trail: Vec<(usize, u8)> = vec![(usize::MAX, 0)];
        let mut keys: Vec<Key> = vec![start.clone()];
        let mut seen: HashMap<Key, ()> = HashMap::default();
        seen.insert(start, ());
        let mut queue = VecDeque::from([0usize]);
        let mut found: HashMap<Vec<u64>, usize> = HashMap::default();
        let mut order = Vec::new();
        while let Some(i) = queue.pop_front() {
            let key = keys[i].clone();
            if key.utf8 == 0
                && let Entry::Vacant(e) = found.entry(self.signature(&key))
            {
                e.insert(i);
                order.push(i);
            }
            if self.settled(&key) {
                continue;
            }
            budget.spend_run(self.alphabet.len() as u64)?;
            for &b in &self.alphabet {
                let Some(next) = self.step(&key, b) else {
                    continue;
                };
                if seen.contains_key(&next) {
                    continue;
                }
                if keys.len() >= max_states {
                    return Err(Inconclusive(format!(
                        "the string patterns need more than {max_states} automaton states"
                    )));
                }
                seen.insert(next.clone(), ());
                keys.push(next);
                trail.push((i, b));
                queue.push_back(keys.len() - 1);
            }
        }
        order
            .into_iter()
            .map(|mut i| {
                let mut bytes = Vec::new();
                while trail[i].0 != usize::MAX {
                    bytes.push(trail[i].1);
                    i = trail[i].0;
                }
                bytes.reverse();
                String::from_utf8(bytes)
                    .map_err(|_| Inconclusive("a string witness is not UTF-8".to_string()))
            })
            .collect()
    }
}

fn classify(d: &DFA<Vec<u32>>, s: StateID) -> Re {
    if d.is_match_state(s) {
        Re::Matched
    } else if d.is_dead_state(s) || d.is_quit_state(s) {
        // No quit bytes are configured; a quit state cannot occur.
        Re::Never
    } else {
        Re::Live(s)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::ir::Loc;
    use crate::source::{FileId, Span};

    fn pred(kind: PredKind) -> Pred {
        Pred {
            kind,
            loc: Loc(Span::new(FileId(0), 0, 0)),
        }
    }

    fn run(kinds: Vec<PredKind>) -> Vec<String> {
        let mut preds = StringPreds::default();
        for k in kinds {
            preds.add(&pred(k));
        }
        witnesses(
            &preds,
            &mut DfaCache::default(),
            10_000,
            &mut Budget::new(0, u64::MAX),
        )
        .unwrap()
    }

    #[test]
    fn overlapping_prefixes_have_three_regions() {
        let w = run(vec![
            PredKind::Pattern("^/tmp/".into()),
            PredKind::Pattern("^/tmp/cache/".into()),
        ]);
        // neither, only the broad one, both
        assert_eq!(w, vec!["", "/tmp/", "/tmp/cache/"]);
    }

    #[test]
    fn anchored_suffix_is_decided_at_the_end() {
        let w = run(vec![PredKind::Pattern(r"\.md$".into())]);
        assert_eq!(w, vec!["", ".md"]);
    }

    #[test]
    fn non_ascii_only_regions_are_found() {
        let w = run(vec![PredKind::Pattern(r"^[^\x00-\x7F]".into())]);
        assert_eq!(w.len(), 2);
        assert!(w[1].chars().next().is_some_and(|c| !c.is_ascii()));
    }

    #[test]
    fn lengths_count_characters() {
        let w = run(vec![PredKind::MinLength(2), PredKind::MaxLength(3)]);
        let lens: Vec<usize> = w.iter().map(|s| s.chars().count()).collect();
        assert_eq!(lens, vec![0, 2, 4]);
    }

    #[test]
    fn literals_are_points_and_others_are_one_region() {
        let w = run(vec![PredKind::Enum(vec!["".into(), "a".into()])]);
        assert_eq!(w, vec!["b", "", "a"]);
    }

    #[test]
    fn contradictory_patterns_have_no_common_witness() {
        let w = run(vec![
            PredKind::Pattern("^a".into()),
            PredKind::Pattern("^b".into()),
        ]);
        let re_a = regex::Regex::new("^a").unwrap();
        let re_b = regex::Regex::new("^b").unwrap();
        assert!(!w.iter().any(|s| re_a.is_match(s) && re_b.is_match(s)));
        assert_eq!(w.len(), 3);
    }
}
