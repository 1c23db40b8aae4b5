//! Clock offsets between shards, NTP-style, and the uncertainty they leave on a merged
//! window.
//!
//! One exchange: the shard sends at t1 (its clock), the reference receives at t2 and answers
//! at t3 (its clock), the shard receives at t4. Then the offset θ = ((t2−t1)+(t3−t4))/2 is
//! what to add to the shard's clock to read the reference's, and the delay
//! δ = (t4−t1)−(t3−t2) the round trip less the reference's own time. Whatever the path's
//! asymmetry, the true offset lies within θ ± δ/2, so of K exchanges the one with the least
//! δ is kept (RFC 5905's clock filter) and ε = ⌈δ_min/2⌉ is its bound.
//!
//! Per-request latencies are measured on one host's monotonic clock and carry none of this:
//! only the merged window (and what divides by it) and cross-shard instants do.

use serde::{Deserialize, Serialize};

/// One 4-timestamp exchange (Unix ns; t1, t4 on the shard's clock, t2, t3 on the
/// reference's).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exchange {
    pub t1: u64,
    pub t2: u64,
    pub t3: u64,
    pub t4: u64,
}

impl Exchange {
    /// θ (ns): reference − shard.
    pub fn offset_ns(&self) -> i64 {
        let (t1, t2, t3, t4) = (
            self.t1 as i128,
            self.t2 as i128,
            self.t3 as i128,
            self.t4 as i128,
        );
        // Halved in i128, rounded toward −∞, so the sum cannot overflow.
        clamp_i64(((t2 - t1) + (t3 - t4)).div_euclid(2))
    }

    /// δ (ns): the round trip less the reference's turnaround; 0 when clocks stepped
    /// mid-exchange made it negative.
    pub fn delay_ns(&self) -> u64 {
        let d = (self.t4 as i128 - self.t1 as i128) - (self.t3 as i128 - self.t2 as i128);
        d.clamp(0, u64::MAX as i128) as u64
    }
}

fn clamp_i64(v: i128) -> i64 {
    v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// The kept exchange of a measurement: θ, δ and ε = ⌈δ/2⌉.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct OffsetEstimate {
    /// θ (ns): add to this shard's clock to read the reference's.
    pub offset_ns: i64,
    pub delay_ns: u64,
    pub epsilon_ns: u64,
    /// Exchanges answered (of those sent); the minimum-delay one is kept.
    pub samples: u32,
    /// The reference it was measured against (`HOST:PORT`).
    pub reference: String,
    /// The kept exchange itself.
    pub exchange: Exchange,
}

/// The minimum-δ exchange of `samples` (the first of equals); None when there is none.
pub fn estimate(samples: &[Exchange], reference: &str) -> Option<OffsetEstimate> {
    let best = samples.iter().min_by_key(|e| e.delay_ns())?;
    let delay_ns = best.delay_ns();
    Some(OffsetEstimate {
        offset_ns: best.offset_ns(),
        delay_ns,
        epsilon_ns: delay_ns.div_ceil(2),
        samples: samples.len() as u32,
        reference: reference.to_string(),
        exchange: *best,
    })
}

/// A shard's offset over the run: measured at its start and (when it finished) its end,
/// linear in between (constant drift), with ε the larger of the two bounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OffsetLine {
    /// (shard clock Unix ns, θ) at the start and the end.
    pub start: (u64, i64),
    pub end: (u64, i64),
    /// None: unbounded (no reference and an unsynchronized kernel clock).
    pub epsilon_ns: Option<u64>,
}

impl OffsetLine {
    /// A constant offset.
    pub fn constant(at: u64, offset_ns: i64, epsilon_ns: Option<u64>) -> Self {
        OffsetLine {
            start: (at, offset_ns),
            end: (at, offset_ns),
            epsilon_ns,
        }
    }

    /// θ at shard-clock instant `t` (interpolated between the measurements, held outside).
    pub fn offset_at(&self, t: u64) -> i64 {
        let (t0, o0) = self.start;
        let (t1, o1) = self.end;
        if t1 <= t0 || t <= t0 {
            return o0;
        }
        if t >= t1 {
            return o1;
        }
        let f = (t - t0) as f64 / (t1 - t0) as f64;
        (o0 as f64 + (o1 - o0) as f64 * f).round() as i64
    }

