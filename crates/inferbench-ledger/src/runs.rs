//! `ledger add RUN` and `ledger import DIR`: a packet, then its `run.record` or `run.import`
//! entry. The packet is whole on disk before the entry is appended, and the append refuses a
//! packet the ledger already holds.

use std::path::{Path, PathBuf};

use inferbench_core::grade::{Grade, Tier};
use inferbench_core::identity::Provenance;
use inferbench_run::{Failure, Layout, RunDir};
use serde_json::{Map, Value, json};

use crate::entry::{Entry, Stamp};
use crate::epochs;
use crate::packet::{self, IMPORT_DIR, Packet, PacketFile};
use crate::source::{self, DECLARE_ROUTE, Source};
use crate::store::Ledger;

/// One run now in the ledger.
#[derive(Clone, Debug)]
pub struct Added {
    pub run: PathBuf,
    pub entry: Entry,
    pub packet: String,
    pub overall: Tier,
}

impl Added {
    pub fn render(&self) -> String {
        format!(
            "{}: line {} {} cid {} packet {} (grade {})\n",
            self.run.display(),
            self.entry.seq,
            self.entry.kind,
            self.entry.cid,
            self.packet,
            self.overall.as_str()
        )
    }
}

/// `{overall, metrics: {tag: tier}}`: what an entry says of a grade (the packet has it whole).
pub fn grade_summary(g: &Grade) -> Value {
    let metrics: Map<String, Value> = g
        .metrics
        .iter()
        .map(|m| (m.metric.clone(), json!(m.tier.as_str())))
        .collect();
    json!({"definition_set": g.definition_set, "overall": g.overall.as_str(), "metrics": metrics, "flags": g.flags})
}

fn declared(src: &Source) -> Vec<String> {
    src.identity
        .pins
        .iter()
        .filter(|(_, p)| matches!(&p.provenance, Provenance::Declared { route } if route == DECLARE_ROUTE))
        .map(|(k, _)| k.clone())
        .collect()
}

/// Refuses a packet already recorded, naming the entry that holds it.
fn not_yet(id: &str) -> impl Fn(&[Entry]) -> Result<(), Failure> + '_ {
    move |entries: &[Entry]| match entries
        .iter()
        .find(|e| e.body.get("packet").and_then(Value::as_str) == Some(id))
    {
        Some(e) => Err(Failure::input(format!(
            "packet {id} is already in the ledger: line {} ({}, cid {})",
            e.seq, e.kind, e.cid
        ))),
        None => Ok(()),
    }
}

fn record(
    ledger: &Ledger,
    run: &Path,
    src: &Source,
    kind: &str,
    extra: impl FnOnce(&Packet) -> Map<String, Value>,
    stamp: &Stamp,
) -> Result<Added, Failure> {
    let p = packet::build(ledger, src)?;
    let mut body = Map::new();
    body.insert("packet".into(), json!(p.id));
    body.insert("fingerprint".into(), json!(src.identity.fingerprint()));
    body.insert("definition_set".into(), json!(src.loaded.native_set()));
    body.insert(
        "profile".into(),
        src.identity
            .get("profile")
            .map_or(Value::Null, |p| p.value.clone()),
    );
    body.insert("grade".into(), grade_summary(&src.grade));
    body.insert("declared".into(), json!(declared(src)));
    body.extend(extra(&p));
    let check = not_yet(&p.id);
    let entry = ledger.append(Some(&check), kind, Value::Object(body), stamp)?;
    Ok(Added {
        run: run.to_path_buf(),
        entry,
        packet: p.id.clone(),
        overall: src.grade.overall,
    })
}

/// A packet is in a ledger already: adding it again would copy a copy.
fn already_a_packet(rd: &RunDir, given: &Path) -> Result<(), Failure> {
    match rd.packet() {
        Some(_) => Err(Failure::input(format!(
            "{}: a ledger packet, already recorded: add or import the run's own directory",
            given.display()
        ))),
        None => Ok(()),
    }
}

/// The packet directory of a run: `cid` is a run entry's cid (whole, or 8 or more hex
/// digits of it, as [`epochs::find_run`]) or a packet id (`sha256:<hex>`, `sha256-<hex>` or
/// a unique prefix of the hex, 8 digits or more). The directory must exist.
pub fn resolve(ledger: &Ledger, cid: &str) -> Result<PathBuf, Failure> {
    let entries = ledger.entries()?;
    let id = match epochs::find_run(&entries, cid) {
        Ok(e) => e
            .body
            .get("packet")
            .and_then(Value::as_str)
            .ok_or_else(|| Failure::input(format!("line {}: body.packet: missing", e.seq)))?
            .to_string(),
        Err(run_err) => match packet_by_prefix(&entries, cid)? {
            Some(id) => id,
            None => return Err(run_err),
        },
    };
    let dir = packet::packet_dir(ledger, &id);
    if !dir.join(packet::MANIFEST).is_file() {
        return Err(Failure::input(format!(
            "{cid}: packet {id} is named by the ledger but {} is missing",
            dir.display()
        )));
    }
    Ok(dir)
}

