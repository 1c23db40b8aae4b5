//! `inferbench ledger …`: flags to `inferbench_ledger` calls, and their text to stdout.

use inferbench_ledger::{Ledger, Stamp, epochs, merge, runs, verify, view};

use crate::Failure;
use crate::cli::{LedgerArgs, LedgerBaselineCommand, LedgerCommand, LedgerEpochCommand};

fn stamp(a: &LedgerArgs) -> Stamp {
    stamp_of(a.by.as_deref())
}

/// The wall clock, and `by`, else `$USER`, else `unknown` (also for `compare --ledger` and
/// `bridge report --record`).
pub fn stamp_of(by: Option<&str>) -> Stamp {
    let by = by
        .map(str::to_string)
        .or_else(|| std::env::var("USER").ok())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into());
    Stamp::now(&by)
}

pub fn run(a: &LedgerArgs) -> Result<u8, Failure> {
    let open = || Ledger::open(&a.ledger);
    let out = match &a.command {
        LedgerCommand::Init { dir } => {
            let dir = dir.as_ref().unwrap_or(&a.ledger);
            let l = Ledger::init(dir, &stamp(a))?;
            format!("ledger created: {}\n", l.file().display())
        }
        LedgerCommand::Add { run, declare } => runs::add(&open()?, run, declare, &stamp(a))?
            .iter()
            .map(runs::Added::render)
            .collect(),
        LedgerCommand::Import {
            dir,
            declare,
            tokenizer,
        } => runs::import(&open()?, dir, declare, tokenizer.as_deref(), &stamp(a))?.render(),
        LedgerCommand::Epoch {
            command:
                LedgerEpochCommand::Declare {
                    name,
                    from,
                    parent,
                    reason,
                },
        } => {
            let (e, report) = epochs::declare(
                &open()?,
                name,
                from,
                parent.as_deref(),
                reason.as_deref(),
                &stamp(a),
            )?;
            format!(
                "epoch {name}: line {} cid {} fingerprint {}\n{}",
                e.seq,
                e.cid,
                e.body["fingerprint"].as_str().unwrap_or_default(),
                epochs::render_decision(&report)
            )
        }
        LedgerCommand::Baseline {
            command:
                LedgerBaselineCommand::Pin {
                    epoch,
                    runs,
                    purpose,
                    allow_comparable,
                },
        } => {
            let e = epochs::pin(
                &open()?,
                epoch,
                runs,
                purpose.as_deref(),
                *allow_comparable,
                &stamp(a),
            )?;
            format!(
                "baseline of {epoch}: {} run(s) pinned, line {} cid {}\n",
                runs.len(),
                e.seq,
                e.cid
            )
        }
        LedgerCommand::Decide { run_cid, against } => {
            epochs::decide(&open()?, run_cid, against.as_deref())?.render()
        }
        LedgerCommand::Show => view::show(&open()?.entries()?),
        LedgerCommand::Log => view::log(&open()?.entries()?),
        LedgerCommand::Verify => {
            let r = verify::verify(&open()?)?;
            print!("{}", r.render());
            return Ok(if r.ok() { 0 } else { 1 });
        }
        LedgerCommand::Merge => merge::merge(&open()?)?.render(),
    };
    print!("{out}");
    Ok(0)
}