    /// (θ_end − θ_start)/elapsed in ppm; None with one measurement.
    pub fn drift_ppm(&self) -> Option<f64> {
        (self.end.0 > self.start.0)
            .then(|| (self.end.1 - self.start.1) as f64 / (self.end.0 - self.start.0) as f64 * 1e6)
    }

    /// A shard-clock instant in the reference's clock.
    pub fn to_reference(&self, t: u64) -> i128 {
        t as i128 + self.offset_at(t) as i128
    }
}

/// The merged window and its clock bound: W = max_i end_i − min_i start_i (reference clock);
/// only the shard defining the start (a) and the one defining the end (b) move it, so
/// |ΔW| ≤ ε_a + ε_b ≤ 2·max εᵢ.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowBound {
    pub window_ns: u64,
    pub start_shard: usize,
    pub end_shard: usize,
    /// ε_a + ε_b; None when either is unbounded.
    pub bound_ns: Option<u64>,
    /// 2·max εᵢ; None when any is unbounded.
    pub max_bound_ns: Option<u64>,
}

impl WindowBound {
    /// The bound relative to W, in ppm (it bounds every throughput the same way:
    /// |ΔX|/X ≤ |ΔW|/W).
    pub fn ppm(&self) -> Option<f64> {
        let b = self.bound_ns?;
        (self.window_ns > 0).then(|| b as f64 / self.window_ns as f64 * 1e6)
    }
}

