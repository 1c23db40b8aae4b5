//! Kubernetes manifests for a sharded run (docs/scale-out.md): a plain `batch/v1` Indexed
//! Job (one pod per shard, `backoffLimitPerIndex: 0`, `maxFailedIndexes: 0`, a
//! `podFailurePolicy` that fails the run on a late start and ignores disruptions), a
//! headless Service for stable pod names, and the run's input files as a ConfigMap.
//!
//! Built from small serde structs that mirror the API's field names (`api`), not from
//! `k8s-openapi` (whose compile time the CI budget cannot carry); CI validates the golden
//! output with `kubernetes-validate --strict` for 1.33 and the newest version it knows.
//! Pure: no I/O, no clock.

pub mod api;
pub mod collect;
mod render;
pub mod yaml;

pub use render::{
    API_KEY_ENV, ConfigFile, HeaderSecret, RenderSpec, SecretRef, Toleration, header_env,
    parse_header_secret, parse_secret_ref, parse_toleration, render,
};

/// The exit code of a late shard (`inferbench_run::exit::LATE_START`): the pod failure
/// policy fails its index on it.
pub const LATE_START_EXIT: i32 = 6;
/// The UDP port of each pod's `inferbench time-server` sidecar.
pub const TIME_PORT: i32 = 9123;
/// Where the results volume is mounted.
pub const RESULTS_MOUNT: &str = "/results";
/// Where the ConfigMap's files are mounted.
pub const INPUTS_MOUNT: &str = "/inferbench/inputs";
/// The largest ConfigMap Kubernetes stores (1 MiB, all keys together).
pub const CONFIGMAP_LIMIT: usize = 1024 * 1024;
