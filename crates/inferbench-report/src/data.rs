//! Chart data: pure functions on (x, y) points. Times are whatever unit the caller uses
//! (the plots use seconds since the run's first request start).

/// The edges of fixed-width buckets covering `[start, end]`: `start, start + w, …`, the
/// last edge the first one at or past `end` (so the last bucket may stick out). Empty for
/// a non-positive width or an empty span.
pub fn bucket_edges(start: f64, end: f64, width: f64) -> Vec<f64> {
    if !(start.is_finite() && end.is_finite() && width.is_finite()) || width <= 0.0 || end < start {
        return Vec::new();
    }
    let n = ((end - start) / width).floor() as usize + 1;
    (0..=n).map(|k| start + k as f64 * width).collect()
}

/// The bucket of `x` among `edges` (`edgeₖ ≤ x < edgeₖ₊₁`), None outside them.
pub fn bucket_of(edges: &[f64], x: f64) -> Option<usize> {
    if edges.len() < 2 || x < edges[0] || x >= edges[edges.len() - 1] {
        return None;
    }
    Some(edges.partition_point(|&e| e <= x) - 1)
}

/// How many points fall in each bucket.
pub fn bucket_counts(edges: &[f64], xs: &[f64]) -> Vec<u64> {
    let mut c = vec![0; edges.len().saturating_sub(1)];
    for &x in xs {
        if let Some(k) = bucket_of(edges, x) {
            c[k] += 1;
        }
    }
    c
}

/// A rate per bucket: count (or the sum of `weights`) divided by the bucket width; the
/// points are placed at each bucket's middle. Throughput over time is this with the
/// completion instants and the output tokens as weights.
pub fn bucket_rate(edges: &[f64], xs: &[f64], weights: Option<&[f64]>) -> Vec<(f64, f64)> {
    let n = edges.len().saturating_sub(1);
    let mut sum = vec![0.0; n];
    for (i, &x) in xs.iter().enumerate() {
        if let Some(k) = bucket_of(edges, x) {
            sum[k] += weights.map_or(1.0, |w| w[i]);
        }
    }
    (0..n)
        .map(|k| {
            let w = edges[k + 1] - edges[k];
            ((edges[k] + edges[k + 1]) / 2.0, sum[k] / w)
        })
        .collect()
}

/// Linear-interpolation percentile (numpy's default) of sorted values; None when empty.
pub fn percentile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let idx = q / 100.0 * (sorted.len() - 1) as f64;
    let (lo, hi) = (idx.floor() as usize, idx.ceil() as usize);
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (idx - lo as f64))
}

/// The rolling q-th percentile of the last `window` points (in x order), one value per
/// point from the `window`-th on: point i gets the percentile of points i − window + 1 … i.
pub fn rolling_percentile(points: &[(f64, f64)], window: usize, q: f64) -> Vec<(f64, f64)> {
    if window == 0 || points.len() < window {
        return Vec::new();
    }
    let mut p = points.to_vec();
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    // A sorted copy of the window, updated by one removal and one insertion per step.
    let mut win: Vec<f64> = p[..window].iter().map(|x| x.1).collect();
    win.sort_by(f64::total_cmp);
    let mut out = Vec::with_capacity(p.len() - window + 1);
    out.push((p[window - 1].0, percentile_sorted(&win, q).unwrap()));
    for i in window..p.len() {
        let gone = p[i - window].1;
        let at = win.partition_point(|&v| v < gone);
        win.remove(at);
        let at = win.partition_point(|&v| v < p[i].1);
        win.insert(at, p[i].1);
        out.push((p[i].0, percentile_sorted(&win, q).unwrap()));
    }
    out
}

/// The empirical CDF: the sorted values with the fraction of values ≤ each (k/n for the
/// k-th smallest, 1-based). Ties give one step per value, the highest fraction last.
pub fn cdf(values: &[f64]) -> Vec<(f64, f64)> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len() as f64;
    v.iter()
        .enumerate()
        .map(|(k, &x)| (x, (k + 1) as f64 / n))
        .collect()
}

/// The Pareto front of points where both coordinates are better larger (tokens/s against
/// tokens/s/user): the points no other point beats or equals in both, sorted by x.
pub fn pareto_front(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut p: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    // By x descending (y descending on ties): a point is on the front when its y beats
    // every y seen so far.
    p.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.total_cmp(&a.1)));
    let mut front = Vec::new();
    let mut best = f64::NEG_INFINITY;
    for (x, y) in p {
        if y > best {
            front.push((x, y));
            best = y;
        }
    }
    front.reverse();
    front
}

/// Schedule lag over time: for each request (planned, sent) instant, the point
/// (planned, sent − planned). Requests are sorted by their planned instant.
pub fn lag_over_time(planned_sent: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut v: Vec<(f64, f64)> = planned_sent.iter().map(|&(p, s)| (p, s - p)).collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

/// Requests in flight over time from (start, end) intervals: a step function, one point
/// per distinct instant with the count from that instant on. At equal instants ends go
/// before starts (a request ending as another starts does not overlap it).
pub fn in_flight(intervals: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut ev: Vec<(f64, i64)> = intervals
        .iter()
        .flat_map(|&(s, e)| [(s, 1), (e, -1)])
        .collect();
    ev.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut out: Vec<(f64, f64)> = Vec::new();
    let mut n = 0i64;
    for (t, d) in ev {
        n += d;
        match out.last_mut() {
            Some(last) if last.0 == t => last.1 = n as f64,
            _ => out.push((t, n as f64)),
        }
    }
    out
}

#[cfg(test)]
mod tests;
