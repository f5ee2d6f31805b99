//! Annotation sets as the compiler holds them, and the conservative-bound
//! relation (SPEC §3.2). The hint table itself (names, defaults, worst
//! values, when a hint means something) lives in the runtime crate,
//! [`mcp_resolve_runtime::hints`], and is re-exported here.

use mcp_resolve_runtime::{Annotations, ExtraHints};

pub use mcp_resolve_runtime::hints::{
    AGENCY, DESTRUCTIVE, HintDef, HintTable, IDEMPOTENT, OPEN_WORLD, READ_ONLY,
};

/// The defaults and the runtime form of sets indexed by a [`HintTable`].
pub trait HintTableExt {
    /// The set with every hint at its default.
    fn defaults(&self) -> HintSet;
    /// A complete set as the runtime's [`Annotations`] (extra hints in
    /// declaration order).
    fn to_annotations(&self, set: &HintSet) -> Annotations;
}

impl HintTableExt for HintTable {
    fn defaults(&self) -> HintSet {
        HintSet(self.defs().iter().map(|d| d.default).collect())
    }

    fn to_annotations(&self, set: &HintSet) -> Annotations {
        Annotations {
            read_only: set.get(READ_ONLY),
            destructive: set.get(DESTRUCTIVE),
            idempotent: set.get(IDEMPOTENT),
            open_world: set.get(OPEN_WORLD),
            extra: ExtraHints::Owned(
                self.defs()[AGENCY..]
                    .iter()
                    .zip(set.0.iter().skip(AGENCY))
                    .map(|(d, v)| (d.name.to_string(), *v))
                    .collect(),
            ),
        }
    }
}

/// A complete annotation set, indexed like its [`HintTable`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HintSet(pub Vec<bool>);

impl HintSet {
    /// The value of hint `i`.
    pub fn get(&self, i: usize) -> bool {
        self.0.get(i).copied().unwrap_or(false)
    }

    /// Sets hint `i`.
    pub fn set(&mut self, i: usize, value: bool) {
        if let Some(slot) = self.0.get_mut(i) {
            *slot = value;
        }
    }
}

/// Why a resolved set is outside a static set's bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The hint the violation is about.
    pub hint: usize,
    /// Lowercase explanation.
    pub reason: String,
}

/// Every way `resolved` is outside the conservative bound of `static_set`
/// (SPEC §3.2); empty means allowed.
pub fn violations(table: &HintTable, static_set: &HintSet, resolved: &HintSet) -> Vec<Violation> {
    let s = |i| static_set.get(i);
    let r = |i| resolved.get(i);
    let mut out = Vec::new();
    if s(READ_ONLY) && !r(READ_ONLY) {
        out.push(Violation {
            hint: READ_ONLY,
            reason: "the static annotations are read-only, so every resolution must be".into(),
        });
    }
    if !s(READ_ONLY) && !s(DESTRUCTIVE) && !r(READ_ONLY) && r(DESTRUCTIVE) {
        out.push(Violation {
            hint: DESTRUCTIVE,
            reason: "the static annotations are non-destructive, so a resolution that writes must be too".into(),
        });
    }
    if s(IDEMPOTENT) && !r(READ_ONLY) && !r(IDEMPOTENT) {
        out.push(Violation {
            hint: IDEMPOTENT,
            reason:
                "the static annotations are idempotent, so a resolution that writes must be too"
                    .into(),
        });
    }
    if !s(OPEN_WORLD) && r(OPEN_WORLD) {
        out.push(Violation {
            hint: OPEN_WORLD,
            reason: "the static annotations are closed-world, so every resolution must be".into(),
        });
    }
    for (i, def) in table.defs().iter().enumerate().skip(AGENCY) {
        if s(i) != def.worst && r(i) == def.worst {
            out.push(Violation {
                hint: i,
                reason: format!(
                    "the static annotations declare `{}: {}`, so no resolution may declare `{}`",
                    def.name, !def.worst, def.worst
                ),
            });
        }
    }
    out
}

/// Whether two sets say the same thing: equal `readOnlyHint`, and equal
/// values for every hint that means something at that `readOnlyHint`
/// (`destructiveHint` and `idempotentHint` mean nothing on a read-only set).
pub fn same_meaning(table: &HintTable, a: &HintSet, b: &HintSet) -> bool {
    let read_only = a.get(READ_ONLY);
    read_only == b.get(READ_ONLY)
        && table
            .defs()
            .iter()
            .enumerate()
            .all(|(i, def)| !def.is_meaningful(read_only) || a.get(i) == b.get(i))
}

/// The tightest (least conservative) static set that bounds every set in `sets`.
pub fn tightest_bound<'a>(
    table: &HintTable,
    sets: impl IntoIterator<Item = &'a HintSet>,
) -> HintSet {
    let sets: Vec<&HintSet> = sets.into_iter().collect();
    if sets.is_empty() {
        return table.defaults();
    }
    let mut out = table.defaults();
    let all_read_only = sets.iter().all(|r| r.get(READ_ONLY));
    let writers = || sets.iter().filter(|r| !r.get(READ_ONLY));
    out.set(READ_ONLY, all_read_only);
    out.set(DESTRUCTIVE, writers().any(|r| r.get(DESTRUCTIVE)));
    out.set(IDEMPOTENT, writers().all(|r| r.get(IDEMPOTENT)));
    out.set(OPEN_WORLD, sets.iter().any(|r| r.get(OPEN_WORLD)));
    for (i, def) in table.defs().iter().enumerate().skip(AGENCY) {
        let any_worst = sets.iter().any(|r| r.get(i) == def.worst);
        out.set(i, if any_worst { def.worst } else { !def.worst });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_sets(table: &HintTable) -> Vec<HintSet> {
        let n = table.defs().len();
        (0..1u32 << n)
            .map(|bits| HintSet((0..n).map(|i| bits & (1 << i) != 0).collect()))
            .collect()
    }

    #[test]
    fn tightest_bound_bounds_every_input_and_nothing_tighter_does() {
        let table = HintTable::default();
        let sets = all_sets(&table);
        // Every pair of resolved sets: the bound admits both, and every static
        // set admitting both is at least as conservative as the bound, i.e. it
        // admits everything the bound admits.
        for a in sets.iter().step_by(3) {
            for b in sets.iter().step_by(5) {
                let bound = tightest_bound(&table, [a, b]);
                assert!(violations(&table, &bound, a).is_empty());
                assert!(violations(&table, &bound, b).is_empty());
                for s in &sets {
                    if violations(&table, s, a).is_empty() && violations(&table, s, b).is_empty() {
                        for r in &sets {
                            if violations(&table, &bound, r).is_empty() {
                                assert!(violations(&table, s, r).is_empty());
                            }
                        }
                    }
                }
            }
        }
    }
}