/// The window of shards given as (start, end, ε), in the reference's clock; None with no
/// shard. The earliest start and the latest end win; ties go to the lower index.
pub fn window(shards: &[(i128, i128, Option<u64>)]) -> Option<WindowBound> {
    let mut a = 0;
    let mut b = 0;
    for (i, s) in shards.iter().enumerate() {
        if s.0 < shards[a].0 {
            a = i;
        }
        if s.1 > shards[b].1 {
            b = i;
        }
    }
    let (start, end) = (shards.get(a)?.0, shards[b].1);
    let max_eps = shards
        .iter()
        .map(|s| s.2)
        .try_fold(0u64, |m, e| e.map(|e| m.max(e)));
    Some(WindowBound {
        window_ns: (end - start).clamp(0, u64::MAX as i128) as u64,
        start_shard: a,
        end_shard: b,
        bound_ns: shards[a].2.zip(shards[b].2).map(|(x, y)| x + y),
        max_bound_ns: max_eps.map(|m| 2 * m),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An exchange where the reference's clock reads the shard's plus `theta`, the legs take
    /// `out` and `back` ns and the reference holds the request `turn` ns.
    fn exchange(t1: u64, theta: i64, out: u64, turn: u64, back: u64) -> Exchange {
        let t2 = (t1 as i64 + out as i64 + theta) as u64;
        let t3 = t2 + turn;
        let t4 = (t3 as i64 - theta) as u64 + back;
        Exchange { t1, t2, t3, t4 }
    }

    #[test]
    fn symmetric_paths_give_the_offset_exactly() {
        // Reference 7 ms ahead, 100 µs each way, 20 µs inside.
        let e = exchange(1_000_000_000, 7_000_000, 100_000, 20_000, 100_000);
        assert_eq!(e.offset_ns(), 7_000_000);
        assert_eq!(e.delay_ns(), 200_000);
    }

    #[test]
    fn asymmetry_shows_within_half_the_delay() {
        // Out 300 µs, back 100 µs: θ = 7 ms + (300 − 100)/2 µs = 7.1 ms; δ = 400 µs, ε = 200 µs.
        let e = exchange(5_000_000_000, 7_000_000, 300_000, 0, 100_000);
        assert_eq!(e.offset_ns(), 7_100_000);
        let est = estimate(&[e], "r").unwrap();
        assert_eq!((est.delay_ns, est.epsilon_ns), (400_000, 200_000));
        assert!((est.offset_ns - 7_000_000).unsigned_abs() <= est.epsilon_ns);
    }

    #[test]
    fn the_minimum_delay_sample_is_kept() {
        let s = [
            exchange(1_000_000_000, -3_000_000, 900_000, 0, 100_000),
            exchange(1_000_000_010, -3_000_000, 60_000, 5, 40_000),
            exchange(1_000_000_020, -3_000_000, 50_000, 0, 500_000),
        ];
        let est = estimate(&s, "r").unwrap();
        assert_eq!(est.exchange, s[1]);
        // θ = −3 ms + (60 − 40)/2 µs; δ = 100 µs.
        assert_eq!(est.offset_ns, -2_990_000);
        assert_eq!(
            (est.delay_ns, est.epsilon_ns, est.samples),
            (100_000, 50_000, 3)
        );
        assert!(estimate(&[], "r").is_none());
    }

    #[test]
    fn offsets_interpolate_between_start_and_end() {
        // 10 µs of drift over 10 s: 1 ppm.
        let l = OffsetLine {
            start: (1_000_000_000, 2_000_000),
            end: (11_000_000_000, 2_010_000),
            epsilon_ns: Some(50_000),
        };
        assert_eq!(l.offset_at(6_000_000_000), 2_005_000);
        assert_eq!(l.offset_at(0), 2_000_000);
        assert_eq!(l.offset_at(20_000_000_000), 2_010_000);
        assert!((l.drift_ppm().unwrap() - 1.0).abs() < 1e-9);
        assert_eq!(l.to_reference(6_000_000_000), 6_002_005_000);
        assert_eq!(OffsetLine::constant(5, 1, None).drift_ppm(), None);
    }

    #[test]
    fn window_bound_uses_the_edge_shards() {
        // Shard 1 starts first (ε 0.2 ms), shard 2 ends last (ε 0.5 ms); shard 0's 1 ms does
        // not enter ε_a + ε_b, but does enter 2·max ε.
        let w = window(&[
            (1_000, 600_000_000_000, Some(1_000_000)),
            (0, 599_000_000_000, Some(200_000)),
            (500, 600_000_000_100, Some(500_000)),
        ])
        .unwrap();
        assert_eq!(w.window_ns, 600_000_000_100);
        assert_eq!((w.start_shard, w.end_shard), (1, 2));
        assert_eq!(w.bound_ns, Some(700_000));
        assert_eq!(w.max_bound_ns, Some(2_000_000));
        // 0.7 ms on 600 s: 1.1667 ppm (the reference's ±2 ms on 600 s ≈ 3.3 ppm, halved).
        assert!((w.ppm().unwrap() - 700_000.0 / 600_000_000_100.0 * 1e6).abs() < 1e-12);
        let u = window(&[(0, 10, None), (1, 5, Some(3))]).unwrap();
        assert_eq!((u.bound_ns, u.max_bound_ns), (None, None));
        assert!(window(&[]).is_none());
    }

    proptest! {
        /// Any path asymmetry, any offset: the estimate is within its own ε of the truth,
        /// and the kept sample has the least delay.
        #[test]
        fn the_true_offset_lies_within_epsilon(
            theta in -60_000_000_000i64..60_000_000_000,
            legs in proptest::collection::vec((1u64..5_000_000, 0u64..100_000, 1u64..5_000_000), 1..40),
        ) {
            let t1 = 1_800_000_000_000_000_000u64;
            let s: Vec<Exchange> = legs
                .iter()
                .enumerate()
                .map(|(k, &(o, t, b))| exchange(t1 + k as u64 * 1_000_000_000, theta, o, t, b))
                .collect();
            let est = estimate(&s, "r").unwrap();
            prop_assert!((est.offset_ns - theta).unsigned_abs() <= est.epsilon_ns);
            let min = legs.iter().map(|&(o, _, b)| o + b).min().unwrap();
            prop_assert_eq!(est.delay_ns, min);
        }

        /// A window of shards whose clocks err by at most their ε moves by at most ε_a + ε_b.
        #[test]
        fn the_window_moves_by_at_most_the_bound(
            shards in proptest::collection::vec((0i64..1_000_000_000, 1i64..1_000_000_000, 0u64..5_000_000), 1..6),
            errs in proptest::collection::vec(-1.0f64..=1.0, 6),
        ) {
            let truth: Vec<(i128, i128, Option<u64>)> = shards
                .iter()
                .map(|&(s, d, e)| (s as i128, (s + d) as i128, Some(e)))
                .collect();
            let seen: Vec<(i128, i128, Option<u64>)> = truth
                .iter()
                .zip(&errs)
                .map(|(&(s, e, eps), f)| {
                    let err = (eps.unwrap() as f64 * f) as i128;
                    (s + err, e + err, eps)
                })
                .collect();
            let (w_true, w_seen) = (window(&truth).unwrap(), window(&seen).unwrap());
            let diff = (w_true.window_ns as i128 - w_seen.window_ns as i128).unsigned_abs();
            prop_assert!(diff as u64 <= w_seen.max_bound_ns.unwrap());
        }
    }
}
