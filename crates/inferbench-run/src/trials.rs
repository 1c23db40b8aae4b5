//! The trials of a sweep: in which order the (cell, trial) runs go, where each writes, and
//! the seed of each trial (AIPerf 0.13's `--parameter-sweep-mode`, `--vary-seed-per-trial`).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// `--parameter-sweep-mode`: the order of a sweep's runs when each cell runs several times.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SweepMode {
    /// Trials outer, cells inner: trial 1 of every cell, then trial 2 of every cell, …
    /// (AIPerf's default).
    #[default]
    Repeated,
    /// Cells outer, trials inner: every trial of the first cell, then of the next, …
    Independent,
}

impl SweepMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SweepMode::Repeated => "repeated",
            SweepMode::Independent => "independent",
        }
    }
}

/// The (cell index, trial index) of every run, in the order they run.
pub fn run_order(cells: usize, trials: usize, mode: SweepMode) -> Vec<(usize, usize)> {
    match mode {
        SweepMode::Repeated => (0..trials)
            .flat_map(|k| (0..cells).map(move |c| (c, k)))
            .collect(),
        SweepMode::Independent => (0..cells)
            .flat_map(|c| (0..trials).map(move |k| (c, k)))
            .collect(),
    }
}

/// Where one run writes, AIPerf's layout: a plain run in `root`; repeats of a plain run in
/// `root/profile_runs/run_NNNN`; a sweep's cell in `root/<cell>`; several trials of a
/// sweep in `root/profile_runs/trial_NNNN/<cell>` (repeated) or
/// `root/<cell>/profile_runs/trial_NNNN` (independent). `trial` is 0-based.
pub fn run_dir(
    root: &Path,
    cell: Option<&str>,
    trials: usize,
    mode: SweepMode,
    trial: usize,
) -> PathBuf {
    match (cell, trials > 1) {
        (None, false) => root.to_path_buf(),
        (None, true) => root.join("profile_runs").join(run_label(false, trial)),
        (Some(c), false) => root.join(c),
        (Some(c), true) => match mode {
            SweepMode::Repeated => root
                .join("profile_runs")
                .join(run_label(true, trial))
                .join(c),
            SweepMode::Independent => root
                .join(c)
                .join("profile_runs")
                .join(run_label(true, trial)),
        },
    }
}

/// A run's label: `run_NNNN` for the repeats of a plain run, `trial_NNNN` for a sweep's
/// (AIPerf names them so; its plotters depend on the difference).
pub fn run_label(is_sweep: bool, trial: usize) -> String {
    if is_sweep {
        format!("trial_{:04}", trial + 1)
    } else {
        format!("run_{:04}", trial + 1)
    }
}

/// A cell's confidence aggregate: `root/aggregate` for a plain run, `root/aggregate/<cell>`
/// in repeated mode and `root/<cell>/aggregate` in independent mode.
pub fn aggregate_dir(root: &Path, cell: Option<&str>, mode: SweepMode) -> PathBuf {
    match (cell, mode) {
        (None, _) => root.join("aggregate"),
        (Some(c), SweepMode::Repeated) => root.join("aggregate").join(c),
        (Some(c), SweepMode::Independent) => root.join(c).join("aggregate"),
    }
}

/// The sweep's summary: under `aggregate/` when trials of a repeated sweep interleave
/// (no cell is complete before the last trial), else at the top of the tree.
pub fn sweep_aggregate_dir(root: &Path, trials: usize, mode: SweepMode) -> PathBuf {
    if trials > 1 && mode == SweepMode::Repeated {
        root.join("aggregate").join("sweep_aggregate")
    } else {
        root.join("sweep_aggregate")
    }
}

/// `--vary-seed-per-trial`: the seed of one trial of one cell, the first 8 bytes (big
/// endian) of SHA-256 over `"{base}:variation:{label}:trial:{trial}"`, masked to 63 bits
/// (AIPerf's derivation). `label` is the cell's `name=value, …` (`base` for a plain run).
pub fn trial_seed(base: u64, label: &str, trial: usize) -> u64 {
    let text = format!("{base}:variation:{label}:trial:{trial}");
    let digest = Sha256::digest(text.as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(b) & (i64::MAX as u64)
}

/// A cell's label for [`trial_seed`]: its parameters as `name=value` joined by `, `.
pub fn cell_label(parameters: &[(String, serde_json::Value)]) -> String {
    if parameters.is_empty() {
        return "base".into();
    }
    parameters
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_runs_every_cell_per_trial_independent_every_trial_per_cell() {
        assert_eq!(
            run_order(2, 3, SweepMode::Repeated),
            vec![(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2)]
        );
        assert_eq!(
            run_order(2, 3, SweepMode::Independent),
            vec![(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
        );
    }

    #[test]
    fn the_layout_is_aiperfs() {
        let r = Path::new("/r");
        let m = SweepMode::Repeated;
        let i = SweepMode::Independent;
        assert_eq!(run_dir(r, None, 1, m, 0), Path::new("/r"));
        assert_eq!(
            run_dir(r, None, 3, i, 1),
            Path::new("/r/profile_runs/run_0002")
        );
        assert_eq!(run_dir(r, Some("c_2"), 1, i, 0), Path::new("/r/c_2"));
        assert_eq!(
            run_dir(r, Some("c_2"), 2, m, 1),
            Path::new("/r/profile_runs/trial_0002/c_2")
        );
        assert_eq!(
            run_dir(r, Some("c_2"), 2, i, 0),
            Path::new("/r/c_2/profile_runs/trial_0001")
        );
        assert_eq!(
            aggregate_dir(r, Some("c_2"), m),
            Path::new("/r/aggregate/c_2")
        );
        assert_eq!(
            aggregate_dir(r, Some("c_2"), i),
            Path::new("/r/c_2/aggregate")
        );
        assert_eq!(
            sweep_aggregate_dir(r, 2, m),
            Path::new("/r/aggregate/sweep_aggregate")
        );
        assert_eq!(
            sweep_aggregate_dir(r, 1, m),
            Path::new("/r/sweep_aggregate")
        );
        assert_eq!(
            sweep_aggregate_dir(r, 2, i),
            Path::new("/r/sweep_aggregate")
        );
    }

    #[test]
    fn a_trial_seed_is_the_masked_sha256_prefix() {
        // SHA-256("42:variation:base:trial:0") computed independently with Python's
        // hashlib: int.from_bytes(digest[:8], "big") & (2**63 - 1).
        assert_eq!(trial_seed(42, "base", 0), EXPECTED_42_BASE_0);
        assert_ne!(trial_seed(42, "base", 0), trial_seed(42, "base", 1));
        assert!(trial_seed(7, "concurrency=4", 3) <= i64::MAX as u64);
    }

    const EXPECTED_42_BASE_0: u64 = 6_858_774_025_263_032_934;

    #[test]
    fn a_cell_label_names_its_values() {
        assert_eq!(cell_label(&[]), "base");
        assert_eq!(
            cell_label(&[
                ("concurrency".into(), serde_json::json!(4)),
                ("isl".into(), serde_json::json!(128))
            ]),
            "concurrency=4, isl=128"
        );
    }
}
