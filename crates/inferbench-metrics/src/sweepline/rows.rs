//! What the sweep reads of each record: rows from a list of [`SweepRecord`]s, or from the
//! compact form a run keeps while it folds ([`CompactSweep`]) with the pooled gaps.

use super::SweepRecord;

/// A record's inter-chunk gaps, ns: a record's own list, or its slice of a phase's pooled
/// `inter_chunk_latency` values (integers below 2⁵³, so the f64 holds them exactly).
#[derive(Clone, Copy)]
pub(super) enum Gaps<'a> {
    Ns(&'a [u64]),
    Pooled(&'a [f64]),
    /// Still encoded: `n` values of the pooled column's encoding ([`crate::column`]).
    Encoded(&'a [u8], usize),
}

impl<'a> Gaps<'a> {
    pub(super) fn len(self) -> usize {
        match self {
            Gaps::Ns(v) => v.len(),
            Gaps::Pooled(v) => v.len(),
            Gaps::Encoded(_, n) => n,
        }
    }

    pub(super) fn is_empty(self) -> bool {
        self.len() == 0
    }

    pub(super) fn iter(self) -> GapIter<'a> {
        match self {
            Gaps::Ns(v) => GapIter::Ns(v.iter()),
            Gaps::Pooled(v) => GapIter::Pooled(v.iter()),
            Gaps::Encoded(b, n) => GapIter::Encoded(crate::column::decode(b).take(n)),
        }
    }
}

/// The gaps of one [`Gaps`], in order, as integer ns.
pub(super) enum GapIter<'a> {
    Ns(std::slice::Iter<'a, u64>),
    Pooled(std::slice::Iter<'a, f64>),
    Encoded(std::iter::Take<crate::column::ColumnIter<'a>>),
}

impl Iterator for GapIter<'_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        match self {
            GapIter::Ns(it) => it.next().copied(),
            // A decoded value converts as the pooled f64 does.
            GapIter::Pooled(it) => it.next().map(|&v| v as u64),
            GapIter::Encoded(it) => it.next().map(|v| v as u64),
        }
    }
}

/// A record's instants and token counts as AIPerf's accumulator holds them (float64).
#[derive(Clone, Copy)]
pub(super) struct Row<'a> {
    pub(super) s: f64,
    pub(super) g: Option<f64>,
    pub(super) e: f64,
    pub(super) i: Option<f64>,
    pub(super) o: Option<u64>,
    pub(super) icl: Gaps<'a>,
}

/// The phase's records, walked once per curve (never copied into a list of rows).
pub(super) trait Rows {
    fn rows(&self) -> Box<dyn Iterator<Item = Row<'_>> + '_> {
        self.rows_from(0)
    }

    /// The rows from the `i`-th on (none past the last).
    fn rows_from(&self, i: usize) -> Box<dyn Iterator<Item = Row<'_>> + '_>;
}

impl Rows for [SweepRecord] {
    fn rows_from(&self, i: usize) -> Box<dyn Iterator<Item = Row<'_>> + '_> {
        Box::new(self[i.min(self.len())..].iter().map(|r| Row {
            s: r.s as f64,
            g: r.g.map(|g| g as f64),
            e: r.e as f64,
            i: r.i.map(|i| i as f64),
            o: r.o,
            icl: Gaps::Ns(&r.icl),
        }))
    }
}

/// A phase's sweep records kept compactly while a run folds (56 bytes a record): the gaps
/// are not copied but found in the phase's pooled `inter_chunk_latency` values, which hold
/// every record's gaps in record order.
#[derive(Clone, Debug, Default)]
pub struct CompactSweep {
    rows: Vec<Packed>,
    /// Total gaps so far: where the next record's gaps start in the pooled values.
    gaps: u64,
}

/// `u64::MAX` stands for None.
#[derive(Clone, Copy, Debug)]
struct Packed {
    s: u64,
    g: u64,
    e: u64,
    i: u64,
    o: u64,
    gap_start: u64,
    gaps: u32,
}

const NONE: u64 = u64::MAX;

