//! Building a [`Curve`] from its events: sorted and swept whole, or, for a long list, in
//! time buckets that are collected, sorted and swept one at a time.

use super::Curve;
use super::radix::sort_events;

impl Curve {
    /// Sweep events (t, δ) into a curve, as AIPerf's event sweep does, reusing the event
    /// vector's memory for the curve.
    pub(super) fn from_events(mut ev: Vec<(f64, f64)>) -> Curve {
        if ev.is_empty() {
            return Curve::default();
        }
        sort_events(&mut ev);
        // Running values in place, the last event at an instant giving the value there.
        let mut run = 0.0;
        let mut m = 0.0f64;
        let mut w = 0usize;
        for r in 0..ev.len() {
            let (t, d) = ev[r];
            run += d;
            m = m.max(run.abs());
            if w > 0 && ev[w - 1].0 == t {
                ev[w - 1].1 = run;
            } else {
                ev[w] = (t, run);
                w += 1;
            }
        }
        ev.truncate(w);
        snap(&mut ev, m);
        ev.shrink_to_fit();
        Curve { p: ev }
    }

    /// The curve of the events `ev()` yields, in list order. A long list (a streaming run's
    /// chunk events: tens of millions at a million requests) is never held whole: its
    /// instants' range is cut into equal time buckets of about [`BUCKET_EVENTS`] events, and
    /// each bucket is collected (in list order), sorted and swept in turn, the running value
    /// carried over. The bucket of an instant never decreases with the instant and equal
    /// instants share one, so the buckets in order are the whole sorted list in order: the
    /// curve is the same, bit for bit, as [`Curve::from_events`] of the whole list, and
    /// memory is the curve plus one bucket instead of the list plus the sort's scratch
    /// (half the list again). A long list's `ev` is called twice more than there are buckets
    /// (its start, then its range).
    pub(super) fn from_source<I: Iterator<Item = (f64, f64)>>(ev: impl Fn(Pass) -> I) -> Curve {
        // A short list (every curve of a run below about 30,000 requests of 16 streamed tokens)
        // is walked once.
        let mut head: Vec<(f64, f64)> = Vec::new();
        let mut it = ev(Pass::ALL);
        for e in it.by_ref() {
            head.push(e);
            if head.len() > BUCKET_EVENTS {
                break;
            }
        }
        if head.len() <= BUCKET_EVENTS {
            return Curve::from_events(head);
        }
        drop((head, it));
        let mut range = Range::default();
        for (t, _) in ev(Pass::ALL) {
            range.add(t);
        }
        let Some(bk) = range.buckets() else {
            return Curve::from_events(ev(Pass::ALL).collect());
        };
        let mut sweep = Sweep::default();
        let mut b: Vec<(f64, f64)> = Vec::new();
        for j in 0..bk.k {
            b.clear();
            b.extend(ev(bk.pass(j)).filter(|e| bk.of(e.0) == j));
            sweep.bucket(&mut b);
        }
        sweep.finish()
    }

    /// Intervals (a, b, w): the events every (a, +w) in list order, then every (b, −w), as
    /// [`Curve::from_source`] of that list would take them, bit for bit. The intervals are
    /// generated again on each pass, never held as a list of their own, and each pass
    /// generates them once: the (b, −w) events it keeps wait in a list of their own until
    /// the pass's (a, +w) ones are in (generating the intervals, which for the per-gap curve
    /// decodes every record's gaps, was the largest part of a 100,000-request run's sweep).
    pub(super) fn from_intervals<I: Iterator<Item = (f64, f64, f64)>>(
        iv: impl Fn(Pass) -> I,
    ) -> Curve {
        let mut head: Vec<(f64, f64)> = Vec::new();
        let mut ends: Vec<(f64, f64)> = Vec::new();
        for (a, b, w) in iv(Pass::ALL) {
            head.push((a, w));
            ends.push((b, -w));
            if head.len() + ends.len() > BUCKET_EVENTS {
                break;
            }
        }
        if head.len() + ends.len() <= BUCKET_EVENTS {
            head.append(&mut ends);
            return Curve::from_events(head);
        }
        drop(head);
        ends = Vec::new();
        let mut range = Range::default();
        for (a, b, _) in iv(Pass::ALL) {
            range.add(a);
            range.add(b);
        }
        let Some(bk) = range.buckets() else {
            let mut all: Vec<(f64, f64)> = iv(Pass::ALL).map(|(a, _, w)| (a, w)).collect();
            all.extend(iv(Pass::ALL).map(|(_, b, w)| (b, -w)));
            return Curve::from_events(all);
        };
        let mut sweep = Sweep::default();
        let mut list: Vec<(f64, f64)> = Vec::new();
        for j in 0..bk.k {
            list.clear();
            ends.clear();
            for (a, b, w) in iv(bk.pass(j)) {
                if bk.of(a) == j {
                    list.push((a, w));
                }
                if bk.of(b) == j {
                    ends.push((b, -w));
                }
            }
            list.append(&mut ends);
            sweep.bucket(&mut list);
        }
        sweep.finish()
    }
}

