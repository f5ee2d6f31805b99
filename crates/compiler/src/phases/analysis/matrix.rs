//! Pattern matrices over region sets, and the usefulness search of Maranget's
//! "Warnings for pattern matching" (the algorithm behind rustc's match
//! checking), with region sets in place of constructors.
//!
//! A *row* has one cell per column: the set of that column's regions it
//! accepts. A condition becomes a disjunction of rows (its DNF; negation of a
//! single-column test is a complement, so it stays exact). A row `q` is
//! *useful* against a matrix `P` when some vector of regions lies in `q` and
//! in no row of `P`. The search splits the first column into the classes of
//! regions that the rows of `P` cannot tell apart — the analogue of splitting
//! a type into its constructors, or a range into the sub-ranges its patterns
//! delimit — specializes `P` to the rows containing each class, and recurses.
//! Rows that leave a column unconstrained form a single class, so arguments a
//! pattern does not mention cost nothing.

use super::Inconclusive;
use crate::ir::Cond;

/// A set of regions of one column.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Bits(Vec<u64>);

impl Bits {
    /// No region of a column with `n` regions.
    pub fn empty(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }

    /// Every region of a column with `n` regions.
    pub fn full(n: usize) -> Bits {
        let mut b = Bits::empty(n);
        (0..n).for_each(|i| b.insert(i));
        b
    }

    /// Adds region `i`.
    pub fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    /// Whether region `i` is in.
    pub fn contains(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }

    /// Whether no region is in.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }

    /// The regions in both.
    pub fn and(&self, other: &Bits) -> Bits {
        Bits(self.0.iter().zip(&other.0).map(|(a, b)| a & b).collect())
    }

    /// The regions in `self` and not in `other`.
    pub fn minus(&self, other: &Bits) -> Bits {
        Bits(self.0.iter().zip(&other.0).map(|(a, b)| a & !b).collect())
    }

    /// Whether some region is in both.
    pub fn intersects(&self, other: &Bits) -> bool {
        self.0.iter().zip(&other.0).any(|(a, b)| a & b != 0)
    }

    /// The regions in, in order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &word)| {
            (0..64)
                .filter(move |b| word & (1 << b) != 0)
                .map(move |b| w * 64 + b)
        })
    }
}

/// One conjunction: a region set per column.
pub type Row = Vec<Bits>;

/// Work counters: one for the tool's search (every step and every row built
/// costs one unit), one for the whole run (search steps, string-automaton
/// transitions and DFA construction), so a file of many hostile tools ends
/// in bounded time too.
///
/// A tool analysed apart from the run (on another thread) gets a *traced*
/// budget: `run_left` is only a cap on its own work, and what it charges the
/// run is written down, to be settled in tool order by a [`Ledger`] exactly
/// as a loop over the tools would have charged it.
pub struct Budget {
    left: u64,
    run_left: u64,
    trace: Option<Vec<Charge>>,
}

/// What a tool analysed apart charged the run's budget, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Charge {
    /// Work units (consecutive charges added up).
    Run(u64),
    /// The DFA of a pattern was needed; the first tool to need it (in tool
    /// order) pays `bytes` for building it.
    Dfa(String, u64),
    /// The tool's own budget ran out here: the end of the trace.
    ToolSpent,
    /// The cap ran out here: the run's budget would have, at the latest.
    RunSpent,
}

impl Budget {
    /// A budget of `units` for one tool, within `run_left` for the run.
    pub fn new(units: u64, run_left: u64) -> Budget {
        Budget {
            left: units,
            run_left,
            trace: None,
        }
    }

    /// A traced budget of `units` for one tool analysed apart, doing at
    /// most `cap` units of the run's work (the whole run's budget, or 0
    /// once it is known to be spent before this tool).
    pub fn traced(units: u64, cap: u64) -> Budget {
        Budget {
            left: units,
            run_left: cap,
            trace: Some(Vec::new()),
        }
    }

    /// Whether this budget is traced ([`Budget::traced`]).
    pub fn is_traced(&self) -> bool {
        self.trace.is_some()
    }

    /// The charges of a traced budget (empty otherwise).
    pub fn into_trace(self) -> Vec<Charge> {
        self.trace.unwrap_or_default()
    }

    fn note(&mut self, charge: Charge) {
        if let Some(trace) = &mut self.trace {
            match (trace.last_mut(), charge) {
                (Some(Charge::Run(sum)), Charge::Run(n)) => *sum = sum.saturating_add(n),
                (_, charge) => trace.push(charge),
            }
        }
    }

    /// What is left of the run's budget.
    pub fn run_left(&self) -> u64 {
        self.run_left
    }

    /// Spends `n` search units, failing once none are left.
    pub fn spend(&mut self, n: u64) -> Result<(), Inconclusive> {
        match self.left.checked_sub(n) {
            Some(left) => {
                self.left = left;
                self.spend_run(n)
            }
            None => {
                self.note(Charge::ToolSpent);
                Err(Inconclusive(
                    "the search budget ran out before the analysis finished".to_string(),
                ))
            }
        }
    }