impl CompactSweep {
    /// One record; `gaps` is how many inter-chunk gaps it added to the pooled values.
    pub fn push(
        &mut self,
        s: u64,
        g: Option<u64>,
        e: u64,
        i: Option<u64>,
        o: Option<u64>,
        gaps: usize,
    ) {
        self.rows.push(Packed {
            s,
            g: g.unwrap_or(NONE),
            e,
            i: i.unwrap_or(NONE),
            o: o.unwrap_or(NONE),
            gap_start: self.gaps,
            gaps: gaps as u32,
        });
        self.gaps += gaps as u64;
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Whether any record has gaps (AIPerf's ICL-aware switch).
    pub fn has_gaps(&self) -> bool {
        self.gaps > 0
    }

    /// Moves the last record to `to`, its gaps copied from `gaps` (this sweep's pooled
    /// values) to the end of `to_gaps` (`to`'s).
    pub fn move_last(&mut self, gaps: &[f64], to: &mut CompactSweep, to_gaps: &mut Vec<f64>) {
        let Some(r) = self.rows.last() else {
            return;
        };
        let a = (r.gap_start as usize).min(gaps.len());
        let b = (a + r.gaps as usize).min(gaps.len());
        self.move_last_with(&gaps[a..b], to, to_gaps);
    }

    /// [`CompactSweep::move_last`] with the last record's own gaps given (`last`: the values
    /// it added; ignored when it added none).
    pub fn move_last_with(&mut self, last: &[f64], to: &mut CompactSweep, to_gaps: &mut Vec<f64>) {
        let Some(r) = self.rows.pop() else {
            return;
        };
        self.gaps -= u64::from(r.gaps);
        let n = (r.gaps as usize).min(last.len());
        to_gaps.extend_from_slice(&last[last.len() - n..]);
        to.rows.push(Packed {
            gap_start: to.gaps,
            ..r
        });
        to.gaps += u64::from(r.gaps);
    }
}

pub(super) struct PooledRows<'a> {
    pub(super) sweep: &'a CompactSweep,
    pub(super) gaps: &'a [f64],
}

impl Packed {
    /// The row this record reads as, with its gaps.
    fn row<'a>(&self, icl: Gaps<'a>) -> Row<'a> {
        let opt = |v: u64| (v != NONE).then_some(v);
        Row {
            s: self.s as f64,
            g: opt(self.g).map(|g| g as f64),
            e: self.e as f64,
            i: opt(self.i).map(|i| i as f64),
            o: opt(self.o),
            icl,
        }
    }
}

impl Rows for PooledRows<'_> {
    fn rows_from(&self, i: usize) -> Box<dyn Iterator<Item = Row<'_>> + '_> {
        let rows = &self.sweep.rows[i.min(self.sweep.rows.len())..];
        Box::new(rows.iter().map(move |r| {
            let a = (r.gap_start as usize).min(self.gaps.len());
            let b = (a + r.gaps as usize).min(self.gaps.len());
            r.row(Gaps::Pooled(&self.gaps[a..b]))
        }))
    }
}

/// [`PooledRows`] with the pooled gaps left in their column's encoding (1 to 4 bytes a gap
/// instead of 8), walked in step with the rows: each record's gaps follow the previous
/// record's, which [`ColumnRows::new`] checks.
pub(super) struct ColumnRows<'a> {
    sweep: &'a CompactSweep,
    bytes: &'a [u8],
    /// Where each record's gaps end in `bytes`, found once: every curve walks the rows, and
    /// finding a record's gaps by decoding the ones before them on every walk was the
    /// largest part of a 100,000-request run's sweep. `None` past 4 GiB of gaps, which are
    /// then found by decoding as before.
    ends: Option<Vec<u32>>,
}

impl<'a> ColumnRows<'a> {
    /// None unless the records' gaps are the column's values in order, each record's after
    /// the previous one's, and all of them.
    pub(super) fn new(sweep: &'a CompactSweep, gaps: &'a crate::column::Column) -> Option<Self> {
        let mut next = 0u64;
        for r in &sweep.rows {
            if r.gap_start != next {
                return None;
            }
            next += u64::from(r.gaps);
        }
        if next != gaps.len() as u64 {
            return None;
        }
        let bytes = gaps.encoded();
        let ends = u32::try_from(bytes.len()).ok().map(|_| {
            let mut at = 0usize;
            sweep
                .rows
                .iter()
                .map(|r| {
                    at = crate::column::skip(bytes, at.min(bytes.len()), r.gaps as usize);
                    at.min(bytes.len()) as u32
                })
                .collect()
        });
        Some(ColumnRows { sweep, bytes, ends })
    }
}

impl Rows for ColumnRows<'_> {
    fn rows_from(&self, i: usize) -> Box<dyn Iterator<Item = Row<'_>> + '_> {
        let bytes = self.bytes;
        let i = i.min(self.sweep.rows.len());
        if let Some(ends) = &self.ends {
            let from = if i == 0 { 0 } else { ends[i - 1] as usize };
            return Box::new(self.sweep.rows[i..].iter().zip(&ends[i..]).scan(
                from,
                move |a, (r, &b)| {
                    let (from, to) = (*a, b as usize);
                    *a = to;
                    Some(r.row(Gaps::Encoded(&bytes[from..to], r.gaps as usize)))
                },
            ));
        }
        let mut at = 0usize;
        let all = self.sweep.rows.iter().map(move |r| {
            let a = at.min(bytes.len());
            at = crate::column::skip(bytes, a, r.gaps as usize);
            let b = at.min(bytes.len());
            r.row(Gaps::Encoded(&bytes[a..b], r.gaps as usize))
        });
        Box::new(all.skip(i))
    }
}
