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
    pub(super) fn from_source<I: Iterator<Item = (f64, f64)>>(ev: impl Fn() -> I) -> Curve {
        // A short list (every curve of a run below about 30,000 requests of 16 streamed tokens)
        // is walked once.
        let mut head: Vec<(f64, f64)> = Vec::new();
        let mut it = ev();
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
        for (t, _) in ev() {
            range.add(t);
        }
        let Some((k, bucket)) = range.buckets() else {
            return Curve::from_events(ev().collect());
        };
        let mut sweep = Sweep::default();
        let mut b: Vec<(f64, f64)> = Vec::new();
        for j in 0..k {
            b.clear();
            b.extend(ev().filter(|e| bucket(e.0) == j));
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
    pub(super) fn from_intervals<I: Iterator<Item = (f64, f64, f64)>>(iv: impl Fn() -> I) -> Curve {
        let mut head: Vec<(f64, f64)> = Vec::new();
        let mut ends: Vec<(f64, f64)> = Vec::new();
        for (a, b, w) in iv() {
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
        for (a, b, _) in iv() {
            range.add(a);
            range.add(b);
        }
        let Some((k, bucket)) = range.buckets() else {
            let mut all: Vec<(f64, f64)> = iv().map(|(a, _, w)| (a, w)).collect();
            all.extend(iv().map(|(_, b, w)| (b, -w)));
            return Curve::from_events(all);
        };
        let mut sweep = Sweep::default();
        let mut bk: Vec<(f64, f64)> = Vec::new();
        for j in 0..k {
            bk.clear();
            ends.clear();
            for (a, b, w) in iv() {
                if bucket(a) == j {
                    bk.push((a, w));
                }
                if bucket(b) == j {
                    ends.push((b, -w));
                }
            }
            bk.append(&mut ends);
            sweep.bucket(&mut bk);
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

    /// How many time buckets of about [`BUCKET_EVENTS`] events, and an instant's bucket;
    /// `None` when the instants do not span a finite, positive range (the list is then
    /// swept whole).
    fn buckets(&self) -> Option<(usize, impl Fn(f64) -> usize + use<>)> {
        let (lo, span) = (self.lo, self.hi - self.lo);
        if !(self.finite && span > 0.0 && span.is_finite()) {
            return None;
        }
        let k = self.n.div_ceil(BUCKET_EVENTS);
        // Monotone in t: a rounded subtraction, division and product of positive numbers
        // never reverse an order, and the clamp keeps the last instant in the last bucket.
        Some((k, move |t: f64| {
            (((t - lo) / span * k as f64) as usize).min(k - 1)
        }))
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
            let by_pass = Curve::from_intervals(|| iv.iter().copied());
            let by_list = Curve::from_source(|| {
                iv.iter()
                    .map(|&(a, _, w)| (a, w))
                    .chain(iv.iter().map(|&(_, b, w)| (b, -w)))
            });
            prop_assert_eq!(bits(&by_pass), bits(&by_list));
        }
    }
}
