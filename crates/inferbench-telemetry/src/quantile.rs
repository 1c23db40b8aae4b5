//! `histogram_quantile` over classic buckets, exactly as Prometheus computes it
//! (`bucketQuantile`). A value from it is a "server histogram estimate", never a percentile
//! of the requests. (Skeleton: being written.)

use serde::{Deserialize, Serialize};

/// One cumulative bucket: upper bound (`le`, `+Inf` allowed) and count.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    pub le: f64,
    pub count: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub value: f64,
    /// The counts were not monotonic and were forced (Prometheus does the same, and flags it).
    pub forced_monotonic: bool,
}

/// φ ∈ [0, 1] of the buckets (in any order; equal bounds are merged).
pub fn histogram_quantile(phi: f64, buckets: &[Bucket]) -> Estimate {
    let _ = (phi, buckets);
    Estimate {
        value: f64::NAN,
        forced_monotonic: false,
    }
}