/// A long list's instants: how many, their range, whether all are finite.
struct Range {
    n: usize,
    lo: f64,
    hi: f64,
    finite: bool,
}

impl Default for Range {
    fn default() -> Self {
        Range {
            n: 0,
            lo: f64::INFINITY,
            hi: f64::NEG_INFINITY,
            finite: true,
        }
    }
}

impl Range {
    fn add(&mut self, t: f64) {
        self.n += 1;
        self.finite &= t.is_finite();
        self.lo = self.lo.min(t);
        self.hi = self.hi.max(t);
    }

    /// Time buckets of about [`BUCKET_EVENTS`] events; `None` when the instants do not
    /// span a finite, positive range (the list is then swept whole).
    fn buckets(&self) -> Option<Buckets> {
        let (lo, span) = (self.lo, self.hi - self.lo);
        if !(self.finite && span > 0.0 && span.is_finite()) {
            return None;
        }
        let k = self.n.div_ceil(BUCKET_EVENTS);
        Some(Buckets { lo, span, k })
    }
}

/// A long curve's instants cut into `k` equal time buckets.
#[derive(Clone, Copy, Debug)]
pub(super) struct Buckets {
    lo: f64,
    span: f64,
    k: usize,
}

impl Buckets {
    /// An instant's bucket. Monotone in t: a rounded subtraction, division and product of
    /// positive numbers never reverse an order, a negative value casts to 0, and the clamp
    /// keeps the last instant in the last bucket.
    fn of(&self, t: f64) -> usize {
        (((t - self.lo) / self.span * self.k as f64) as usize).min(self.k - 1)
    }

    fn pass(self, j: usize) -> Pass {
        Pass(Some((self, j)))
    }
}

/// What a walk over the records must yield for one pass of a curve's construction: every
/// event, or those of one time bucket. The builders keep a pass's events, in list order, and
/// drop the rest, so a walk may leave out any record none of whose events falls in the
/// pass's bucket: see [`Pass::range`].
#[derive(Clone, Copy, Debug)]
pub(super) struct Pass(Option<(Buckets, usize)>);

impl Pass {
    /// Every event.
    pub(super) const ALL: Pass = Pass(None);

    pub(super) fn is_all(&self) -> bool {
        self.0.is_none()
    }

    /// The records a pass needs, as an index range, from each record's least and greatest
    /// instant: `max_hi[i]` the greatest instant of records 0..=i, `min_lo[i]` the least of
    /// records i.. (both never decrease with i). An instant's bucket never decreases with
    /// the instant, so a record before the range has every instant in an earlier bucket and
    /// one after it every instant in a later one. Records are kept in completion order, which
    /// is close to time order, so a bucket's range is about its own records.
    pub(super) fn range(&self, max_hi: &[f64], min_lo: &[f64]) -> std::ops::Range<usize> {
        match self.0 {
            None => 0..max_hi.len(),
            Some((b, j)) => {
                let from = max_hi.partition_point(|&t| b.of(t) < j);
                let to = min_lo.partition_point(|&t| b.of(t) <= j);
                from..to.max(from)
            }
        }
    }
}

/// The running sweep of a long list's buckets, in time order.
#[derive(Default)]
struct Sweep {
    p: Vec<(f64, f64)>,
    run: f64,
    m: f64,
}