    /// Spends `n` units of the run's budget only.
    pub fn spend_run(&mut self, n: u64) -> Result<(), Inconclusive> {
        match self.run_left.checked_sub(n) {
            Some(left) => {
                self.run_left = left;
                self.note(Charge::Run(n));
                Ok(())
            }
            None => {
                self.run_left = 0;
                self.note(Charge::RunSpent);
                Err(run_spent())
            }
        }
    }

    /// Notes, on a traced budget, that the DFA of `pattern` (`bytes` to
    /// build) was needed.
    pub fn note_dfa(&mut self, pattern: &str, bytes: u64) {
        self.note(Charge::Dfa(pattern.to_string(), bytes));
    }
}

/// Why a tool's analysis stopped when the run's budget ran out.
pub fn run_spent() -> Inconclusive {
    Inconclusive(
        "the analysis budget of this run is spent (the rules hold too many hard patterns)"
            .to_string(),
    )
}

/// The run's budget, charged tool by tool in order with the traces of tools
/// analysed apart: the same verdicts, to the unit, as one [`Budget`] passed
/// from tool to tool.
pub struct Ledger {
    run_left: u64,
    built: std::collections::HashSet<String>,
}

impl Ledger {
    /// A run's budget of `units`.
    pub fn new(units: u64) -> Ledger {
        Ledger {
            run_left: units,
            built: std::collections::HashSet::new(),
        }
    }

    /// What is left.
    pub fn run_left(&self) -> u64 {
        self.run_left
    }

    /// Charges the next tool's `trace`; an error when the run's budget runs
    /// out on the way (the tool's analysis is then inconclusive).
    pub fn settle(&mut self, trace: &[Charge]) -> Result<(), Inconclusive> {
        for charge in trace {
            match charge {
                Charge::Run(n) => self.take(*n)?,
                Charge::Dfa(pattern, bytes) => {
                    if !self.built.contains(pattern) {
                        // As `DfaCache::get`: a build starts only when the
                        // budget could pay the size limit.
                        if self.run_left < super::DFA_SIZE_LIMIT as u64 {
                            self.take(u64::MAX)?;
                        }
                        self.take(*bytes)?;
                        self.built.insert(pattern.clone());
                    }
                }
                Charge::ToolSpent => return Ok(()),
                Charge::RunSpent => {
                    self.run_left = 0;
                    return Err(run_spent());
                }
            }
        }
        Ok(())
    }

    fn take(&mut self, n: u64) -> Result<(), Inconclusive> {
        match self.run_left.checked_sub(n) {
            Some(left) => {
                self.run_left = left;
                Ok(())
            }
            None => {
                self.run_left = 0;
                Err(run_spent())
            }
        }
    }
}

/// How each atom of a condition maps to a column's regions.
pub trait Atoms {
    /// Number of regions per column.
    fn widths(&self) -> &[usize];
    /// For an argument test or presence test: its column and the regions where it holds.
    fn atom(&mut self, cond: &Cond) -> Result<(usize, Bits), Inconclusive>;
}

/// The rows of `cond` (negated when `negate`), in disjunctive normal form.
pub fn dnf(
    cond: &Cond,
    negate: bool,
    atoms: &mut dyn Atoms,
    budget: &mut Budget,
    max_rows: usize,
) -> Result<Vec<Row>, Inconclusive> {
    let full_row =
        |atoms: &dyn Atoms| -> Row { atoms.widths().iter().map(|&n| Bits::full(n)).collect() };
    let rows = match cond {
        Cond::Const(b) => {
            if *b != negate {
                vec![full_row(atoms)]
            } else {
                Vec::new()
            }
        }
        Cond::Not(c) => dnf(c, !negate, atoms, budget, max_rows)?,
        Cond::Present(_) | Cond::Test(..) => {
            let (col, bits) = atoms.atom(cond)?;
            let width = atoms.widths()[col];
            let bits = if negate {
                Bits::full(width).minus(&bits)
            } else {
                bits
            };
            if bits.is_empty() {
                Vec::new()
            } else {
                let mut row = full_row(atoms);
                row[col] = bits;
                vec![row]
            }
        }
        Cond::And(cs) | Cond::Or(cs) => {
            // And under no negation, or Or under negation, is a product.
            let product = matches!(cond, Cond::And(_)) != negate;
            if product {
                let mut acc = vec![full_row(atoms)];
                for c in cs {
                    let part = dnf(c, negate, atoms, budget, max_rows)?;
                    let mut next = Vec::new();
                    for a in &acc {
                        for p in &part {
                            budget.spend(1)?;
                            let row: Row = a.iter().zip(p).map(|(x, y)| x.and(y)).collect();
                            if row.iter().all(|b| !b.is_empty()) && !next.contains(&row) {
                                next.push(row);
                            }
                        }
                    }
                    if next.len() > max_rows {
                        return Err(too_many(max_rows));
                    }
                    acc = next;
                    if acc.is_empty() {
                        break;
                    }
                }
                acc
            } else {
                let mut acc: Vec<Row> = Vec::new();
                for c in cs {
                    for row in dnf(c, negate, atoms, budget, max_rows)? {
                        if !acc.contains(&row) {
                            acc.push(row);
                        }
                    }
                    if acc.len() > max_rows {
                        return Err(too_many(max_rows));
                    }
                }
                acc
            }
        }
    };
    Ok(rows)
}

