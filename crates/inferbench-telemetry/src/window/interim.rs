//! INTERIM: stand-ins for `promql::exact_increase` and `quantile::histogram_quantile` until
//! helper-prom's are merged (then this file is deleted and the callers use theirs).

use crate::promql::{ExactIncrease, Point};
use crate::quantile::{Bucket, Estimate};

pub(crate) fn exact_increase(points: &[Point]) -> ExactIncrease {
    let mut out = ExactIncrease::default();
    for w in points.windows(2) {
        if w[1].v < w[0].v {
            out.resets += 1;
            out.increase += w[1].v;
        } else {
            out.increase += w[1].v - w[0].v;
        }
    }
    out
}

pub(crate) fn histogram_quantile(phi: f64, buckets: &[Bucket]) -> Estimate {
    let nan = Estimate {
        value: f64::NAN,
        forced_monotonic: false,
    };
    let mut b: Vec<Bucket> = buckets.to_vec();
    b.sort_by(|x, y| x.le.total_cmp(&y.le));
    if b.last().is_none_or(|x| x.le != f64::INFINITY) {
        return nan;
    }
    let mut m: Vec<Bucket> = Vec::new();
    for x in b {
        match m.last_mut() {
            Some(l) if l.le == x.le => l.count += x.count,
            _ => m.push(x),
        }
    }
    let mut forced = false;
    for i in 1..m.len() {
        if m[i].count < m[i - 1].count {
            forced = true;
            m[i].count = m[i - 1].count;
        }
    }
    let n = m.last().map_or(0.0, |x| x.count);
    if m.len() < 2 || n == 0.0 {
        return nan;
    }
    let rank = phi * n;
    let i = m
        .iter()
        .position(|x| x.count >= rank)
        .unwrap_or(m.len() - 1);
    let value = if i == m.len() - 1 {
        m[m.len() - 2].le
    } else if i == 0 && m[0].le <= 0.0 {
        m[0].le
    } else {
        let (lo, clo) = if i == 0 {
            (0.0, 0.0)
        } else {
            (m[i - 1].le, m[i - 1].count)
        };
        lo + (m[i].le - lo) * (rank - clo) / (m[i].count - clo)
    };
    Estimate {
        value,
        forced_monotonic: forced,
    }
}
