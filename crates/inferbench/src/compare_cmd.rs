//! `inferbench compare BASE CAND`: flags → `inferbench_run::compare` → the table on stdout,
//! `--json` and `--markdown` files, and the exit code (0 nothing worse, 1 a metric worse, 2
//! bad input). Guide: `docs/compare.md`. With `--ledger DIR` the sides may be run cids and
//! the comparison is recorded as a `comparison.record` entry.

use std::path::{Path, PathBuf};

use inferbench_ledger::{Ledger, comparisons, runs};

use inferbench_run::Failure;
use inferbench_run::compare::{CompareSpec, compare, parse_margin, parse_margins_file};

use crate::cli::CompareArgs;

pub fn run(a: &CompareArgs) -> Result<u8, Failure> {
    let (mut baseline, mut candidate) = (a.baseline.clone(), a.candidate.clone());
    match a.dirs.as_slice() {
        [] => {}
        [b, c] => {
            baseline.insert(0, b.clone());
            candidate.insert(0, c.clone());
        }
        [one] => {
            return Err(Failure::input(format!(
                "compare {}: give BASE and CAND, or --baseline and --candidate",
                one.display()
            )));
        }
        _ => unreachable!("clap takes at most two"),
    }
    let mut margins = Vec::new();
    for m in &a.margin {
        margins.push(parse_margin(m, "--margin").map_err(Failure::input)?);
    }
    if let Some(f) = &a.margins {
        margins
            .extend(parse_margins_file(f).map_err(|e| Failure::input(format!("--margins {e}")))?);
    }
    // With a ledger: every side named by its run entry (a cid resolves to its packet).
    let ledger = a.ledger.as_ref().map(|d| Ledger::open(d)).transpose()?;
    let mut sides = (Vec::new(), Vec::new());
    if let Some(l) = &ledger {
        let entries = l.entries()?;
        for (given, cids) in [
            (&mut baseline, &mut sides.0),
            (&mut candidate, &mut sides.1),
        ] {
            for g in given.iter_mut() {
                let (cid, dir) = side_in_ledger(l, &entries, g)?;
                cids.push(cid);
                *g = dir;
            }
        }
    }
    let report = compare(&CompareSpec {
        baseline,
        candidate,
        definitions: a.definitions.clone(),
        margins,
        goodput: a.goodput.clone(),
        allow_epoch_change: a.allow_epoch_change,
        alpha: a.alpha,
        resamples: a.resamples,
        tokenizer: a.tokenizer.clone(),
    })?;
    print!("{}", report.console());
    if let Some(p) = &a.json {
        crate::metrics_cmd::write_report(p, report.to_json().as_bytes())?;
    }
    if let Some(p) = &a.markdown {
        crate::metrics_cmd::write_report(p, report.markdown().as_bytes())?;
    }
    if let Some(l) = &ledger {
        let e = comparisons::record(
            l,
            &report,
            &sides.0,
            &sides.1,
            &crate::ledger_cmd::stamp_of(None),
        )?;
        eprintln!(
            "inferbench: recorded {} line {} cid {} (overall {})",
            e.kind,
            e.seq,
            e.cid,
            e.body["overall"].as_str().unwrap_or_default()
        );
    }
    Ok(report.exit_code)
}

/// A side given on the command line, in the ledger: a directory is found by its content
/// (`comparisons::run_of_dir`), anything else is a run cid or packet id; (cid, directory to
/// read).
fn side_in_ledger(
    l: &Ledger,
    entries: &[inferbench_ledger::Entry],
    given: &Path,
) -> Result<(String, PathBuf), Failure> {
    if given.is_dir() {
        let e = comparisons::run_of_dir(l, entries, given)?;
        return Ok((e.cid.clone(), given.to_path_buf()));
    }
    let text = given.to_string_lossy();
    let dir = runs::resolve(l, &text)
        .map_err(|f| Failure::input(format!("{text}: neither a directory nor {}", f.message)))?;
    let e = comparisons::run_of_dir(l, entries, &dir)?;
    Ok((e.cid.clone(), dir))
}
