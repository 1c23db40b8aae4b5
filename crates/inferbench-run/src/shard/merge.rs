//! `inferbench merge SHARD_DIR... --output-dir DIR`: the shards of one sharded run become
//! one ordinary run directory.
//!
//! The set is checked first (every shard of 0..N once, the same schedule digest and frozen
//! workload, none late or unfinished). Each shard's times are then moved onto the
//! reference's clock (its wall reading plus θ, interpolated between its start and end
//! measurements) and onto one anchor, the earliest corrected shard anchor; records are
//! interleaved by their end and renumbered; and the merged evidence is replayed through
//! the record sink (`metrics DIR --write`'s path), so every metric is computed once, over
//! the merged records. The manifest's `merge` block carries the window's clock bound and
//! each shard's offset and start lag.

use std::path::{Path, PathBuf};

use inferbench_core::evidence::{
    EvidenceEnd, EvidenceHeader, EvidenceLine, PhaseWindow, StopReason,
};
use inferbench_core::manifest::Manifest;
use inferbench_core::record::{Phase, Record};
use inferbench_core::shard::clock::{OffsetLine, window};
use inferbench_core::shard::{ClockEvidence, MergeEvidence, MergedShard, ShardEvidence};

use crate::rundir::{EvidenceStream, RunDir};
use crate::sink::Finished;
use crate::{Failure, offline};

/// What a merge wrote.
pub struct Merged {
    pub dir: PathBuf,
    pub evidence: MergeEvidence,
    pub records: u64,
    pub finished: Finished,
}

struct Shard {
    dir: PathBuf,
    run: RunDir,
    manifest: Manifest,
    evidence: ShardEvidence,
    header: EvidenceHeader,
    line: OffsetLine,
}

impl Shard {
    /// A shard time (ns from its anchor) on the reference's clock, Unix ns.
    fn reference_ns(&self, t: u64) -> i128 {
        self.line.to_reference(self.header.anchor_unix_ns + t)
    }
}

/// (instant on the shard's clock, θ, ε) of one measurement: the exchange's midpoint.
fn point(c: &ClockEvidence) -> (u64, i64, Option<u64>) {
    match &c.reference {
        Some(r) => (
            r.exchange.t1 / 2 + r.exchange.t4 / 2,
            r.offset_ns,
            Some(r.epsilon_ns),
        ),
        None => (
            c.taken_at_unix_ns,
            0,
            c.kernel.as_ref().and_then(|k| k.bound_ns()),
        ),
    }
}

fn offset_line(e: &ShardEvidence) -> OffsetLine {
    let (t0, o0, e0) = point(&e.clock_start);
    let (t1, o1, e1) = e.clock_end.as_ref().map_or((t0, o0, e0), point);
    OffsetLine {
        start: (t0, o0),
        end: (t1, o1),
        epsilon_ns: e0.zip(e1).map(|(a, b)| a.max(b)),
    }
}

fn open_shard(dir: &Path) -> Result<Shard, Failure> {
    let run = RunDir::single(dir)?;
    let manifest = run.manifest()?;
    let d = dir.display();
    let Some(evidence) = manifest.shard.clone() else {
        return Err(Failure::input(format!(
            "{d}: not a shard (its manifest has no `shard`: run it with --shard-index/--shard-count)"
        )));
    };
    if evidence.late {
        return Err(Failure::input(format!(
            "{d}: shard {} started late{}: the set cannot be merged (rerun the whole set)",
            evidence.index,
            evidence
                .start
                .as_ref()
                .map(|s| format!(
                    " ({:.3} ms after --start-at, tolerance {:.3} ms)",
                    s.start_lag_ns as f64 / 1e6,
                    s.tolerance_ns as f64 / 1e6
                ))
                .unwrap_or_default()
        )));
    }
    if manifest.partial || manifest.stop_reason != StopReason::Completed {
        return Err(Failure::input(format!(
            "{d}: shard {} did not finish (stop reason {:?}): the set cannot be merged",
            evidence.index, manifest.stop_reason
        )));
    }
    let header = run.evidence_header()?;
    let line = offset_line(&evidence);
    Ok(Shard {
        dir: dir.to_path_buf(),
        run,
        manifest,
        evidence,
        header,
        line,
    })
}

