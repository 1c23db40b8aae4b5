//! `inferbench bridge report LEDGER [--json FILE] [--markdown FILE] [--record]`: the
//! migration packet from the ledger alone (`inferbench_ledger::bridge`).

use inferbench_ledger::{Ledger, bridge};
use inferbench_run::Failure;

use crate::cli::{BridgeArgs, BridgeCommand};

pub fn run(a: &BridgeArgs) -> Result<u8, Failure> {
    let BridgeCommand::Report {
        ledger,
        json,
        markdown,
        record,
        by,
    } = &a.command;
    let l = Ledger::open(ledger)?;
    let r = bridge::report(&l)?;
    let md = r.markdown();
    if let Some(p) = json {
        crate::metrics_cmd::write_report(p, r.to_json()?.as_bytes())?;
    }
    match markdown {
        Some(p) => crate::metrics_cmd::write_report(p, md.as_bytes())?,
        None if json.is_none() => print!("{md}"),
        None => {}
    }
    if *record {
        let e = bridge::record(&l, &r, &crate::ledger_cmd::stamp_of(by.as_deref()))?;
        eprintln!(
            "inferbench: recorded {} line {} cid {} (report {})",
            e.kind,
            e.seq,
            e.cid,
            e.body["report_digest"].as_str().unwrap_or_default()
        );
    }
    Ok(0)
}
