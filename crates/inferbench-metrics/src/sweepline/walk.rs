//! The records walked for one pass of a curve's construction (build.rs): all of them, or,
//! for a long curve built one time bucket at a time, only those that may hold an event of
//! that bucket. A million-request streamed run cuts its per-gap curves into about thirty
//! buckets; walking every record on every one of those passes was most of the end of such
//! a run. Which records a bucket needs follows from where their instants lie, found once.

use std::cell::OnceCell;

use super::build::Pass;
use super::rows::{Row, Rows};

/// A phase's records and, once a pass needs them, the running extremes of their spans (see
/// [`span`] and [`Pass::range`]).
pub(super) struct Walk<'a, R: ?Sized> {
    src: &'a R,
    bounds: OnceCell<Bounds>,
}

/// `max_hi[i]`: the greatest instant of records 0..=i; `min_lo[i]`: the least of records i..
struct Bounds {
    max_hi: Vec<f64>,
    min_lo: Vec<f64>,
}

impl<'a, R: Rows + ?Sized> Walk<'a, R> {
    pub(super) fn new(src: &'a R) -> Self {
        Walk {
            src,
            bounds: OnceCell::new(),
        }
    }

    /// The records in order, less those `pass` does not need. 16 bytes a record are kept
    /// for that from the first bucketed pass on.
    pub(super) fn rows(&self, pass: Pass) -> Box<dyn Iterator<Item = Row<'a>> + '_> {
        if pass.is_all() {
            return self.src.rows();
        }
        let b = self.bounds.get_or_init(|| {
            let (mut max_hi, mut min_lo) = (Vec::new(), Vec::new());
            let mut m = f64::NEG_INFINITY;
            for r in self.src.rows() {
                let (lo, hi) = span(&r);
                m = m.max(hi);
                max_hi.push(m);
                min_lo.push(lo);
            }
            let mut m = f64::INFINITY;
            for v in min_lo.iter_mut().rev() {
                m = m.min(*v);
                *v = m;
            }
            Bounds { max_hi, min_lo }
        });
        let range = pass.range(&b.max_hi, &b.min_lo);
        Box::new(self.src.rows_from(range.start).take(range.len()))
    }
}

/// The least and the greatest instant any curve takes from the record: S, E and the
/// instant just below E (where a chunk at or after E is moved), G, and each gap's interval
/// G ⊕ cₖ and its start G ⊕ cₖ − vₖ, computed as the curves compute them (mod.rs:
/// `icl_decode_intervals`, `icl_tokens_events`).
pub(super) fn span(r: &Row) -> (f64, f64) {
    // Just below E is below E itself.
    let mut lo = r.s.min(r.e.next_down());
    let mut hi = r.s.max(r.e);
    if let Some(g) = r.g {
        lo = lo.min(g);
        hi = hi.max(g);
        let mut c: u64 = 0;
        for v in r.icl.iter() {
            c += v;
            let end = g + c as f64;
            let start = end - v as f64;
            lo = lo.min(start).min(end);
            hi = hi.max(start).max(end);
        }
    }
    (lo, hi)
}
