//! `inferbench compare`: a candidate against a baseline, metric by metric, under one
//! definition set, each an interval of the difference against a declared margin (reference
//! `ledger-gate.md` §2; user guide `docs/compare.md`).
//!
//! [`compare`] loads and scores both sides ([`load`]), checks the definition sets and the
//! epoch ([`check_epoch`]), resolves the margins ([`margins`]), runs the per-metric engine
//! ([`engine`]), turns intervals into verdicts with Holm across metrics ([`verdict`]) and
//! returns a [`Report`] that renders to a console table, Markdown or JSON ([`render`]).

pub mod engine;
pub mod load;
pub mod margins;
pub mod render;
pub mod report;
pub mod verdict;

use std::path::PathBuf;

use sha2::{Digest, Sha256};

use crate::{Failure, exit};
use load::RunData;
pub use margins::{MarginEntry, default_margins, parse_margin, parse_margins_file};
pub use report::{Report, Verdict};

/// What to compare and how.
#[derive(Clone, Debug)]
pub struct CompareSpec {
    /// Directories of each side (a run, or a `--num-profile-runs` root, or an import).
    pub baseline: Vec<PathBuf>,
    pub candidate: Vec<PathBuf>,
    /// `--definitions`: score both sides under this set (default: their common native set).
    pub definitions: Option<String>,
    /// Declared margins; empty → [`default_margins`].
    pub margins: Vec<MarginEntry>,
    /// `--goodput` in the set's syntax: adds goodput attainment to the fractions compared.
    pub goodput: Option<String>,
    pub allow_epoch_change: bool,
    /// One-sided level of each test (0.05): intervals are two-sided `1 − 2α`.
    pub alpha: f64,
    /// Bootstrap resamples for single-run comparisons.
    pub resamples: usize,
    /// Tokenizer for imported runs (as `metrics --tokenizer`).
    pub tokenizer: Option<String>,
}

impl Default for CompareSpec {
    fn default() -> Self {
        CompareSpec {
            baseline: Vec::new(),
            candidate: Vec::new(),
            definitions: None,
            margins: Vec::new(),
            goodput: None,
            allow_epoch_change: false,
            alpha: 0.05,
            resamples: 2000,
            tokenizer: None,
        }
    }
}

/// Compares the candidate runs with the baseline runs. Bad input (a missing directory,
/// different native sets without `--definitions`, an unknown metric, a comparison across
/// epochs without `allow_epoch_change`) is a [`Failure::input`].
pub fn compare(spec: &CompareSpec) -> Result<Report, Failure> {
    if !(spec.alpha > 0.0 && spec.alpha < 0.5) {
        return Err(Failure::input(format!(
            "--alpha {}: it must be between 0 and 0.5, exclusive (e.g. 0.05)",
            spec.alpha
        )));
    }
    if spec.resamples < 100 {
        return Err(Failure::input(format!(
            "--resamples {}: use at least 100 (2000 or more for a stable interval)",
            spec.resamples
        )));
    }
    if spec.baseline.is_empty() || spec.candidate.is_empty() {
        return Err(Failure::input(
            "compare needs a baseline and a candidate: BASE CAND, or --baseline DIR --candidate DIR",
        ));
    }
    let tok = spec.tokenizer.as_deref();
    let base = load::expand("baseline", &spec.baseline, tok)?;
    let cand = load::expand("candidate", &spec.candidate, tok)?;
    let set = match &spec.definitions {
        Some(s) => {
            inferbench_metrics::find(s)
                .map_err(|e| Failure::input(format!("--definitions: {e}")))?;
            s.clone()
        }
        None => common_set(&base, &cand)?,
    };
    let declared = !spec.margins.is_empty();
    let entries = if declared {
        spec.margins.clone()
    } else {
        default_margins(spec.goodput.is_some())
    };
    let mut tags: Vec<String> = entries.iter().map(|e| e.metric.clone()).collect();
    tags.sort();
    tags.dedup();
    let goodput = spec.goodput.as_deref();
    let score = |p| load::score(p, &set, goodput, &tags, tok);
    let base: Vec<RunData> = base.into_iter().map(score).collect::<Result<_, _>>()?;
    let cand: Vec<RunData> = cand.into_iter().map(score).collect::<Result<_, _>>()?;

    let mut notes = Vec::new();
    let resolved = if declared {
        margins::resolve(&entries, &base[0].summary, &set, goodput.is_some())
            .map_err(Failure::input)?
    } else {
        // A default for a metric the set or the run does not have (e.g. TTFT without
        // streaming) is left out, and said.
        let mut ok = Vec::new();
        for e in &entries {
            match margins::resolve(
                std::slice::from_ref(e),
                &base[0].summary,
                &set,
                goodput.is_some(),
            ) {
                Ok(mut r) => ok.append(&mut r),
                Err(_) => notes.push(format!(
                    "default margin for {} skipped: not in the baseline under {set}",
                    e.key
                )),
            }
        }
        notes.push(
            "margins are the built-in defaults (throughput ±3%, latency ±5%, fractions ±1.5pp): starting points, not measured values; declare yours with --margin or --margins".into(),
        );
        ok
    };
    let epoch = check_epoch(
        &base,
        &cand,
        spec.definitions.is_some(),
        spec.allow_epoch_change,
    )?;
    let settings = engine::Settings {
        alpha: spec.alpha,
        resamples: spec.resamples,
    };
    let mut metrics: Vec<_> = resolved
        .iter()
        .map(|m| engine::evaluate(m, &base, &cand, &settings, seed(&base, &cand, &m.entry.key)))
        .collect();
    let multiplicity = verdict::apply_holm(&mut metrics, spec.alpha);
    if base.len() < engine::MIN_RUNS || cand.len() < engine::MIN_RUNS {
        notes.push(format!(
            "fewer than {} runs on a side: per-request metrics are compared over requests (within-run uncertainty only; run-to-run variation is not seen)",
            engine::MIN_RUNS
        ));
    }
    let worse: Vec<String> = metrics
        .iter()
        .filter(|m| m.verdict == Verdict::Worse)
        .map(|m| m.key.clone())
        .collect();
    let refs = |runs: &[RunData]| {
        runs.iter()
            .map(|r| report::RunRef {
                path: r.path.display().to_string(),
                id: r.id.clone(),
                native_set: r.native_set.clone(),
                attempted: r.attempted,
                errors: r.errors,
                fingerprint: r.identity.as_ref().map(|i| i.fingerprint()),
            })
            .collect()
    };
    Ok(Report {
        schema: report::SCHEMA,
        definition_set: set,
        alpha: spec.alpha,
        confidence: 1.0 - 2.0 * spec.alpha,
        resamples: spec.resamples,
        margins: if declared { "declared" } else { "default" },
        baseline: refs(&base),
        candidate: refs(&cand),
        epoch,
        exit_code: if worse.is_empty() {
            exit::OK
        } else {
            exit::FAILED
        },
        worse,
        metrics,
        multiplicity,
        notes,
    })
}

