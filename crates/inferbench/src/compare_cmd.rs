//! `inferbench compare BASE CAND`: flags → `inferbench_run::compare` → the table on stdout,
//! `--json` and `--markdown` files, and the exit code (0 nothing worse, 1 a metric worse, 2
//! bad input). Guide: `docs/compare.md`.

use std::path::Path;

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
        write(p, report.to_json().as_bytes())?;
    }
    if let Some(p) = &a.markdown {
        write(p, report.markdown().as_bytes())?;
    }
    Ok(report.exit_code)
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| Failure::input(format!("{}: not a file name", path.display())))?;
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::run(format!("{}: cannot create: {e}", dir.display())))?;
    let p = crate::metrics_cmd::write_file(dir, &name.to_string_lossy(), bytes)?;
    eprintln!("inferbench: wrote {}", p.display());
    Ok(())
}
