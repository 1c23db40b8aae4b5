//! `inferbench gate --spec FILE RUN...`: the spec parsed, the runs resolved (directories, or
//! packet cids in `--ledger`), `inferbench_run::gate::evaluate`, the verdict printed and
//! written, recorded in the ledger when one is given. Exit: the verdict's code (README).

use std::path::{Path, PathBuf};

use inferbench_ledger::{Ledger, Stamp, epochs, gates, runs};
use inferbench_run::Failure;
use inferbench_run::gate::{GateInput, evaluate, parse_file};

use crate::cli::GateArgs;

pub fn run(a: &GateArgs) -> Result<u8, Failure> {
    let spec = parse_file(&a.spec)?;
    let ledger = a.ledger.as_deref().map(Ledger::open).transpose()?;
    let entries = match &ledger {
        Some(l) => l.entries()?,
        None => Vec::new(),
    };
    let mut input = GateInput {
        tokenizer: a.tokenizer.clone(),
        ..GateInput::default()
    };
    for r in &a.runs {
        input.candidate.push(resolve(ledger.as_ref(), r)?);
    }
    // The epoch's fingerprint: written out in the spec, or the ledger's epoch of that name.
    if let Some(e) = &spec.epoch {
        if inferbench_core::canonical::is_sha256_id(e) {
            input.epoch_fingerprint = Some(e.clone());
        } else if let Some(l) = &ledger {
            let found = epochs::find_epoch(&entries, e).ok_or_else(|| {
                Failure::input(format!(
                    "{}: [gate] epoch: no epoch \"{e}\" in {}",
                    a.spec.display(),
                    l.file().display()
                ))
            })?;
            input.epoch_fingerprint = found.body["fingerprint"].as_str().map(str::to_string);
        } else {
            return Err(Failure::input(format!(
                "{}: [gate] epoch: \"{e}\" names a ledger epoch: give --ledger DIR (or write the fingerprint sha256:… in the spec)",
                a.spec.display()
            )));
        }
    }
    let mut baseline: Vec<String> = a.baseline.clone();
    if baseline.is_empty()
        && let (Some(_), Some(e)) = (&ledger, &spec.epoch)
        && let Some(pin) = epochs::find_pin(&entries, e)
    {
        baseline = pin.body["runs"]
            .as_array()
            .map(|v| {
                v.iter()
                    .filter_map(|c| c.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
    }
    for r in &baseline {
        input.baseline.push(resolve(ledger.as_ref(), r)?);
    }

    let verdict = evaluate(&spec, &input)?;
    print!("{}", verdict.console());
    if let Some(p) = &a.json {
        crate::metrics_cmd::write_report(p, verdict.to_json().as_bytes())?;
    }
    if let Some(p) = &a.markdown {
        crate::metrics_cmd::write_report(p, verdict.markdown().as_bytes())?;
    }
    if let Some(l) = &ledger {
        let by =
            a.by.clone()
                .or_else(|| std::env::var("USER").ok())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "unknown".into());
        let e = gates::record_verdict(l, &verdict, &Stamp::now(&by))?;
        println!("recorded: gate.verdict line {} cid {}", e.seq, e.cid);
    }
    Ok(verdict.exit_code)
}

/// A run given on the command line: an existing directory as it is; otherwise, with a
/// ledger, a run cid or packet id → its packet directory. The evaluator names a packet by the
/// evidence digest it recorded, so a run named by directory or by cid has the same id.
fn resolve(ledger: Option<&Ledger>, run: &str) -> Result<PathBuf, Failure> {
    let p = Path::new(run);
    if p.is_dir() {
        return Ok(p.to_path_buf());
    }
    match ledger {
        Some(l) => {
            runs::resolve(l, run).map_err(|f| Failure::input(format!("{run}: {}", f.message)))
        }
        None => Err(Failure::input(format!(
            "{run}: no such directory (a run cid needs --ledger DIR)"
        ))),
    }
}