/// Every shard once, one schedule, one workload; the shards in index order.
fn check_set(mut shards: Vec<Shard>) -> Result<Vec<Shard>, Failure> {
    let first = shards
        .first()
        .ok_or_else(|| Failure::input("merge: give the shard directories"))?;
    let n = first.evidence.count;
    let (digest, workload) = (
        first.evidence.schedule_sha256.clone(),
        first.manifest.dataset.workload_sha256.clone(),
    );
    let first_dir = first.dir.display().to_string();
    let mut seen: Vec<Option<String>> = vec![None; n as usize];
    for s in &shards {
        let (e, d) = (&s.evidence, s.dir.display().to_string());
        if e.count != n {
            return Err(Failure::input(format!(
                "{d}: shard of {} but {first_dir} is a shard of {n}",
                e.count
            )));
        }
        if e.schedule_sha256 != digest {
            return Err(Failure::input(format!(
                "{d}: another schedule ({}) than {first_dir} ({digest}): not shards of one run",
                e.schedule_sha256
            )));
        }
        if s.manifest.dataset.workload_sha256 != workload {
            return Err(Failure::input(format!(
                "{d}: another frozen workload than {first_dir}: not shards of one run"
            )));
        }
        match &mut seen[e.index as usize] {
            Some(other) => {
                return Err(Failure::input(format!(
                    "shard {} given twice: {other} and {d}",
                    e.index
                )));
            }
            slot => *slot = Some(d),
        }
    }
    if let Some(i) = seen.iter().position(Option::is_none) {
        return Err(Failure::input(format!(
            "shard {i} of {n} is missing: give every shard's directory"
        )));
    }
    shards.sort_by_key(|s| s.evidence.index);
    Ok(shards)
}

/// A shard's evidence, a record at a time, with its phase and end lines kept aside.
struct Cursor {
    lines: EvidenceStream,
    next: Option<Record>,
    phases: Vec<PhaseWindow>,
    end: Option<EvidenceEnd>,
}

impl Cursor {
    fn advance(&mut self) -> Result<(), Failure> {
        self.next = None;
        for line in &mut self.lines {
            match line.map_err(|e| Failure::input(e.to_string()))? {
                EvidenceLine::Record(r) => {
                    self.next = Some(*r);
                    return Ok(());
                }
                EvidenceLine::Phase(w) => self.phases.push(w),
                EvidenceLine::End(e) => self.end = Some(e),
                EvidenceLine::Header(_) => {}
            }
        }
        Ok(())
    }
}

/// Every instant of a record through `f` (shard time → merged time).
fn shift(r: &mut Record, f: &impl Fn(u64) -> u64) {
    r.planned_ns = f(r.planned_ns);
    r.start_ns = f(r.start_ns);
    r.end_ns = f(r.end_ns);
    for t in [&mut r.sent_ns, &mut r.ack_ns, &mut r.cancel_ns]
        .into_iter()
        .flatten()
    {
        *t = f(*t);
    }
    for fr in &mut r.frames {
        fr.t_ns = f(fr.t_ns);
    }
    for e in &mut r.events {
        e.t_ns = f(e.t_ns);
    }
    if let Some(c) = &mut r.connection {
        for t in [
            &mut c.dns_start_ns,
            &mut c.dns_end_ns,
            &mut c.connect_start_ns,
            &mut c.connect_end_ns,
            &mut c.tls_start_ns,
            &mut c.tls_end_ns,
            &mut c.pool_wait_start_ns,
            &mut c.pool_wait_end_ns,
            &mut c.send_start_ns,
        ]
        .into_iter()
        .flatten()
        {
            *t = f(*t);
        }
    }
}

