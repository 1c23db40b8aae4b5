//! Load shapes: planned send times for request-rate mode, and the concurrency ramp.
//!
//! Pure and deterministic: no clocks, no I/O. A [`RateSchedule`] depends on exactly five
//! inputs: the arrival pattern, the rate, the optional ramp, the run seed and the phase label.
//! There is no dataset input, so changing nothing but the dataset (or the prompts, the
//! tokenizer, the server) cannot move a single planned send time.
//!
//! As in MLPerf LoadGen, the schedule is a sequence of absolute deadlines from the phase
//! start, not relative sleeps, so lateness in issuing one request never shifts the others.
//! `docs/load-shapes.md` gives the exact definitions.

use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp1, Gamma};

use crate::seed::derive_seed;

/// How often the planned rate changes during a request-rate ramp (AIPerf's default
/// `AIPERF_TIMING_RATE_RAMP_UPDATE_INTERVAL` of 0.1 s).
pub const RATE_RAMP_STEP: Duration = Duration::from_millis(100);

const NS_PER_S: f64 = 1e9;

/// The latest planned offset (ns from the phase start, about 292 years): half the u64 ns
/// clock, so that a caller adding the phase start to an offset cannot overflow and fire the
/// request at once. Offsets past it (absurdly low rates, a huge gap) are clamped to it.
pub const MAX_OFFSET_NS: u64 = u64::MAX / 2;

/// Distribution of the gaps between planned sends (AIPerf `--arrival-pattern`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ArrivalPattern {
    /// Every gap is exactly `1 / rate`.
    Constant,
    /// Exponential gaps with mean `1 / rate` (a Poisson process).
    Poisson,
    /// Gamma gaps, shape = `smoothness`, scale = `1 / (rate · smoothness)`, so the mean is
    /// `1 / rate` and the coefficient of variation `1 / √smoothness` (`--arrival-smoothness`:
    /// 1.0 is Poisson-like, < 1 bursty, > 1 smooth).
    Gamma { smoothness: f64 },
}

