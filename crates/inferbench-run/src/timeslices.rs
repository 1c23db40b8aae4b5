//! AIPerf's timeslice files (`--slice-duration`): written by the record sink at the end of
//! a run from the evidence file on disk, in two passes (the grid starts at the earliest
//! record start, known only once every record is in). A live run and `metrics DIR
//! --slice-duration S` call the same function on the same evidence, so both write the same
//! bytes.

use std::path::Path;

use inferbench_core::{EvidenceLine, Phase, RunPlan};
use inferbench_metrics::aiperf::Slo;
use inferbench_metrics::aiperf::timeslice::{SliceBounds, Timeslice, TimesliceAccumulator};

use crate::Failure;

fn evidence(dir: &Path) -> Result<crate::rundir::EvidenceStream, Failure> {
    let p = inferbench_artifacts::evidence_file_in(dir)
        .ok_or_else(|| Failure::input(format!("{}: no evidence file", dir.display())))?;
    let input = inferbench_artifacts::open_evidence(&p)
        .map_err(|e| Failure::input(format!("{}: {e}", p.display())))?;
    inferbench_core::evidence::EvidenceReader::new(input, &p.display().to_string())
        .map_err(|e| Failure::input(e.to_string()))
}

/// Calls `f` on every profiling record of the evidence in `dir`, in file order.
fn each_profiling(dir: &Path, mut f: impl FnMut(&inferbench_core::Record)) -> Result<(), Failure> {
    let mut lines = evidence(dir)?;
    for line in &mut lines {
        if let EvidenceLine::Record(r) = line.map_err(|e| Failure::input(e.to_string()))?
            && r.phase() == Phase::Profiling
        {
            f(&r);
        }
    }
    Ok(())
}

/// The profiling phase's timeslices of the run in `dir`, `slice_s` seconds each.
pub fn compute(
    dir: &Path,
    slice_s: f64,
    slos: &[Slo],
    confidence_level: f64,
) -> Result<Vec<Timeslice>, Failure> {
    // AIPerf: int(slice_duration × 1e9).
    let slice_ns = (slice_s * 1e9) as u64;
    let header = evidence(dir)?.header().clone();
    let mut bounds = SliceBounds::new(header.anchor_unix_ns);
    each_profiling(dir, |r| bounds.push(r))?;
    let Some(grid) = bounds.grid(slice_ns) else {
        return Ok(Vec::new());
    };
    let mut acc = TimesliceAccumulator::new(&header, grid, slos.to_vec(), confidence_level);
    each_profiling(dir, |r| acc.push(r))?;
    Ok(acc.finish())
}

/// Writes both timeslice files into `dir` (atomically) when the plan asks for them; returns
/// their names (none when the run has no profiling record).
pub fn write(
    dir: &Path,
    plan: &RunPlan,
    names: &inferbench_artifacts::FileNames,
    slos: &[Slo],
) -> Result<Vec<String>, Failure> {
    let Some(s) = plan.artifacts.slice_duration_s else {
        return Ok(Vec::new());
    };
    let slices = compute(dir, s, slos, plan.confidence_level)?;
    if slices.is_empty() {
        return Ok(Vec::new());
    }
    let (json_name, csv_name) = inferbench_artifacts::timeslices::timeslice_names(names);
    let config = inferbench_artifacts::input_config::aiperf_input_config(plan);
    let json = inferbench_artifacts::timeslices::render_timeslices_json(&slices, &config)
        .map_err(|e| Failure::run(format!("{json_name}: {e}")))?;
    let csv = inferbench_artifacts::timeslices::render_timeslices_csv(&slices);
    for (name, bytes) in [(&json_name, json.as_slice()), (&csv_name, csv.as_bytes())] {
        let mut f = inferbench_artifacts::AtomicFile::create(dir, name)?;
        f.write_all(bytes)?;
        f.commit()?;
    }
    Ok(vec![json_name, csv_name])
}