/// Merges `dirs` into `out` (which must not hold a run already).
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<Merged, Failure> {
    if inferbench_artifacts::has_evidence(out)
        || out.join(inferbench_core::manifest::MANIFEST_FILE).exists()
    {
        return Err(Failure::input(format!(
            "--output-dir {}: already holds a run; give a new directory",
            out.display()
        )));
    }
    let shards = check_set(
        dirs.iter()
            .map(|d| open_shard(d))
            .collect::<Result<_, _>>()?,
    )?;
    let n = shards.len() as u64;
    // The merged anchor: the earliest shard anchor on the reference's clock.
    let anchor = shards
        .iter()
        .map(|s| s.reference_ns(0))
        .min()
        .unwrap_or(0)
        .max(0);
    let to_merged =
        |s: &Shard, t: u64| (s.reference_ns(t) - anchor).clamp(0, u64::MAX as i128) as u64;

    std::fs::create_dir_all(out)
        .map_err(|e| Failure::run(format!("{}: cannot create: {e}", out.display())))?;
    let first = &shards[0];
    let header = EvidenceHeader {
        anchor_unix_ns: anchor as u64,
        benchmark_id: inferbench_core::seed::sha256_hex(
            shards
                .iter()
                .map(|s| s.header.benchmark_id.as_str())
                .collect::<Vec<_>>()
                .join(",")
                .as_bytes(),
        )[..12]
            .to_string(),
        ..first.header.clone()
    };
    inferbench_artifacts::write_inputs_json(out, &first.run.inputs()?)?;
    let answers = first.dir.join(crate::side_files::EXPECTED_ANSWERS);
    if answers.is_file() {
        std::fs::copy(&answers, out.join(crate::side_files::EXPECTED_ANSWERS))
            .map_err(|e| Failure::run(format!("{}: {e}", answers.display())))?;
    }
    let mut writer = inferbench_artifacts::EvidenceWriter::create_with(
        out,
        &header,
        first.manifest.plan.artifacts.evidence_compression,
    )?;

    // Interleave by merged end time (each file is in completion order already).
    let mut cursors = Vec::with_capacity(shards.len());
    for s in &shards {
        let mut c = Cursor {
            lines: s.run.evidence()?,
            next: None,
            phases: Vec::new(),
            end: None,
        };
        c.advance()?;
        cursors.push(c);
    }
    let mut counts = vec![0u64; shards.len()];
    let mut id = 0u64;
    loop {
        let pick = cursors
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                c.next
                    .as_ref()
                    .map(|r| (to_merged(&shards[i], r.end_ns), i))
            })
            .min();
        let Some((_, i)) = pick else { break };
        let Some(mut r) = cursors[i].next.take() else {
            break;
        };
        let s = &shards[i];
        shift(&mut r, &|t| to_merged(s, t));
        // Unique over the merged run: ids in merged order, the rest interleaved by shard.
        let k = s.evidence.index as u64;
        r.id = id;
        r.session_num = r.session_num * n + k;
        r.worker = (u64::from(r.worker) * n + k).min(u64::from(u32::MAX)) as u32;
        if let Some(c) = &mut r.connection {
            c.id = c.id * n + k;
        }
        writer.write_record(&r)?;
        id += 1;
        counts[i] += 1;
        cursors[i].advance()?;
    }

    // The merged profiling window, and each shard's on the reference clock.
    let mut merged: Option<PhaseWindow> = None;
    let mut edges = Vec::with_capacity(shards.len());
    let mut raw = (i128::MAX, i128::MIN);
    for (s, c) in shards.iter().zip(&cursors) {
        let w = c
            .phases
            .iter()
            .find(|w| w.phase == Phase::Profiling)
            .copied()
            .ok_or_else(|| {
                Failure::input(format!(
                    "{}: no profiling window in its evidence",
                    s.dir.display()
                ))
            })?;
        edges.push((
            s.reference_ns(w.start_ns),
            s.reference_ns(w.requests_end_ns),
            s.line.epsilon_ns,
        ));
        let a = s.header.anchor_unix_ns as i128;
        raw = (
            raw.0.min(a + w.start_ns as i128),
            raw.1.max(a + w.requests_end_ns as i128),
        );
        let m = PhaseWindow {
            phase: Phase::Profiling,
            start_ns: to_merged(s, w.start_ns),
            sent_end_ns: to_merged(s, w.sent_end_ns),
            requests_end_ns: to_merged(s, w.requests_end_ns),
            ..w
        };
        merged = Some(match merged {
            None => m,
            Some(x) => PhaseWindow {
                phase: Phase::Profiling,
                start_ns: x.start_ns.min(m.start_ns),
                sent_end_ns: x.sent_end_ns.max(m.sent_end_ns),
                requests_end_ns: x.requests_end_ns.max(m.requests_end_ns),
                scheduled: x.scheduled + m.scheduled,
                completed: x.completed + m.completed,
                errors: x.errors + m.errors,
                cancelled: x.cancelled || m.cancelled,
            },
        });
    }
    let merged = merged.ok_or_else(|| Failure::input("merge: no shard"))?;
    writer.write_phase(&merged)?;
    let end_ns = shards
        .iter()
        .zip(&cursors)
        .filter_map(|(s, c)| c.end.as_ref().map(|e| to_merged(s, e.end_ns)))
        .max()
        .unwrap_or(merged.requests_end_ns);
    let end = EvidenceEnd {
        stop_reason: StopReason::Completed,
        end_ns,
        records: id,
    };
    writer.finish(end.clone())?;

    let bound = window(&edges).ok_or_else(|| Failure::input("merge: no shard"))?;
    let evidence = MergeEvidence {
        shard_count: n as u32,
        schedule_sha256: first.evidence.schedule_sha256.clone(),
        window_ns: bound.window_ns,
        window_bound_ns: bound.bound_ns,
        window_bound_ppm: bound.ppm(),
        max_bound_ns: bound.max_bound_ns,
        raw_window_ns: (raw.1 - raw.0).clamp(0, u64::MAX as i128) as u64,
        start_shard: bound.start_shard as u32,
        end_shard: bound.end_shard as u32,
        shards: shards
            .iter()
            .zip(&counts)
            .map(|(s, &records)| MergedShard {
                index: s.evidence.index,
                dir: s.dir.display().to_string(),
                benchmark_id: s.header.benchmark_id.clone(),
                records,
                offset_start_ns: s.line.start.1,
                offset_end_ns: s.line.end.1,
                epsilon_ns: s.line.epsilon_ns,
                drift_ppm: s.line.drift_ppm(),
                start_lag_ns: s.evidence.start.as_ref().map(|x| x.start_lag_ns),
                host: Some(s.manifest.host.clone()),
                clock_start: Some(s.evidence.clock_start.clone()),
                clock_end: s.evidence.clock_end.clone(),
            })
            .collect(),
    };

    let mut m = first.manifest.clone();
    m.benchmark_id = header.benchmark_id.clone();
    m.anchor_unix_ns = header.anchor_unix_ns;
    m.plan.shard = None;
    m.plan.artifacts.run_dir = out.to_string_lossy().into_owned();
    m.started_at = inferbench_core::time::iso_utc_seconds(header.anchor_unix_ns);
    m.ended_at = Some(inferbench_core::time::iso_utc_seconds(
        header.anchor_unix_ns + end_ns,
    ));
    m.stop_reason = StopReason::Completed;
    m.partial = false;
    m.shard = None;
    m.merge = Some(evidence.clone());
    // Shard 0's host fields stay; this says they are one of N (all in `merge.shards`).
    m.host.merged_hosts = Some(n as u32);
    // The schedule's whole request count, as an unsharded run of it pins.
    if m.plan.load.benchmark_duration_s.is_none()
        && let Some(id) = &mut m.identity
        && shards.iter().all(|s| s.evidence.requests.is_some())
    {
        let total: u64 = shards.iter().filter_map(|s| s.evidence.requests).sum();
        id.set(
            "request_count",
            serde_json::json!(total),
            inferbench_core::identity::Provenance::Measured,
        );
    }
    inferbench_artifacts::write_manifest(out, &m)?;
    let run = RunDir::single(out)?;
    let finished = offline::rewrite(&run, &m)?;
    Ok(Merged {
        dir: out.to_path_buf(),
        evidence,
        records: id,
        finished,
    })
}