/// An invalid load-shape parameter; the message names the command-line flag.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScheduleError {
    #[error("{flag} must be a finite number greater than 0, got {value}")]
    Rate { flag: &'static str, value: f64 },
    #[error("--arrival-smoothness must be a finite number greater than 0, got {value}")]
    Smoothness { value: f64 },
    #[error("{flag} must be greater than 0 seconds")]
    RampDuration { flag: &'static str },
    #[error("--concurrency must be at least 1 for a concurrency ramp, got 0")]
    Concurrency,
}

/// A stepwise-linear rate ramp, following AIPerf's rate ramper: the rate is updated every
/// `step_ns`; in step `s` (from `s·step` to `(s+1)·step`) it is
/// `start + (target − start) · s·step / D` with `start = target · min(step, D) / D`.
/// From `D` on the rate is the target.
#[derive(Debug, Clone)]
struct RateRamp {
    dur_ns: u64,
    step_ns: u64,
    start_rate: f64,
    target_rate: f64,
}

impl RateRamp {
    /// Requests per second during step `step`.
    fn rate_in_step(&self, step: u64) -> f64 {
        let progress = step.saturating_mul(self.step_ns) as f64 / self.dur_ns as f64;
        self.start_rate + (self.target_rate - self.start_rate) * progress
    }
}

#[derive(Debug, Clone)]
enum Draw {
    Constant,
    Exp,
    /// Gamma(shape, 1); a draw divided by the shape has mean 1.
    Gamma {
        dist: Gamma<f64>,
        shape: f64,
    },
}

/// The planned send offsets of one phase, in ns from the phase start (an endless iterator).
///
/// The pattern draws gaps in "work" units of mean 1 (expected arrivals); work maps to time
/// through the planned rate, so at the target rate a unit of work lasts `1e9 / rate` ns and
/// during a ramp it lasts `1e9 / r` ns in a step of rate `r` (a time change of the process:
/// an exact non-homogeneous Poisson process for [`ArrivalPattern::Poisson`]). The first
/// offset is 0 unless [`RateSchedule::with_leading_gap`] was called.
#[derive(Debug, Clone)]
pub struct RateSchedule {
    rng: ChaCha8Rng,
    draw: Draw,
    rate: f64,
    ramp: Option<RateRamp>,
    /// Ramp step the position is in (only meaningful while `ramp` is `Some`).
    step: u64,
    /// Position of the last planned send: whole ns plus a fraction in [0, 1). Each addition
    /// then rounds at the scale of one gap, not of the growing offset, so nothing drifts.
    pos_ns: u64,
    pos_frac: f64,
    /// Constant pattern at the target rate: `(origin_ns, origin_frac, k0, x0)`, meaning send
    /// `k ≥ k0` is at `origin + (x0 + (k − k0)) · 1e9 / rate`, computed afresh for each `k`.
    flat_constant: Option<(u64, f64, u64, f64)>,
    emitted: u64,
    leading_gap: bool,
}

impl RateSchedule {
    /// A schedule of `rate` requests/s with `pattern`, optionally ramped up over `ramp`
    /// (`--request-rate-ramp-duration`, in [`RATE_RAMP_STEP`] steps; the rules are in
    /// `docs/load-shapes.md`). Draws come from the named generator
    /// `derive_seed(seed, "arrivals.<phase_label>")`, so warmup and profiling differ.
    /// With `phase_label == "warmup"` errors name the `--warmup-…` flags.
    pub fn new(
        pattern: ArrivalPattern,
        rate: f64,
        ramp: Option<Duration>,
        seed: u64,
        phase_label: &str,
    ) -> Result<Self, ScheduleError> {
        let warmup = phase_label == "warmup";
        if !(rate.is_finite() && rate > 0.0) {
            let flag = if warmup {
                "--warmup-request-rate"
            } else {
                "--request-rate"
            };
            return Err(ScheduleError::Rate { flag, value: rate });
        }
        let draw = match pattern {
            ArrivalPattern::Constant => Draw::Constant,
            ArrivalPattern::Poisson => Draw::Exp,
            ArrivalPattern::Gamma { smoothness } => {
                let invalid = ScheduleError::Smoothness { value: smoothness };
                if !(smoothness.is_finite() && smoothness > 0.0) {
                    return Err(invalid);
                }
                // Scale 1 here and divide by the shape per draw: the same distribution as
                // scale 1/(rate·shape), without 1/shape overflowing for tiny shapes.
                let dist = Gamma::new(smoothness, 1.0).map_err(|_| invalid)?;
                Draw::Gamma {
                    dist,
                    shape: smoothness,
                }
            }
        };
        let ramp = match ramp {
            None => None,
            Some(d) if d.is_zero() => {
                let flag = if warmup {
                    "--warmup-request-rate-ramp-duration"
                } else {
                    "--request-rate-ramp-duration"
                };
                return Err(ScheduleError::RampDuration { flag });
            }
            Some(d) => {
                let dur_ns = duration_ns(d);
                let step_ns = duration_ns(RATE_RAMP_STEP);
                // A ramp shorter than one step starts (and stays) at the target.
                let start_rate = rate * (step_ns.min(dur_ns) as f64 / dur_ns as f64);
                Some(RateRamp {
                    dur_ns,
                    step_ns,
                    start_rate,
                    target_rate: rate,
                })
            }
        };
        let purpose = format!("arrivals.{phase_label}");
        Ok(Self {
            rng: ChaCha8Rng::from_seed(derive_seed(seed, &purpose)),
            draw,
            rate,
            ramp,
            step: 0,
            pos_ns: 0,
            pos_frac: 0.0,
            flat_constant: None,
            emitted: 0,
            leading_gap: false,
        })
    }

    /// Start with one gap before the first send, as AIPerf does (its first credit waits one
    /// drawn interval); by default the first send is at offset 0. Call before the first
    /// [`next_offset_ns`](Self::next_offset_ns).
    pub fn with_leading_gap(mut self) -> Self {
        self.leading_gap = true;
        self
    }

    /// The planned rate (requests/s) at `elapsed_ns` from the phase start.
    pub fn rate_at(&self, elapsed_ns: u64) -> f64 {
        match &self.ramp {
            Some(r) if elapsed_ns < r.dur_ns => r.rate_in_step(elapsed_ns / r.step_ns),
            _ => self.rate,
        }
    }

    /// The next planned send, in ns from the phase start: absolute, never less than the
    /// previous one. Saturates at [`MAX_OFFSET_NS`] for absurdly low rates.
    pub fn next_offset_ns(&mut self) -> u64 {
        // `min` with a constant keeps the offsets non-decreasing.
        self.next_unclamped_ns().min(MAX_OFFSET_NS)
    }

    fn next_unclamped_ns(&mut self) -> u64 {
        let k = self.emitted;
        self.emitted += 1;
        if k == 0 && !self.leading_gap {
            return 0;
        }
        let work = self.draw_work();
        let Some(left) = self.spend_in_ramp(work) else {
            return self.pos_rounded();
        };
        if matches!(self.draw, Draw::Constant) {
            // Computed from the index, not summed, so the k-th send is exactly k·1e9/rate
            // (rounded) without a ramp, and never drifts with one.
            let (origin_ns, origin_frac, k0, x0) =
                *self
                    .flat_constant
                    .get_or_insert((self.pos_ns, self.pos_frac, k, left));
            let t = origin_frac + (x0 + (k - k0) as f64) * NS_PER_S / self.rate;
            return origin_ns.saturating_add(t.round() as u64);
        }
        self.add_ns(work_to_ns(left, self.rate));
        self.pos_rounded()
    }

    /// One gap in work units (mean 1).
    fn draw_work(&mut self) -> f64 {
        match &self.draw {
            Draw::Constant => 1.0,
            Draw::Exp => Exp1.sample(&mut self.rng),
            Draw::Gamma { dist, shape } => dist.sample(&mut self.rng) / shape,
        }
    }

    /// Moves the position through the ramp steps until `work` is used up (`None`), or the
    /// ramp is over: then the position is at or after its end and the work left is returned.
    fn spend_in_ramp(&mut self, mut work: f64) -> Option<f64> {
        loop {
            let Some(r) = &self.ramp else {
                return Some(work);
            };
            let start = self.step.saturating_mul(r.step_ns);
            if start >= r.dur_ns {
                self.ramp = None;
                continue;
            }
            if self.pos_ns == start && self.pos_frac == 0.0 {
                // At a step boundary: skip every whole step the work covers at once, so a
                // very long ramp costs O(log steps) per send, not O(steps).
                let (m, used) = whole_steps_within(r, self.step, work);
                if m > 0 {
                    work = (work - used).max(0.0);
                    self.step += m;
                    self.pos_ns = self.step.saturating_mul(r.step_ns);
                    continue;
                }
            }
            let end = start.saturating_add(r.step_ns).min(r.dur_ns);
            if self.pos_ns >= end {
                // Only after a rounding overshoot; never move the position back.
                self.step += 1;
                continue;
            }
            let rate_per_ns = r.rate_in_step(self.step) / NS_PER_S;
            let room_ns = (end - self.pos_ns) as f64 - self.pos_frac;
            let capacity = room_ns * rate_per_ns;
            if work < capacity {
                self.add_ns(work / rate_per_ns);
                return None;
            }
            work -= capacity;
            self.pos_ns = end;
            self.pos_frac = 0.0;
            self.step += 1;
        }
    }

    fn add_ns(&mut self, d: f64) {
        // Also skips NaN (0 work × an infinite ns-per-work): nothing to add.
        if d.is_nan() || d <= 0.0 {
            return;
        }
        let s = self.pos_frac + d;
        let whole = s.floor();
        if whole >= u64::MAX as f64 {
            self.pos_ns = u64::MAX;
            self.pos_frac = 0.0;
            return;
        }
        self.pos_ns = self.pos_ns.saturating_add(whole as u64);
        self.pos_frac = s - whole;
    }

    fn pos_rounded(&self) -> u64 {
        self.pos_ns.saturating_add(u64::from(self.pos_frac >= 0.5))
    }
}

impl Iterator for RateSchedule {
    type Item = u64;

    /// Never `None`: the caller stops on its own count or duration.
    fn next(&mut self) -> Option<u64> {
        Some(self.next_offset_ns())
    }
}

/// The largest `m` such that the full-length ramp steps `first..first+m` hold at most `work`
/// units of work together, and that total. Step `j` holds `step·(start + (target−start)·j·step/D)`
/// (in seconds × req/s), a linear function of `j`, so any run of steps has a closed-form sum.
fn whole_steps_within(r: &RateRamp, first: u64, work: f64) -> (u64, f64) {
    let full_steps = r.dur_ns / r.step_ns;
    let available = full_steps.saturating_sub(first);
    let step_s = r.step_ns as f64 / NS_PER_S;
    let slope = (r.target_rate - r.start_rate) * (r.step_ns as f64 / r.dur_ns as f64);
    let first = first as f64;
    let sum = |m: u64| {
        let m = m as f64;
        step_s * (m * r.start_rate + slope * (m * first + m * (m - 1.0) / 2.0))
    };
    // Binary search: the sum grows with m (every step's capacity is ≥ 0).
    let (mut lo, mut hi) = (0u64, available);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if sum(mid) <= work {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    (lo, sum(lo))
}

fn work_to_ns(work: f64, rate: f64) -> f64 {
    work * (NS_PER_S / rate)
}

fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// `--concurrency-ramp-duration`: the allowed concurrency rises from 1 to the target over `D`,
/// one slot at a time, as AIPerf's linear ramper: limit `v` is reached at `D · (v−1)/(N−1)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConcurrencyRamp {
    target: usize,
    dur_ns: u64,
}

impl ConcurrencyRamp {
    pub fn new(target: usize, ramp: Duration) -> Result<Self, ScheduleError> {
        if target == 0 {
            return Err(ScheduleError::Concurrency);
        }
        if ramp.is_zero() {
            return Err(ScheduleError::RampDuration {
                flag: "--concurrency-ramp-duration",
            });
        }
        Ok(Self {
            target,
            dur_ns: duration_ns(ramp),
        })
    }

    pub fn target(&self) -> usize {
        self.target
    }

    /// `1 + ⌊(N−1) · t / D⌋`, and `N` from `t ≥ D` on.
    pub fn limit_at(&self, elapsed_ns: u64) -> usize {
        if elapsed_ns >= self.dur_ns {
            return self.target;
        }
        // u128: (N−1)·t cannot overflow; the quotient is < N−1 since t < D.
        let steps = (self.target as u128 - 1) * elapsed_ns as u128 / self.dur_ns as u128;
        1 + steps as usize
    }

    /// When the limit next rises after `elapsed_ns` (so the engine can sleep until then), or
    /// `None` once it is at the target.
    pub fn next_increase_ns(&self, elapsed_ns: u64) -> Option<u64> {
        let v = self.limit_at(elapsed_ns);
        if v >= self.target {
            return None;
        }
        // Smallest t with (N−1)·t ≥ v·D; ≤ D since v ≤ N−1.
        let n1 = self.target as u128 - 1;
        let t = (v as u128 * self.dur_ns as u128).div_ceil(n1);
        Some(t as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn take(s: &mut RateSchedule, n: usize) -> Vec<u64> {
        (0..n).map(|_| s.next_offset_ns()).collect()
    }

    fn sched(p: ArrivalPattern, rate: f64, ramp: Option<Duration>, seed: u64) -> RateSchedule {
        RateSchedule::new(p, rate, ramp, seed, "profiling").unwrap()
    }

    /// Mean and coefficient of variation of the gaps (in ns) between consecutive offsets.
    fn gap_stats(offsets: &[u64]) -> (f64, f64) {
        let gaps: Vec<f64> = offsets.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
        let n = gaps.len() as f64;
        let mean = gaps.iter().sum::<f64>() / n;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, var.sqrt() / mean)
    }

    fn within(x: f64, expected: f64, rel: f64) -> bool {
        (x / expected - 1.0).abs() <= rel
    }

    #[test]
    fn constant_offsets_are_exactly_k_over_rate() {
        // By hand: 3 req/s → 0, 333_333_333.3, 666_666_666.7, 1 s.
        let mut s = sched(ArrivalPattern::Constant, 3.0, None, 1);
        assert_eq!(
            take(&mut s, 4),
            [0, 333_333_333, 666_666_667, 1_000_000_000]
        );
        for rate in [1.0, 3.0, 7.3, 1000.0, 123_456.789] {
            let mut s = sched(ArrivalPattern::Constant, rate, None, 9);
            for k in 0..20_000u64 {
                assert_eq!(s.next_offset_ns(), (k as f64 * 1e9 / rate).round() as u64);
            }
        }
        // Far into a run the k-th send is still k/rate: no accumulated error.
        let mut s = sched(ArrivalPattern::Constant, 3.0, None, 1);
        let last = s.by_ref().take(3_000_001).last().unwrap();
        assert_eq!(last, 1_000_000_000_000_000);
    }

    #[test]
    fn constant_ignores_the_seed() {
        let a = take(&mut sched(ArrivalPattern::Constant, 50.0, None, 1), 100);
        let b = take(&mut sched(ArrivalPattern::Constant, 50.0, None, 2), 100);
        assert_eq!(a, b);
    }

    #[test]
    fn same_inputs_same_offsets_and_each_input_matters() {
        for p in [
            ArrivalPattern::Poisson,
            ArrivalPattern::Gamma { smoothness: 2.5 },
        ] {
            let base = take(&mut sched(p, 20.0, None, 7), 1000);
            assert_eq!(base, take(&mut sched(p, 20.0, None, 7), 1000));
            assert_ne!(base, take(&mut sched(p, 20.0, None, 8), 1000));
            let warm = RateSchedule::new(p, 20.0, None, 7, "warmup").unwrap();
            assert_ne!(base, take(&mut warm.clone(), 1000));
            // Clones continue identically (the engine may plan ahead from a copy).
            let mut a = sched(p, 20.0, None, 7);
            a.next_offset_ns();
            let mut b = a.clone();
            assert_eq!(take(&mut a, 50), take(&mut b, 50));
        }
    }

    #[test]
    fn the_named_generator_is_arrivals_dot_phase() {
        let rate = 40.0;
        let mut s = sched(ArrivalPattern::Poisson, rate, None, 11);
        let mut rng = ChaCha8Rng::from_seed(derive_seed(11, "arrivals.profiling"));
        let mut t = 0.0;
        assert_eq!(s.next_offset_ns(), 0);
        for _ in 0..100 {
            let x: f64 = Exp1.sample(&mut rng);
            t += x * 1e9 / rate;
            let got = s.next_offset_ns();
            // Same draws, rounded to the nearest ns; the sums differ only in the last bits.
            assert!((got as f64 - t).abs() <= 0.5 + 1e-6, "{got} vs {t}");
        }
    }

    #[test]
    fn poisson_mean_and_cv() {
        let rate = 1000.0;
        let offsets = take(&mut sched(ArrivalPattern::Poisson, rate, None, 42), 200_001);
        let (mean, cv) = gap_stats(&offsets);
        assert!(within(mean, 1e9 / rate, 0.02), "mean {mean}");
        assert!(within(cv, 1.0, 0.03), "cv {cv}");
    }

    #[test]
    fn gamma_cv_follows_smoothness() {
        let rate = 1000.0;
        for (smoothness, cv_expected, tol) in
            [(4.0, 0.5, 0.03), (0.25, 2.0, 0.05), (1.0, 1.0, 0.03)]
        {
            let p = ArrivalPattern::Gamma { smoothness };
            let offsets = take(&mut sched(p, rate, None, 42), 200_001);
            let (mean, cv) = gap_stats(&offsets);
            assert!(within(mean, 1e9 / rate, 0.02), "{smoothness}: mean {mean}");
            assert!(within(cv, cv_expected, tol), "{smoothness}: cv {cv}");
        }
    }

    #[test]
    fn leading_gap_puts_the_first_send_one_interval_in() {
        let mut s = sched(ArrivalPattern::Constant, 4.0, None, 1).with_leading_gap();
        assert_eq!(take(&mut s, 3), [250_000_000, 500_000_000, 750_000_000]);
        let mut s = sched(ArrivalPattern::Poisson, 4.0, None, 1).with_leading_gap();
        assert!(s.next_offset_ns() > 0);
    }

    #[test]
    fn ramp_rate_steps_by_hand() {
        // D = 250 ms, target 100/s: start = 100·0.1/0.25 = 40/s; steps of 100 ms at
        // 40 + 60·0 = 40, 40 + 60·0.4 = 64, 40 + 60·0.8 = 88 (a 50 ms last step), then 100.
        let s = sched(
            ArrivalPattern::Poisson,
            100.0,
            Some(Duration::from_millis(250)),
            1,
        );
        let ms = 1_000_000;
        for (t, r) in [
            (0, 40.0),
            (99 * ms, 40.0),
            (100 * ms, 64.0),
            (199 * ms, 64.0),
            (200 * ms, 88.0),
            (249 * ms, 88.0),
            (250 * ms, 100.0),
            (u64::MAX, 100.0),
        ] {
            assert!((s.rate_at(t) - r).abs() < 1e-9, "t={t}: {}", s.rate_at(t));
        }
    }

    #[test]
    fn constant_ramp_by_hand() {
        // Target 1000/s over D = 1 s in 100 ms steps: start 1000·0.1/1 = 100/s; step s has
        // 100 + 900·s/10 = 100 + 90s req/s. Arrivals in [0, D]: 0.1·Σ_{s=0..9}(100 + 90s)
        // = 0.1·(1000 + 4050) = 505 units of work, so sends at work 0, 1, …, 505 (the last
        // exactly at D): 506 offsets ≤ D (float rounding may put the last just past D).
        let d = Duration::from_secs(1);
        let mut s = sched(ArrivalPattern::Constant, 1000.0, Some(d), 1);
        let offsets = take(&mut s, 2000);
        // First step: 100/s = target × step/D, so 10 ms apart: 0, 10, …, 100 ms.
        for (k, &o) in offsets.iter().take(11).enumerate() {
            assert!(o.abs_diff(k as u64 * 10_000_000) <= 1, "{k}: {o}");
        }
        // Second step at 190/s.
        let gap = offsets[12] - offsets[11];
        assert!(gap.abs_diff((1e9 / 190.0) as u64) <= 1, "{gap}");
        let in_ramp = offsets.iter().filter(|&&o| o <= 1_000_000_000).count();
        assert!((505..=506).contains(&in_ramp), "{in_ramp}");
        // After D: the target rate, 1 ms apart.
        let after: Vec<u64> = offsets
            .iter()
            .copied()
            .filter(|&o| o > 1_000_000_000)
            .collect();
        for w in after.windows(2) {
            assert!((w[1] - w[0]).abs_diff(1_000_000) <= 1, "{w:?}");
        }
        assert!(offsets.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn poisson_ramp_counts_follow_the_integral() {
        // Target 100,000/s over 1 s: start 10,000/s, step s at 10,000 + 9,000s.
        // ∫₀^D = 0.1·(10·10,000 + 9,000·45) = 50,500 expected sends; first step 1,000.
        let d = Duration::from_secs(1);
        for p in [
            ArrivalPattern::Poisson,
            ArrivalPattern::Gamma { smoothness: 4.0 },
        ] {
            let mut s = sched(p, 100_000.0, Some(d), 3);
            let offsets = take(&mut s, 200_000);
            let count = |lo: u64, hi: u64| offsets.iter().filter(|&&o| o >= lo && o < hi).count();
            let first_step = count(0, 100_000_000) as f64;
            assert!(within(first_step, 1000.0, 0.10), "{p:?}: {first_step}");
            let last_step = count(900_000_000, 1_000_000_000) as f64;
            assert!(within(last_step, 9_100.0, 0.05), "{p:?}: {last_step}");
            let ramp = count(0, 1_000_000_000) as f64;
            assert!(within(ramp, 50_500.0, 0.02), "{p:?}: {ramp}");
            let after: Vec<u64> = offsets
                .iter()
                .copied()
                .filter(|&o| o >= 1_000_000_000)
                .collect();
            assert!(after.len() > 100_000);
            let (mean, _) = gap_stats(&after);
            assert!(within(mean, 10_000.0, 0.02), "{p:?}: {mean}");
        }
    }

    #[test]
    fn slow_ramp_matches_a_step_by_step_walk() {
        // Target 1/s over 100 s: start 0.001/s, so each send spans many 100 ms steps (the
        // whole-step skip). Reference: walk the steps one by one and invert the cumulative
        // work; Λ(D) = 0.1·(1000·0.001 + 0.999·0.001·1000·999/2) = 50.00005 sends in the ramp.
        let (rate, d_s, u_s) = (1.0, 100.0, 0.1);
        let start = rate * u_s / d_s;
        let reference = |k: f64| {
            let mut cum = 0.0;
            for j in 0..1000 {
                let r = start + (rate - start) * (j as f64 * u_s / d_s);
                if cum + r * u_s >= k {
                    return j as f64 * u_s + (k - cum) / r;
                }
                cum += r * u_s;
            }
            d_s + (k - cum) / rate
        };
        let ramp = Some(Duration::from_secs(100));
        let mut s = sched(ArrivalPattern::Constant, rate, ramp, 1);
        assert_eq!(s.next_offset_ns(), 0);
        for k in 1..70 {
            let got = s.next_offset_ns() as f64 / 1e9;
            let want = reference(k as f64);
            assert!((got - want).abs() < 1e-6, "{k}: {got} vs {want}");
            assert_eq!(k <= 50, got < d_s, "{k}: {got}");
        }
    }

    #[test]
    fn ramp_shorter_than_a_step_is_the_target_rate() {
        let d = Duration::from_millis(50);
        let mut s = sched(ArrivalPattern::Constant, 200.0, Some(d), 1);
        assert_eq!(s.rate_at(0), 200.0);
        for k in 0..100u64 {
            let o = s.next_offset_ns();
            assert!(o.abs_diff(k * 5_000_000) <= 1, "{k}: {o}");
        }
    }

    #[test]
    fn invalid_parameters_name_the_flag() {
        for rate in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e =
                RateSchedule::new(ArrivalPattern::Poisson, rate, None, 1, "profiling").unwrap_err();
            assert!(e.to_string().starts_with("--request-rate must be"), "{e}");
            let e =
                RateSchedule::new(ArrivalPattern::Poisson, rate, None, 1, "warmup").unwrap_err();
            assert!(
                e.to_string().starts_with("--warmup-request-rate must"),
                "{e}"
            );
        }
        for smoothness in [0.0, -2.0, f64::NAN, f64::INFINITY] {
            let p = ArrivalPattern::Gamma { smoothness };
            let e = RateSchedule::new(p, 1.0, None, 1, "profiling").unwrap_err();
            assert!(
                e.to_string().starts_with("--arrival-smoothness must"),
                "{e}"
            );
        }
        let zero = Some(Duration::ZERO);
        let e = RateSchedule::new(ArrivalPattern::Poisson, 1.0, zero, 1, "profiling").unwrap_err();
        assert_eq!(
            e.to_string(),
            "--request-rate-ramp-duration must be greater than 0 seconds"
        );
        let e = RateSchedule::new(ArrivalPattern::Poisson, 1.0, zero, 1, "warmup").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("--warmup-request-rate-ramp-duration")
        );
        assert_eq!(
            ConcurrencyRamp::new(0, Duration::from_secs(1)),
            Err(ScheduleError::Concurrency)
        );
        let e = ConcurrencyRamp::new(4, Duration::ZERO).unwrap_err();
        assert!(e.to_string().starts_with("--concurrency-ramp-duration"));
    }

    #[test]
    fn extreme_parameters_stay_ordered() {
        for (p, rate) in [
            (ArrivalPattern::Poisson, 1e-300),
            (ArrivalPattern::Constant, 1e-300),
            (ArrivalPattern::Poisson, 1e300),
            (ArrivalPattern::Constant, 1e300),
            (ArrivalPattern::Gamma { smoothness: 1e-9 }, 10.0),
            (ArrivalPattern::Gamma { smoothness: 1e9 }, 10.0),
            (ArrivalPattern::Gamma { smoothness: 1e-300 }, 10.0),
        ] {
            for ramp in [None, Some(Duration::from_secs(5)), Some(Duration::MAX)] {
                let offsets = take(&mut sched(p, rate, ramp, 5), 200);
                assert_eq!(offsets[0], 0);
                assert!(offsets.windows(2).all(|w| w[0] <= w[1]), "{p:?} {rate}");
            }
        }
        // A rate this low pushes the second send past the clock: clamped, not wrapped, and
        // with room left for the caller to add the phase start.
        let mut s = sched(ArrivalPattern::Constant, 1e-300, None, 1);
        assert_eq!(take(&mut s, 2), [0, MAX_OFFSET_NS]);
        assert!(MAX_OFFSET_NS.checked_add(MAX_OFFSET_NS).is_some());
        // 1e-299 req/s is a finite gap of 1e308 ns: clamped too.
        let mut s = sched(ArrivalPattern::Poisson, 1e-299, None, 1);
        assert_eq!(take(&mut s, 3), [0, MAX_OFFSET_NS, MAX_OFFSET_NS]);
    }

    #[test]
    fn concurrency_ramp_by_hand() {
        // N = 8 over 7 s: one more slot each second; limit v from D·(v−1)/(N−1) = (v−1) s.
        let s = 1_000_000_000;
        let r = ConcurrencyRamp::new(8, Duration::from_secs(7)).unwrap();
        assert_eq!(r.limit_at(0), 1);
        assert_eq!(r.limit_at(s - 1), 1);
        assert_eq!(r.limit_at(s), 2);
        assert_eq!(r.limit_at(6 * s + s / 2), 7);
        assert_eq!(r.limit_at(7 * s - 1), 7);
        assert_eq!(r.limit_at(7 * s), 8);
        assert_eq!(r.limit_at(u64::MAX), 8);
        assert_eq!(r.next_increase_ns(0), Some(s));
        assert_eq!(r.next_increase_ns(s), Some(2 * s));
        assert_eq!(r.next_increase_ns(7 * s - 1), Some(7 * s));
        assert_eq!(r.next_increase_ns(7 * s), None);
        // N = 3 over 1 s: 2 at 0.5 s, 3 at 1 s.
        let r = ConcurrencyRamp::new(3, Duration::from_secs(1)).unwrap();
        assert_eq!(r.limit_at(s / 2 - 1), 1);
        assert_eq!(r.limit_at(s / 2), 2);
        assert_eq!(r.limit_at(s - 1), 2);
        assert_eq!(r.limit_at(s), 3);
        // N = 1: nothing to ramp.
        let r = ConcurrencyRamp::new(1, Duration::from_secs(1)).unwrap();
        assert_eq!(r.limit_at(0), 1);
        assert_eq!(r.next_increase_ns(0), None);
    }

    #[test]
    fn concurrency_ramp_is_monotone_and_next_increase_is_exact() {
        let r = ConcurrencyRamp::new(37, Duration::from_millis(1234)).unwrap();
        let mut prev = r.limit_at(0);
        assert_eq!(prev, 1);
        let mut t = 0;
        while let Some(next) = r.next_increase_ns(t) {
            assert!(next > t);
            assert_eq!(r.limit_at(next - 1), prev);
            assert_eq!(r.limit_at(next), prev + 1);
            prev += 1;
            t = next;
        }
        assert_eq!(prev, 37);
        assert_eq!(t, 1_234_000_000);
        for t in (0..1_300_000_000u64).step_by(977_777) {
            assert!(r.limit_at(t) <= r.limit_at(t + 977_777));
        }
    }

    fn pattern() -> impl Strategy<Value = ArrivalPattern> {
        prop_oneof![
            Just(ArrivalPattern::Constant),
            Just(ArrivalPattern::Poisson),
            (-3.0f64..3.0).prop_map(|e| ArrivalPattern::Gamma {
                smoothness: 10f64.powf(e)
            }),
        ]
    }

    proptest! {
        #[test]
        fn offsets_never_decrease(
            p in pattern(),
            log_rate in -4.0f64..8.0,
            ramp_ns in proptest::option::of(1u64..100_000_000_000),
            seed in any::<u64>(),
            label in "[a-z]{0,8}",
            leading_gap in any::<bool>(),
        ) {
            let ramp = ramp_ns.map(Duration::from_nanos);
            let mut s = RateSchedule::new(p, 10f64.powf(log_rate), ramp, seed, &label).unwrap();
            if leading_gap {
                s = s.with_leading_gap();
            }
            let mut prev = 0;
            for _ in 0..500 {
                let o = s.next_offset_ns();
                prop_assert!(o >= prev, "{o} < {prev}");
                prev = o;
            }
        }
    }
}
