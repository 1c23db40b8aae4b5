//! The few numpy operations AIPerf's statistics rest on, with numpy's own evaluation order
//! (pairwise summation, `(n−1)·q` virtual indices, its two-sided `lerp`) so that results agree
//! to the last bits wherever possible.

/// numpy's pairwise summation of a contiguous float64 array (blocks of 8 partial sums
/// below 128 elements, halving above).
fn pairwise(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        let mut res = 0.0;
        for &x in a {
            res += x;
        }
        res
    } else if n <= 128 {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&a[..8]);
        let mut i = 8;
        while i < n - n % 8 {
            for j in 0..8 {
                r[j] += a[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for &x in &a[n - n % 8..] {
            res += x;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        pairwise(&a[..n2]) + pairwise(&a[n2..])
    }
}

/// `np.sum` of a 1-D float64 array: the reduction starts from the first element and adds
/// the pairwise sum of the rest.
pub(crate) fn sum(a: &[f64]) -> f64 {
    match a.split_first() {
        None => 0.0,
        Some((first, rest)) => first + pairwise(rest),
    }
}

pub(crate) fn mean(a: &[f64]) -> f64 {
    sum(a) / a.len() as f64
}

/// `np.var(a, ddof)`.
pub(crate) fn var(a: &[f64], ddof: usize) -> f64 {
    let m = mean(a);
    let sq: Vec<f64> = a.iter().map(|x| (x - m) * (x - m)).collect();
    sum(&sq) / (a.len() - ddof) as f64
}

pub(crate) fn std(a: &[f64], ddof: usize) -> f64 {
    var(a, ddof).sqrt()
}

pub(crate) fn min(a: &[f64]) -> f64 {
    a.iter().copied().fold(f64::INFINITY, f64::min)
}

pub(crate) fn max(a: &[f64]) -> f64 {
    a.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// The percentiles AIPerf reports.
pub(crate) const PERCENTILES: [u32; 9] = [1, 5, 10, 25, 50, 75, 90, 95, 99];

/// `np.percentile(a, PERCENTILES)` with the default linear method.
pub(crate) fn percentiles(a: &[f64]) -> [f64; 9] {
    let mut sorted = a.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    PERCENTILES.map(|p| {
        let q = p as f64 / 100.0;
        let virtual_index = (n - 1) as f64 * q;
        let prev = virtual_index.floor();
        if virtual_index >= (n - 1) as f64 {
            return sorted[n - 1];
        }
        let i = prev as usize;
        let gamma = virtual_index - prev;
        lerp(sorted[i], sorted[i + 1], gamma)
    })
}

/// numpy's `_lerp`: from below for t < 0.5, from above otherwise.
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let d = b - a;
    if t >= 0.5 {
        b - d * (1.0 - t)
    } else {
        a + d * t
    }
}

/// `np.linspace(start, stop, num)` (endpoint included).
pub(crate) fn linspace(start: f64, stop: f64, num: usize) -> Vec<f64> {
    if num == 0 {
        return Vec::new();
    }
    if num == 1 {
        return vec![start];
    }
    let div = (num - 1) as f64;
    let delta = stop - start;
    let step = delta / div;
    let mut y: Vec<f64> = (0..num)
        .map(|i| {
            let i = i as f64;
            if step == 0.0 {
                i / div * delta + start
            } else {
                i * step + start
            }
        })
        .collect();
    y[num - 1] = stop;
    y
}

/// `np.clip` of a scalar.
pub(crate) fn clip(x: f64, lo: f64, hi: f64) -> f64 {
    x.max(lo).min(hi)
}

/// `np.median` of int64 values, as float64.
pub(crate) fn median_i64(a: &[i64]) -> f64 {
    let mut s = a.to_vec();
    s.sort_unstable();
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2] as f64
    } else {
        (s[n / 2 - 1] as f64 + s[n / 2] as f64) / 2.0
    }
}
