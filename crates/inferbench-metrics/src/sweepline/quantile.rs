//! Duration-weighted quantiles of a curve's pieces by radix selection instead of a sort.
//!
//! The sweep's quantile is the value of the first piece, in value order, at which the running
//! sum of durations reaches the share q of their total (see `piece_stats`). A sort makes that
//! exact for any durations, since float sums depend on their order. But a piece's duration is
//! the difference of two instants held as f64 whole nanoseconds, so durations are whole
//! numbers; while their total stays below 2^53 every partial sum of them is exact in any
//! order. Then the answer depends only on the sum of the durations at or below each value,
//! and a few passes of bucket sums find it: the sort's eight passes moving every piece were
//! the largest part of the end-of-run statistics of a streamed run.

/// Bits of the key resolved per pass: two sets of 4,096 sums and counts (96 KiB) on the stack.
const DIGIT: u32 = 12;
const BINS: usize = 1 << DIGIT;

/// At or below this many pieces a pass's bucket is sorted and walked directly.
const SMALL: usize = 64;

/// Whole numbers below this are exact in f64, and so is every sum of them that stays below.
const EXACT: f64 = 9_007_199_254_740_992.0;

use super::radix::total_order_bits as key;

/// The inverse of [`key`].
fn value(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// The quantiles `qs` (ascending) of `pieces` (value, duration) and the durations' total, as
/// a stable sort by value (`total_cmp`) followed by a running sum would give them: for each
/// q, the value of the first piece at which `running / total >= q`, else the largest value.
/// `None` (the caller sorts) unless every duration is a whole number ≥ 0 and their total is
/// below 2^53, and for no pieces.
pub(super) fn weighted_quantiles<const Q: usize>(
    pieces: &[(f64, f64)],
    qs: &[f64; Q],
) -> Option<(f64, [f64; Q])> {
    // A bucket's target is found by a table of u8 (`Select::buckets`).
    const { assert!(Q < 256) };
    let (mut total, mut lo, mut hi) = (0.0f64, u64::MAX, 0u64);
    for &(v, d) in pieces {
        // A whole number survives the trip through i64 (which saturates, so ∞ fails, and
        // NaN is not ≥ 0); `fract` would be a libm call per piece.
        if !(d >= 0.0 && d as i64 as f64 == d) {
            return None;
        }
        total += d;
        let k = key(v);
        lo = lo.min(k);
        hi = hi.max(k);
    }
    if pieces.is_empty() || total >= EXACT {
        return None;
    }
    let mut out = [value(hi); Q];
    let want: Vec<usize> = (0..Q).collect();
    let mut s = Select {
        pieces,
        total,
        qs,
        out: &mut out,
    };
    s.level(&Src::All((lo, hi)), pieces.len(), (lo, hi), 0.0, &want);
    Some((total, out))
}

/// The pieces a pass walks: all of them whose key is in a range (a bucket too large to copy
/// out, so memory stays bounded by the pieces themselves), or a bucket's keys and durations.
enum Src {
    All((u64, u64)),
    Part(Vec<(u64, f64)>),
}

/// A bucket copied out up to this many pieces (or a 64th of its level's, if more): 1 MiB.
/// Small in the unit tests, so that both kinds of bucket are taken.
const GATHER: usize = if cfg!(test) { 8 } else { 1 << 16 };

/// A bucket holding one or more quantiles.
struct Target {
    /// The exact sum of the durations below the bucket.
    below: f64,
    want: Vec<usize>,
    src: Src,
    n: usize,
    range: (u64, u64),
}

struct Select<'a, const Q: usize> {
    pieces: &'a [(f64, f64)],
    total: f64,
    qs: &'a [f64; Q],
    out: &'a mut [f64; Q],
}