fn too_many(max_rows: usize) -> Inconclusive {
    Inconclusive(format!(
        "a condition expands to more than {max_rows} alternatives"
    ))
}

/// What a usefulness search found.
pub enum Found {
    /// A vector of regions, one per column, that `accept` approved.
    Witness,
    /// No vector: `rejected` counts candidates the caller's check turned down.
    Nothing { rejected: u32 },
}

/// Searches for a vector of regions in `q` and in no row of `matrix` that
/// `accept` approves; candidates `accept` turns down are skipped.
pub fn useful(
    matrix: &[&Row],
    q: &Row,
    budget: &mut Budget,
    accept: &mut dyn FnMut(&[usize]) -> bool,
) -> Result<Found, Inconclusive> {
    let mut search = Search {
        q,
        budget,
        accept,
        partial: Vec::with_capacity(q.len()),
        rejected: 0,
    };
    if search.go(matrix.to_vec(), 0)? {
        Ok(Found::Witness)
    } else {
        Ok(Found::Nothing {
            rejected: search.rejected,
        })
    }
}

struct Search<'a, 'b> {
    q: &'a Row,
    budget: &'b mut Budget,
    accept: &'b mut dyn FnMut(&[usize]) -> bool,
    partial: Vec<usize>,
    rejected: u32,
}

impl<'r> Search<'_, '_> {
    fn go(&mut self, rows: Vec<&'r Row>, col: usize) -> Result<bool, Inconclusive> {
        self.budget.spend(1 + rows.len() as u64)?;
        if col == self.q.len() {
            if !rows.is_empty() {
                return Ok(false);
            }
            if (self.accept)(&self.partial) {
                return Ok(true);
            }
            self.rejected += 1;
            // A rejected candidate costs as much as a small search.
            self.budget.spend(64)?;
            return Ok(false);
        }
        let cell = &self.q[col];
        let live: Vec<&'r Row> = rows
            .into_iter()
            .filter(|r| r[col].intersects(cell))
            .collect();
        // Group the cell's regions by the rows containing them: one class each.
        let mut classes: Vec<(usize, Vec<usize>)> = Vec::new();
        let mut index: std::collections::HashMap<Vec<usize>, usize> = Default::default();
        for region in cell.iter() {
            let members: Vec<usize> = (0..live.len())
                .filter(|&k| live[k][col].contains(region))
                .collect();
            if !index.contains_key(&members) {
                index.insert(members.clone(), classes.len());
                classes.push((region, members));
            }
        }
        self.budget.spend(classes.len() as u64)?;
        // Classes covered by fewer rows first: they are likelier to be useful.
        classes.sort_by_key(|(region, members)| (members.len(), *region));
        for (region, members) in classes {
            let sub: Vec<&'r Row> = members.iter().map(|&k| live[k]).collect();
            self.partial.push(region);
            if self.go(sub, col + 1)? {
                return Ok(true);
            }
            self.partial.pop();
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn cell(n: usize, regions: &[usize]) -> Bits {
        let mut b = Bits::empty(n);
        regions.iter().for_each(|&i| b.insert(i));
        b
    }

    #[test]
    fn finds_the_uncovered_corner() {
        // Two columns of two regions; rows cover (0,*) and (1,0).
        let r1 = vec![cell(2, &[0]), cell(2, &[0, 1])];
        let r2 = vec![cell(2, &[1]), cell(2, &[0])];
        let q = vec![Bits::full(2), Bits::full(2)];
        let mut budget = Budget::new(1000, u64::MAX);
        let mut seen = Vec::new();
        let found = useful(&[&r1, &r2], &q, &mut budget, &mut |w| {
            seen = w.to_vec();
            true
        })
        .unwrap();
        assert!(matches!(found, Found::Witness));
        assert_eq!(seen, vec![1, 1]);
        let r3 = vec![cell(2, &[1]), cell(2, &[1])];
        assert!(matches!(
            useful(&[&r1, &r2, &r3], &q, &mut budget, &mut |_| true).unwrap(),
            Found::Nothing { rejected: 0 }
        ));
    }

    #[test]
    fn rejected_candidates_are_counted_and_the_budget_is_enforced() {
        let q = vec![Bits::full(3)];
        let mut budget = Budget::new(10_000, u64::MAX);
        assert!(matches!(
            useful(&[], &q, &mut budget, &mut |_| false).unwrap(),
            Found::Nothing { rejected: 1 }
        ));
        let mut tiny = Budget::new(1, u64::MAX);
        assert!(
            useful(
                &[],
                &vec![Bits::full(3), Bits::full(3)],
                &mut tiny,
                &mut |_| true
            )
            .is_err()
        );
    }
}