/// The native set both sides share, or the one-line error naming both.
fn common_set(base: &[load::Pending], cand: &[load::Pending]) -> Result<String, Failure> {
    let first = &base[0];
    for p in base.iter().chain(cand) {
        if p.native_set != first.native_set {
            return Err(Failure::input(format!(
                "different definition sets: {} is {} and {} is {}; pass --definitions SET to score both under one",
                first.path.display(),
                first.native_set,
                p.path.display(),
                p.native_set
            )));
        }
    }
    Ok(first.native_set.clone())
}

/// The epoch check: every run's contract pins (its identity's epoch fingerprint) must agree.
/// Different fingerprints refuse the comparison unless `allow`, and the differing contract
/// pins are listed either way. With `rescored` (`--definitions` given) the `definition_set`
/// pin does not count: both sides are scored under one set. Runs without an identity are not
/// checked (said in the note).
pub fn check_epoch(
    base: &[RunData],
    cand: &[RunData],
    rescored: bool,
    allow: bool,
) -> Result<report::EpochCheck, Failure> {
    use inferbench_core::identity::{PinClass, diff};
    let all: Vec<&RunData> = base.iter().chain(cand).collect();
    let with: Vec<&RunData> = all
        .iter()
        .copied()
        .filter(|r| r.identity.is_some())
        .collect();
    if with.len() < all.len() {
        return Ok(report::EpochCheck {
            checked: false,
            matched: None,
            changed: Vec::new(),
            note: format!(
                "{} of {} runs record no identity: the epoch was not checked",
                all.len() - with.len(),
                all.len()
            ),
        });
    }
    let reference = with[0].identity.as_ref().expect("filtered");
    let mut changed: Vec<report::PinDiff> = Vec::new();
    let mut differs_at = None;
    for r in &with[1..] {
        let id = r.identity.as_ref().expect("filtered");
        if id.fingerprint() == reference.fingerprint() {
            continue;
        }
        for c in diff(reference, id) {
            let counts = c.class == PinClass::Contract
                && c.before != c.after
                && !(rescored && c.name == "definition_set");
            if counts && !changed.iter().any(|x| x.name == c.name) {
                differs_at.get_or_insert(r.path.clone());
                changed.push(report::PinDiff {
                    name: c.name,
                    before: c.before,
                    after: c.after,
                });
            }
        }
    }
    if let Some(at) = &differs_at
        && !allow
    {
        let pins: Vec<String> = changed.iter().map(|c| c.name.clone()).collect();
        return Err(Failure::input(format!(
            "{} and {} are in different epochs (contract pins differ: {}); pass --allow-epoch-change to compare anyway",
            with[0].path.display(),
            at.display(),
            pins.join(", ")
        )));
    }
    Ok(report::EpochCheck {
        checked: true,
        matched: Some(differs_at.is_none()),
        note: if differs_at.is_some() {
            "compared across epochs (--allow-epoch-change): the differing contract pins are listed"
                .into()
        } else {
            "every run has the same contract pins".into()
        },
        changed,
    })
}

/// The bootstrap seed of one metric: the first 8 bytes of SHA-256 over the runs' ids and the
/// metric key, so that the same runs give the same verdict on every machine.
fn seed(base: &[RunData], cand: &[RunData], key: &str) -> u64 {
    let mut h = Sha256::new();
    h.update(b"inferbench.compare/1\n");
    for r in base {
        h.update(r.id.as_bytes());
        h.update(b"\n");
    }
    h.update(b"--\n");
    for r in cand {
        h.update(r.id.as_bytes());
        h.update(b"\n");
    }
    h.update(key.as_bytes());
    let d = h.finalize();
    u64::from_le_bytes(d[..8].try_into().expect("32 bytes"))
}

#[cfg(test)]
mod tests;