/// The packet id a run entry records that starts with `cid`'s hex (None when none does).
fn packet_by_prefix(entries: &[Entry], cid: &str) -> Result<Option<String>, Failure> {
    let hex = cid
        .strip_prefix("sha256:")
        .or_else(|| cid.strip_prefix("sha256-"))
        .unwrap_or(cid);
    if hex.len() < 8 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(None);
    }
    let mut hits: Vec<&str> = entries
        .iter()
        .filter(|e| epochs::RUN_KINDS.contains(&e.kind.as_str()))
        .filter_map(|e| e.body.get("packet").and_then(Value::as_str))
        .filter(|p| p["sha256:".len()..].starts_with(hex))
        .collect();
    hits.dedup();
    match hits.as_slice() {
        [] => Ok(None),
        [p] => Ok(Some((*p).to_string())),
        _ => Err(Failure::input(format!(
            "packet id '{cid}' is ambiguous: {} packets start with it",
            hits.len()
        ))),
    }
}

/// `ledger add RUN`: one run of ours, or each run of a `--num-profile-runs` directory (or
/// of a sweep), in order.
pub fn add(
    ledger: &Ledger,
    run: &Path,
    declares: &[String],
    stamp: &Stamp,
) -> Result<Vec<Added>, Failure> {
    let dir = RunDir::open(run)?;
    already_a_packet(&dir, run)?;
    if let Layout::Imported(tool) = &dir.layout {
        return Err(Failure::input(format!(
            "{}: a {} artifact directory: use `inferbench ledger import {}`",
            run.display(),
            tool.as_str(),
            run.display()
        )));
    }
    let runs = dir.runs();
    if runs.is_empty() {
        return Err(Failure::input(format!(
            "{}: no runs below this directory",
            run.display()
        )));
    }
    let mut out = Vec::new();
    for r in runs {
        let src = source::load(&r.path, declares, None)?;
        let harness = json!({
            "tool": inferbench_core::TOOL_NAME,
            "version": src.loaded.manifest.as_ref().map(|m| m.tool.version.clone()),
            "binary_sha256": src.loaded.manifest.as_ref().and_then(|m| m.tool.binary_sha256.clone()),
        });
        out.push(record(
            ledger,
            &r.path,
            &src,
            "run.record",
            |_| Map::from_iter([("harness".to_string(), harness)]),
            stamp,
        )?);
    }
    Ok(out)
}

/// `ledger import DIR`: a GenAI-Perf or AIPerf artifact directory, its files kept byte for
/// byte in the packet's `import/`.
pub fn import(
    ledger: &Ledger,
    dir: &Path,
    declares: &[String],
    tokenizer: Option<&str>,
    stamp: &Stamp,
) -> Result<Added, Failure> {
    let rd = RunDir::open(dir)?;
    already_a_packet(&rd, dir)?;
    if !matches!(rd.layout, Layout::Imported(_)) {
        return Err(Failure::input(format!(
            "{}: not a GenAI-Perf or AIPerf artifact directory (a run of ours is added with `inferbench ledger add`)",
            dir.display()
        )));
    }
    let src = source::load(dir, declares, tokenizer)?;
    let Some(imp) = &src.loaded.imported else {
        return Err(Failure::input(format!("{}: not imported", dir.display())));
    };
    let (tool, version, losses) = (imp.tool.as_str(), imp.version.clone(), imp.losses.clone());
    let recovered: Map<String, Value> = src
        .identity
        .pins
        .iter()
        .filter_map(|(k, p)| match &p.provenance {
            Provenance::Recovered { file, key } => Some((
                k.clone(),
                json!({"value": p.value, "file": file, "key": key}),
            )),
            _ => None,
        })
        .collect();
    let missing: Map<String, Value> = src
        .identity
        .missing
        .iter()
        .map(|(k, why)| (k.clone(), json!(why)))
        .collect();
    record(
        ledger,
        dir,
        &src,
        "run.import",
        |p| {
            let artifacts: Vec<PacketFile> =
                serde_json::from_value::<Vec<PacketFile>>(p.manifest["files"].clone())
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|f| f.path.starts_with(&format!("{IMPORT_DIR}/")))
                    .collect();
            Map::from_iter([
                (
                    "source".to_string(),
                    json!({"tool": tool, "version": version, "artifacts": artifacts}),
                ),
                (
                    "importer".to_string(),
                    json!(format!(
                        "inferbench-import-{tool}/{}",
                        inferbench_core::TOOL_VERSION
                    )),
                ),
                ("recovered".to_string(), Value::Object(recovered)),
                ("missing".to_string(), Value::Object(missing)),
                ("losses".to_string(), json!(losses)),
            ])
        },
        stamp,
    )
}
