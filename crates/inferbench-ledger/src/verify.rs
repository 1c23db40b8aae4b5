//! `ledger verify`: every line canonical, every `cid` and `hash` recomputed, the chain
//! (`prev`, `seq`) unbroken, and every packet's files and id recomputed. Names the first bad
//! line and field, or the packet and file.

use std::collections::BTreeSet;

use crate::entry::{Entry, GENESIS, parse_line};
use crate::packet;
use crate::store::{Ledger, split_lines};
use inferbench_run::Failure;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    pub entries: usize,
    pub packets: usize,
    /// The head hash when the chain is whole.
    pub head: Option<String>,
    /// Corruption, first bad ledger line first: each names where.
    pub problems: Vec<String>,
    /// Not corruption (evidence absent, an unreferenced packet).
    pub notes: Vec<String>,
}

impl VerifyReport {
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }

    pub fn render(&self) -> String {
        let mut s = String::new();
        for p in &self.problems {
            s.push_str(&format!("FAIL {p}\n"));
        }
        for n in &self.notes {
            s.push_str(&format!("note {n}\n"));
        }
        match (&self.head, self.ok()) {
            (Some(h), true) => s.push_str(&format!(
                "ok: {} entries, {} packets, head {h}\n",
                self.entries, self.packets
            )),
            _ => s.push_str(&format!(
                "verify failed: {} problem(s)\n",
                self.problems.len()
            )),
        }
        s
    }
}

/// The first problem of one line against its predecessor, as `line N: field: why`.
fn check_line(raw: &[u8], n: usize, prev: Option<&Entry>) -> Result<Entry, String> {
    let e = parse_line(raw, n).map_err(|e| e.to_string())?;
    let bad = |field: &str, why: String| Err(format!("line {n}: {field}: {why}"));
    let expect_seq = prev.map_or(1, |p| p.seq + 1);
    if e.seq != expect_seq {
        return bad("seq", format!("{} where {expect_seq} follows", e.seq));
    }
    let expect_prev = prev.map_or(GENESIS, |p| p.hash.as_str());
    if e.prev != expect_prev {
        return bad(
            "prev",
            format!("{} is not the previous line's hash {expect_prev}", e.prev),
        );
    }
    let cid = e
        .expected_cid()
        .map_err(|m| format!("line {n}: body: {m}"))?;
    if e.cid != cid {
        return bad(
            "cid",
            format!(
                "{} but the body digests to {cid} (the body was changed)",
                e.cid
            ),
        );
    }
    let hash = e.expected_hash().map_err(|m| format!("line {n}: {m}"))?;
    if e.hash != hash {
        return bad(
            "hash",
            format!("{} but the entry digests to {hash}", e.hash),
        );
    }
    // Equal content in another spelling still hashes equal: the bytes must be canonical too.
    let canonical = e.to_line().map_err(|m| format!("line {n}: {m}"))?;
    if canonical.as_bytes() != raw {
        let at = raw
            .iter()
            .zip(canonical.as_bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(raw.len().min(canonical.len()));
        return bad(
            "line",
            format!("not canonical JSON (differs at byte {})", at + 1),
        );
    }
    Ok(e)
}

/// The packet ids the entries refer to, with the line that first does.
fn referenced(entries: &[Entry]) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = Vec::new();
    for e in entries {
        if let Some(p) = e.body.get("packet").and_then(|p| p.as_str())
            && !out.iter().any(|(q, _)| q == p)
        {
            out.push((p.to_string(), e.seq));
        }
    }
    out
}

pub fn verify(ledger: &Ledger) -> Result<VerifyReport, Failure> {
    let bytes = ledger.read_bytes()?;
    let raw = split_lines(&bytes);
    let file = crate::store::LEDGER_FILE;
    let mut report = VerifyReport::default();
    let mut entries: Vec<Entry> = Vec::new();
    let mut chain_ok = true;
    for (i, l) in raw.lines.iter().enumerate() {
        match check_line(l, i + 1, entries.last()) {
            Ok(e) => entries.push(e),
            Err(m) => {
                // Later lines chain to a bad one: only the first is worth naming.
                report.problems.push(format!("{file} {m}"));
                chain_ok = false;
                break;
            }
        }
    }
    if chain_ok && let Some(cut) = &raw.cut {
        report.problems.push(format!(
            "{file} line {}: cut ({} bytes, no newline at the end): an append was interrupted; truncate the file after line {}",
            raw.lines.len() + 1,
            cut.len(),
            raw.lines.len()
        ));
        chain_ok = false;
    }
    if raw.lines.is_empty() && raw.cut.is_none() {
        report
            .problems
            .push(format!("{file}: empty (no ledger.init line)"));
        chain_ok = false;
    }
    report.entries = entries.len();
    if chain_ok {
        report.head = entries.last().map(|e| e.hash.clone());
    }
    let refs = referenced(&entries);
    let mut seen = BTreeSet::new();
    let mut dirs: Vec<_> = std::fs::read_dir(ledger.packets())
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let name = dir
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        if name.starts_with(".tmp-") {
            report.notes.push(format!(
                "packets/{name}: an unfinished packet (not referenced); it can be removed"
            ));
            continue;
        }
        report.packets += 1;
        let c = packet::check(&dir);
        report.problems.extend(c.problems);
        if c.evidence_absent {
            report.notes.push(format!(
                "packet {name}: evidence absent ({}): the run is context only for metrics that need its records",
                packet::RECORDS
            ));
        }
        let id = name.replacen('-', ":", 1);
        if !refs.iter().any(|(r, _)| *r == id) {
            report
                .notes
                .push(format!("packet {name}: not referenced by any entry"));
        }
        seen.insert(id);
    }
    for (id, line) in refs {
        if !seen.contains(&id) {
            report.problems.push(format!(
                "{file} line {line}: body.packet: packet {id} is not in packets/"
            ));
        }
    }
    Ok(report)
}
