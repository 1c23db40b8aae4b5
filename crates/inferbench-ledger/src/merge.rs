//! `ledger merge`: after a git merge of two branches that both appended, `ledger.jsonl`
//! holds conflict markers (or both tails one after the other, with a union merge). Every
//! entry of every side is kept; the common prefix stays as it is; the new tails are ordered
//! by (`at`, `cid`) and re-linked (`seq`, `prev`, `hash`). `cid`s do not change, so every
//! reference by cid stays valid.

use std::collections::HashSet;

use inferbench_run::Failure;

use crate::entry::{Entry, GENESIS, parse_line};
use crate::store::Ledger;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergeReport {
    /// Entries before the fork, kept as they were.
    pub prefix: usize,
    /// Entries after it, re-linked.
    pub relinked: usize,
    /// Identical entries found on both sides, kept once.
    pub duplicates: usize,
    pub head: String,
}

impl MergeReport {
    pub fn render(&self) -> String {
        format!(
            "merged: {} common entries kept, {} re-linked after them (ordered by at, cid), {} duplicate(s) kept once; head {}\n",
            self.prefix, self.relinked, self.duplicates, self.head
        )
    }
}

fn is_marker(l: &[u8]) -> bool {
    [b"<<<<<<<".as_slice(), b"=======", b">>>>>>>", b"|||||||"]
        .iter()
        .any(|m| l.starts_with(m))
}

/// Every entry in the file, skipping git's markers and a diff3 base section (its lines are
/// in the common prefix already). Each entry must still be sound on its own (its `cid` and
/// `hash` recompute): a merge does not launder a tampered line.
pub fn collect(text: &[u8]) -> Result<Vec<Entry>, String> {
    let mut out = Vec::new();
    let mut in_base = false;
    for (i, l) in text.split(|b| *b == b'\n').enumerate() {
        let n = i + 1;
        if l.starts_with(b"|||||||") {
            in_base = true;
            continue;
        }
        if l.starts_with(b"=======") {
            in_base = false;
            continue;
        }
        if is_marker(l) || in_base || l.is_empty() {
            continue;
        }
        let e = parse_line(l, n).map_err(|e| e.to_string())?;
        if e.expected_cid()? != e.cid {
            return Err(format!("line {n}: cid: does not match the body"));
        }
        if e.expected_hash()? != e.hash {
            return Err(format!("line {n}: hash: does not match the entry"));
        }
        out.push(e);
    }
    Ok(out)
}

/// The merged chain of `entries` (as collected from a conflicted file).
pub fn merge_entries(entries: Vec<Entry>) -> Result<(Vec<Entry>, MergeReport), String> {
    let mut seen = HashSet::new();
    let mut distinct = Vec::new();
    let mut duplicates = 0;
    for e in entries {
        if seen.insert(e.hash.clone()) {
            distinct.push(e);
        } else {
            duplicates += 1;
        }
    }
    // The common prefix: follow the chain from the genesis while exactly one entry links on.
    let mut prefix: Vec<Entry> = Vec::new();
    let mut used = vec![false; distinct.len()];
    loop {
        let head = prefix
            .last()
            .map_or(GENESIS, |e| e.hash.as_str())
            .to_string();
        let next: Vec<usize> = (0..distinct.len())
            .filter(|&i| !used[i] && distinct[i].prev == head)
            .collect();
        if next.len() != 1 {
            break;
        }
        used[next[0]] = true;
        prefix.push(distinct[next[0]].clone());
    }
    if prefix.is_empty() {
        return Err("no entry links to the genesis: this is not a ledger".into());
    }
    let mut tail: Vec<Entry> = Vec::new();
    let mut tail_cids = HashSet::new();
    for (i, e) in distinct.into_iter().enumerate() {
        // The same body appended on both sides (e.g. the same run added twice) is one fact.
        if !used[i] && tail_cids.insert((e.kind.clone(), e.cid.clone())) {
            tail.push(e);
        } else if !used[i] {
            duplicates += 1;
        }
    }
    tail.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.cid.cmp(&b.cid)));
    let mut out = prefix;
    let n_prefix = out.len();
    for e in &tail {
        let prev = out.last().map(|p| (p.seq, p.hash.as_str()));
        let linked = e.relink(prev)?;
        out.push(linked);
    }
    let report = MergeReport {
        prefix: n_prefix,
        relinked: tail.len(),
        duplicates,
        head: out.last().map(|e| e.hash.clone()).unwrap_or_default(),
    };
    Ok((out, report))
}

/// Merges the ledger file in place (under the lock, through a temp file and a rename).
pub fn merge(ledger: &Ledger) -> Result<MergeReport, Failure> {
    let guard = ledger.lock()?;
    let path = ledger.file();
    let bytes = ledger.read_bytes()?;
    let entries =
        collect(&bytes).map_err(|m| Failure::input(format!("{}: {m}", path.display())))?;
    let (merged, report) =
        merge_entries(entries).map_err(|m| Failure::input(format!("{}: {m}", path.display())))?;
    ledger.rewrite(&guard, &merged)?;
    Ok(report)
}