impl<const Q: usize> Select<'_, Q> {
    fn each(&self, src: &Src, mut f: impl FnMut(u64, f64)) {
        match src {
            Src::All((lo, hi)) => {
                for &(v, d) in self.pieces {
                    let k = key(v);
                    if (*lo..=*hi).contains(&k) {
                        f(k, d);
                    }
                }
            }
            Src::Part(items) => items.iter().for_each(|&(k, d)| f(k, d)),
        }
    }

    /// Resolves the quantiles `want` among the n pieces of `src` (keys in `lo..=hi`), `below`
    /// being the exact sum of the durations of every piece with a smaller key.
    fn level(&mut self, src: &Src, n: usize, (lo, hi): (u64, u64), below: f64, want: &[usize]) {
        if lo == hi {
            for &i in want {
                self.out[i] = value(lo);
            }
            return;
        }
        if n <= SMALL {
            let mut v: Vec<(u64, f64)> = Vec::with_capacity(n);
            self.each(src, |k, d| v.push((k, d)));
            // Ties may go in any order: the sums are exact, so they reach the same totals.
            v.sort_unstable_by_key(|e| e.0);
            let mut acc = below;
            let mut w = 0;
            for (k, d) in v {
                acc += d;
                while w < want.len() && self.reached(acc, want[w]) {
                    self.out[want[w]] = value(k);
                    w += 1;
                }
            }
            return;
        }
        for t in self.buckets(src, n, (lo, hi), below, want) {
            self.level(&t.src, t.n, t.range, t.below, &t.want);
        }
    }

    /// One pass of bucket sums over `src` and one finding the key range of each bucket where
    /// a wanted quantile is reached (copying out the small ones). Not inlined, so that its
    /// 100 KiB of sums, counts and slots are off the stack before the recursion (up to six deep).
    #[inline(never)]
    fn buckets(
        &self,
        src: &Src,
        n: usize,
        (lo, hi): (u64, u64),
        below: f64,
        want: &[usize],
    ) -> Vec<Target> {
        // The digit just below the highest bit in which the keys differ: every key agrees
        // above it, so the digit orders them, and `lo` and `hi` fall in different buckets.
        let shift = (64 - (lo ^ hi).leading_zeros()).saturating_sub(DIGIT);
        let digit = |k: u64| ((k >> shift) as usize) & (BINS - 1);
        // Two sets of sums, taken in turn: neighbouring pieces of a curve often share a
        // bucket, and one set would make each add wait for the previous one's store. The
        // sums are exact, so how they are split does not matter.
        let mut sums = [[0.0f64; BINS]; 2];
        let mut counts = [[0u32; BINS]; 2];
        let mut half = 0;
        self.each(src, |k, d| {
            let b = digit(k);
            sums[half][b] += d;
            counts[half][b] += 1;
            half ^= 1;
        });
        // The bucket where each wanted quantile is reached, and the sum below that bucket.
        // Quantiles never reached keep the largest value, as after a full walk.
        let gather = GATHER.max(n / 64);
        let mut targets: Vec<(usize, Target)> = Vec::new();
        let mut acc = below;
        let mut w = 0;
        for b in 0..BINS {
            if w == want.len() {
                break;
            }
            let count = counts[0][b] + counts[1][b];
            if count == 0 {
                continue;
            }
            let before = acc;
            acc += sums[0][b] + sums[1][b];
            while w < want.len() && self.reached(acc, want[w]) {
                match targets.last_mut() {
                    Some((bin, t)) if *bin == b => t.want.push(want[w]),
                    _ => {
                        let n = count as usize;
                        let src = if n <= gather {
                            Src::Part(Vec::with_capacity(n))
                        } else {
                            Src::All((lo, hi))
                        };
                        let (below, want, range) = (before, vec![want[w]], (u64::MAX, 0));
                        targets.push((
                            b,
                            Target {
                                below,
                                want,
                                src,
                                n,
                                range,
                            },
                        ));
                    }
                }
                w += 1;
            }
        }
        // Each bucket's target, by table (0: none, else index + 1): at most one per quantile.
        let mut slot = [0u8; BINS];
        for (i, (b, _)) in targets.iter().enumerate() {
            slot[*b] = i as u8 + 1;
        }
        self.each(src, |k, d| {
            let i = slot[digit(k)];
            if i > 0 {
                let t = &mut targets[usize::from(i) - 1].1;
                t.range = (t.range.0.min(k), t.range.1.max(k));
                if let Src::Part(v) = &mut t.src {
                    v.push((k, d));
                }
            }
        });
        targets
            .into_iter()
            .map(|(_, mut t)| {
                if let Src::All(r) = &mut t.src {
                    *r = t.range;
                }
                t
            })
            .collect()
    }

    /// The walk's test, on the same exact running sum: has quantile `i` been reached?
    fn reached(&self, acc: f64, i: usize) -> bool {
        acc / self.total >= self.qs[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The definition: a stable sort by value, then the running sum.
    fn by_sort(pieces: &[(f64, f64)], qs: &[f64; 4]) -> (f64, [f64; 4]) {
        let mut p = pieces.to_vec();
        p.sort_by(|a, b| a.0.total_cmp(&b.0));
        let last = p.iter().fold(0.0, |acc, e| acc + e.1);
        let mut out = [p[p.len() - 1].0; 4];
        let (mut k, mut acc) = (0, 0.0);
        for e in &p {
            acc += e.1;
            while k < 4 && acc / last >= qs[k] {
                out[k] = e.0;
                k += 1;
            }
        }
        (last, out)
    }

    const QS: [f64; 4] = [0.50, 0.90, 0.95, 0.99];

    fn bits(r: (f64, [f64; 4])) -> (u64, [u64; 4]) {
        (r.0.to_bits(), r.1.map(f64::to_bits))
    }

    #[test]
    fn worked_example() {
        // Values 3, 1, 2, 1 lasting 10, 40, 30, 20 (total 100). In value order: 1 (40),
        // 1 (20), 2 (30), 3 (10): running 40, 60, 90, 100. p50 is reached at 60 (value 1),
        // p90 at 90 (value 2), p95 and p99 at 100 (value 3).
        let p = [(3.0, 10.0), (1.0, 40.0), (2.0, 30.0), (1.0, 20.0)];
        assert_eq!(
            weighted_quantiles(&p, &QS),
            Some((100.0, [1.0, 2.0, 3.0, 3.0]))
        );
    }

    #[test]
    fn value_inverts_key() {
        for x in [
            -f64::NAN,
            f64::NEG_INFINITY,
            -1.5,
            -0.0,
            0.0,
            5e-324,
            1e-4,
            f64::NAN,
        ] {
            assert_eq!(value(key(x)).to_bits(), x.to_bits());
        }
    }

    #[test]
    fn fractions_and_huge_totals_are_left_to_the_sort() {
        assert_eq!(weighted_quantiles(&[(1.0, 0.5)], &QS), None);
        assert_eq!(weighted_quantiles(&[(1.0, f64::INFINITY)], &QS), None);
        assert_eq!(weighted_quantiles(&[(1.0, f64::NAN)], &QS), None);
        assert_eq!(weighted_quantiles(&[(1.0, -1.0)], &QS), None);
        assert_eq!(weighted_quantiles(&[(1.0, EXACT / 2.0); 2], &QS), None);
        assert_eq!(weighted_quantiles(&[], &QS), None);
    }

    #[test]
    fn many_pieces_cross_several_passes() {
        // 10,000 pieces, values a few ulps apart around two magnitudes, durations of
        // instants on a 256 ns grid: several passes and the direct walk both decide.
        let p: Vec<(f64, f64)> = (0..10_000u64)
            .map(|i| {
                let v = f64::from_bits(1e-4f64.to_bits() + (i * 7919) % 3000);
                let v = if i % 5 == 0 { v * 1e3 } else { v };
                (v, (256 * (1 + (i * 104_729) % 977)) as f64)
            })
            .collect();
        assert_eq!(
            weighted_quantiles(&p, &QS).map(bits),
            Some(bits(by_sort(&p, &QS)))
        );
    }

    fn value_strategy() -> impl Strategy<Value = f64> {
        prop_oneof![
            (0u64..6).prop_map(|k| k as f64),
            (1u64..3, 0u64..70_000).prop_map(|(b, k)| f64::from_bits((b as f64).to_bits() + k)),
            any::<f64>(),
            prop::sample::select(vec![0.0, -0.0, f64::INFINITY, f64::NAN, -f64::NAN, -1.5]),
        ]
    }

    proptest! {
        #[test]
        fn selection_agrees_with_the_sort(
            p in prop::collection::vec(
                (value_strategy(), prop_oneof![Just(0u64), 1u64..5, 0u64..1 << 40]),
                1..600,
            )
        ) {
            let p: Vec<(f64, f64)> = p.into_iter().map(|(v, d)| (v, d as f64)).collect();
            let got = weighted_quantiles(&p, &QS).expect("whole durations");
            prop_assert_eq!(bits(got), bits(by_sort(&p, &QS)));
        }
    }
}
