//! The run pipeline of inferbench, as a library: what `profile`, `metrics` and every later
//! reader of a run directory share.
//!
//! - [`prepare`]: a validated plan becomes the frozen workload, payloads, phases, sampler,
//!   engine configuration and SLOs, before any network traffic.
//! - [`sink`]: the record sink. Every record, live from the engine or replayed from the
//!   evidence file, goes through the same fold and the same exports; side files are
//!   registered in [`side_files`]. Live and offline files are identical by construction.
//! - [`live`]: one live run; [`sweep`]: the cells of a sweep and repeated runs, with their
//!   aggregates; progress and signals are reported through an [`observer::Observer`].
//! - [`rundir`]: the run-directory layouts and our own files read back as types.
//! - [`offline`]: re-scoring and rewriting a run from disk, and loading imports.
//!
//! Nothing here prints: the binary does, from the observer's events and the results.

pub mod breakdown;
pub mod chat;
pub mod compare;
pub mod convergence;
pub mod correctness;
pub mod describe;
mod failure;
pub mod fold;
pub mod gate;
pub mod grade;
pub mod identity;
pub mod live;
pub mod live_stats;
pub mod observer;
pub mod offline;
pub mod prepare;
pub mod qualify;
pub mod qualify_run;
pub mod routing;
pub mod run_identity;
pub mod rundir;
mod self_hash;
pub mod server_profiler;
pub mod sessions;
pub mod shard;
pub mod side_files;
pub mod sim;
pub mod sink;
pub mod sweep;
pub mod telemetry;
/// A minimal plan, for tests and examples (not a default of the command line).
#[doc(hidden)]
pub mod test_plan;
pub mod timeslices;
pub mod trials;
pub mod wait_model;

pub use failure::{Failure, exit};
pub use live::{ClientResources, RunReport, run_one};
pub use observer::{Event, Observer, Quiet};
pub use prepare::{Prepared, prepare};
pub use rundir::{Layout, RunDir};
pub use self_hash::cache_dir;
pub use sweep::{CellPlan, SweepOutcome, SweepPlan, run_sweep, run_sweep_declared};
pub use trials::SweepMode;
