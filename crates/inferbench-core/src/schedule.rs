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

use std::sync::Arc;
use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp1, Gamma};

use crate::rate_series::RateSeries;
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

/// A stretch of the schedule where the planned rate changes every `step_ns`, starting at
/// `begin_ns` from the phase start and lasting `dur_ns`. Step `s` runs from
/// `begin + s·step` to `begin + (s+1)·step` (cut at the stretch's end).
#[derive(Debug, Clone)]
struct RateRamp {
    begin_ns: u64,
    dur_ns: u64,
    step_ns: u64,
    shape: StepShape,
}

#[derive(Debug, Clone)]
enum StepShape {
    /// AIPerf's rate ramper: in step `s` the rate is `start + (target − start) · s·step / D`
    /// with `start = target · min(step, D) / D`.
    Linear { start_rate: f64, target_rate: f64 },
    /// AIPerf's rate-series controller: in step `s` the rate is the series' value at
    /// `s·step` seconds into it.
    Series(Arc<RateSeries>),
}

impl RateRamp {
    /// Requests per second during step `step`.
    fn rate_in_step(&self, step: u64) -> f64 {
        let at_ns = step.saturating_mul(self.step_ns);
        match &self.shape {
            StepShape::Linear {
                start_rate,
                target_rate,
            } => {
                let progress = at_ns as f64 / self.dur_ns as f64;
                start_rate + (target_rate - start_rate) * progress
            }
            StepShape::Series(s) => s.value_at(at_ns as f64 / NS_PER_S),
        }
    }

    fn end_ns(&self) -> u64 {
        self.begin_ns.saturating_add(self.dur_ns)
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
    /// The rate after every stepped stretch.
    rate: f64,
    /// The stepped stretches in time order (the rate ramp, then the series), contiguous
    /// from 0; `stage` is the one the position is in, `step` its step there.
    stages: Vec<RateRamp>,
    stage: usize,
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
                    begin_ns: 0,
                    dur_ns,
                    step_ns,
                    shape: StepShape::Linear {
                        start_rate,
                        target_rate: rate,
                    },
                })
            }
        };
        let purpose = format!("arrivals.{phase_label}");
        Ok(Self {
            rng: ChaCha8Rng::from_seed(derive_seed(seed, &purpose)),
            draw,
            rate,
            stages: ramp.into_iter().collect(),
            stage: 0,
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

    /// Follow `series` once the ramp (if any) is over, as AIPerf's `--request-rate-series`:
    /// in steps of [`RATE_RAMP_STEP`] the rate is the series' value at the step's start,
    /// until the first step that starts at or after the last point; from there on it is the
    /// last point's rate. `new`'s `rate` should be the series' first rate (the ramp's
    /// target). Call before the first [`next_offset_ns`](Self::next_offset_ns).
    pub fn with_series(mut self, series: Arc<RateSeries>) -> Self {
        let step_ns = duration_ns(RATE_RAMP_STEP);
        let begin_ns = self.stages.last().map_or(0, RateRamp::end_ns);
        // Whole steps, as AIPerf's controller ticks: the last tick before the end still sets
        // an interpolated rate for a full step.
        let end_ns = (series.end_s() * NS_PER_S).ceil().min(MAX_OFFSET_NS as f64) as u64;
        let dur_ns = end_ns.div_ceil(step_ns).saturating_mul(step_ns);
        self.rate = series.final_qps();
        if dur_ns > 0 {
            self.stages.push(RateRamp {
                begin_ns,
                dur_ns,
                step_ns,
                shape: StepShape::Series(series),
            });
        }
        self
    }

    /// The planned rate (requests/s) at `elapsed_ns` from the phase start.
    pub fn rate_at(&self, elapsed_ns: u64) -> f64 {
        match self.stages.iter().find(|r| elapsed_ns < r.end_ns()) {
            Some(r) => r.rate_in_step(elapsed_ns.saturating_sub(r.begin_ns) / r.step_ns),
            None => self.rate,
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
            let Some(r) = self.stages.get(self.stage) else {
                return Some(work);
            };
            let start = r
                .begin_ns
                .saturating_add(self.step.saturating_mul(r.step_ns));
            if start >= r.end_ns() {
                self.stage += 1;
                self.step = 0;
                continue;
            }
            if self.pos_ns == start
                && self.pos_frac == 0.0
                && let StepShape::Linear {
                    start_rate,
                    target_rate,
                } = r.shape
            {
                // At a step boundary: skip every whole step the work covers at once, so a
                // very long ramp costs O(log steps) per send, not O(steps).
                let (m, used) = whole_steps_within(r, start_rate, target_rate, self.step, work);
                if m > 0 {
                    work = (work - used).max(0.0);
                    self.step += m;
                    self.pos_ns = r
                        .begin_ns
                        .saturating_add(self.step.saturating_mul(r.step_ns));
                    continue;
                }
            }
            let end = start.saturating_add(r.step_ns).min(r.end_ns());
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
fn whole_steps_within(
    r: &RateRamp,
    start_rate: f64,
    target_rate: f64,
    first: u64,
    work: f64,
) -> (u64, f64) {
    let full_steps = r.dur_ns / r.step_ns;
    let available = full_steps.saturating_sub(first);
    let step_s = r.step_ns as f64 / NS_PER_S;
    let slope = (target_rate - start_rate) * (r.step_ns as f64 / r.dur_ns as f64);
    let first = first as f64;
    let sum = |m: u64| {
        let m = m as f64;
        step_s * (m * start_rate + slope * (m * first + m * (m - 1.0) / 2.0))
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
mod tests;