impl Sweep {
    /// One bucket's events, in list order (sorted here).
    fn bucket(&mut self, b: &mut [(f64, f64)]) {
        sort_events(b);
        for &(t, d) in b.iter() {
            self.run += d;
            self.m = self.m.max(self.run.abs());
            match self.p.last_mut() {
                Some(last) if last.0 == t => last.1 = self.run,
                _ => self.p.push((t, self.run)),
            }
        }
    }

    fn finish(mut self) -> Curve {
        snap(&mut self.p, self.m);
        self.p.shrink_to_fit();
        Curve { p: self.p }
    }
}

/// Events per bucket above which [`Curve::from_source`] builds bucket by bucket (16 MiB of
/// events): the radix sort's limit (`radix::LARGE`), so that a bucket of average size is
/// radix-sorted (a 40,000-request streamed run's per-gap curve, 1.2 million events, took the
/// comparison sort whole: 8 % of that run's sweep). Small in the unit tests, so that the
/// oracle comparison crosses many buckets.
pub(super) const BUCKET_EVENTS: usize = if cfg!(test) { 16 } else { 1 << 20 };

/// Snaps +r/−r cancellation residue to exact 0, relative to the largest running value `m`.
fn snap(p: &mut [(f64, f64)], m: f64) {
    if m > 0.0 {
        for e in p.iter_mut() {
            if e.1.abs() < 1e-9 * m {
                e.1 = 0.0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bits(c: &Curve) -> Vec<(u64, u64)> {
        c.p.iter()
            .map(|&(t, v)| (t.to_bits(), v.to_bits()))
            .collect()
    }

    proptest! {
        /// One pass a bucket gives the curve of the list every (a, +w) then every (b, −w),
        /// bit for bit: instants from a few values (ties), weights whose sums round, lists
        /// short and long (a bucket is 16 events in tests).
        #[test]
        fn intervals_sweep_as_their_event_list(
            iv in prop::collection::vec(
                (0u8..12, 0u8..12, prop::sample::select(vec![1.0, 0.1, 0.2, 1.0 / 3.0, 7.0, 1e-3])),
                0..60,
            )
        ) {
            let iv: Vec<(f64, f64, f64)> = iv
                .into_iter()
                .map(|(a, b, w)| (f64::from(a.min(b)), f64::from(a.max(b)), w))
                .collect();
            let by_pass = Curve::from_intervals(|_| iv.iter().copied());
            let by_list = Curve::from_source(|_| {
                iv.iter()
                    .map(|&(a, _, w)| (a, w))
                    .chain(iv.iter().map(|&(_, b, w)| (b, -w)))
            });
            prop_assert_eq!(bits(&by_pass), bits(&by_list));
        }

        /// A pass never leaves out a record that holds one of its instants: for records in
        /// any order (each a few instants), every record with an instant in bucket j lies in
        /// pass j's range, whatever the buckets, instants outside their range included.
        #[test]
        fn a_pass_keeps_every_record_holding_one_of_its_instants(
            lo in -1e3f64..1e3,
            span in 1e-3f64..1e3,
            k in 1usize..12,
            recs in prop::collection::vec(prop::collection::vec(-2e3f64..2e3, 1..4), 1..30),
        ) {
            let bk = Buckets { lo, span, k };
            let mut max_hi = Vec::new();
            let mut m = f64::NEG_INFINITY;
            for r in &recs {
                m = r.iter().copied().fold(m, f64::max);
                max_hi.push(m);
            }
            let mut min_lo = vec![0.0; recs.len()];
            let mut m = f64::INFINITY;
            for (i, r) in recs.iter().enumerate().rev() {
                m = r.iter().copied().fold(m, f64::min);
                min_lo[i] = m;
            }
            prop_assert_eq!(Pass::ALL.range(&max_hi, &min_lo), 0..recs.len());
            for j in 0..k {
                let range = bk.pass(j).range(&max_hi, &min_lo);
                for (i, r) in recs.iter().enumerate() {
                    if r.iter().any(|&t| bk.of(t) == j) {
                        prop_assert!(range.contains(&i), "record {} of bucket {} outside {:?}", i, j, range);
                    }
                }
            }
        }
    }
}
