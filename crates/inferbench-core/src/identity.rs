//! A run's identity: the pins its numbers depend on, each with where it came from.
//!
//! Two classes decide comparability (docs/baselines.md, reference ledger-gate.md §3.3):
//! **contract** pins define what a number means (workload, definitions, arrival, cache
//! procedure, …); **SUT** pins identify the system under test (image, weights, GPUs, …).
//! An epoch is the fingerprint of the contract pins alone, so a new image compared against an
//! old baseline stays inside one epoch, while a changed workload does not. **Client** pins
//! (the harness binary, its host) are shown but decide nothing; **context** pins are notes.
//!
//! A pin is *measured* (the run established it), *declared* (the user said so with
//! `--declare` or `--identity`), or *recovered* (an importer read it from a named file and
//! key). A catalogue pin with none of these is listed in [`Identity::missing`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub mod controls;

/// What a pin's difference means.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "snake_case")]
pub enum PinClass {
    Contract,
    Sut,
    Client,
    Context,
}

/// Where a pin's value can come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PinSource {
    /// Only the run (or an importer) can establish it.
    Measured,
    /// Only the user can say it.
    Declared,
    /// Measured where the run can see it, else declared (a declaration must then agree).
    Either,
}

/// One entry of the pin catalogue.
#[derive(Clone, Copy, Debug)]
pub struct PinSpec {
    pub name: &'static str,
    pub class: PinClass,
    /// `workload`, `harness`, `semantics`, `arrival`, `cache`, `measurement`, `deployment`,
    /// `client`, `context`. A change confined to the `harness` group (with the SUT fixed) is a
    /// bridge, not a new epoch.
    pub group: &'static str,
    pub source: PinSource,
    pub help: &'static str,
}

use PinClass::{Client, Context, Contract, Sut};
use PinSource::{Declared, Either, Measured};

const fn pin(
    name: &'static str,
    class: PinClass,
    group: &'static str,
    source: PinSource,
    help: &'static str,
) -> PinSpec {
    PinSpec {
        name,
        class,
        group,
        source,
        help,
    }
}

/// Every pin inferbench knows, in display order.
pub const CATALOGUE: &[PinSpec] = &[
    pin(
        "workload_digest",
        Contract,
        "workload",
        Measured,
        "sha256 of the frozen request bodies, in order",
    ),
    pin(
        "request_order",
        Contract,
        "workload",
        Either,
        "how requests are drawn from the frozen set (sequential, random or shuffle, with its seed)",
    ),
    pin(
        "request_count",
        Contract,
        "workload",
        Measured,
        "requests scheduled for profiling",
    ),
    pin(
        "length_spec",
        Contract,
        "workload",
        Measured,
        "the ISL/OSL specification (mean, stddev) or the dataset's own lengths",
    ),
    pin(
        "dataset_source",
        Contract,
        "workload",
        Measured,
        "dataset type, file and corpus digest",
    ),
    pin(
        "chat_template_digest",
        Contract,
        "workload",
        Either,
        "sha256 of the chat template applied to chat requests",
    ),
    pin(
        "max_tokens",
        Contract,
        "workload",
        Measured,
        "max_tokens sent (or absent)",
    ),
    pin(
        "min_tokens",
        Contract,
        "workload",
        Measured,
        "min_tokens sent (or absent)",
    ),
    pin(
        "ignore_eos",
        Contract,
        "workload",
        Measured,
        "ignore_eos sent (or absent)",
    ),
    pin(
        "stop",
        Contract,
        "workload",
        Measured,
        "stop sequences sent (or absent)",
    ),
    pin(
        "sampling",
        Contract,
        "workload",
        Measured,
        "sampling parameters sent (temperature, top_p, …)",
    ),
    pin(
        "harness",
        Contract,
        "harness",
        Measured,
        "the tool and version that measured",
    ),
    pin(
        "parser",
        Contract,
        "harness",
        Measured,
        "the reader of the artifacts (inferbench, or an importer id and version)",
    ),
    pin(
        "definition_set",
        Contract,
        "harness",
        Measured,
        "the metric definition set the run's own summary uses",
    ),
    pin(
        "streaming",
        Contract,
        "semantics",
        Measured,
        "whether responses were streamed",
    ),
    pin("warmup", Contract, "semantics", Measured, "the warmup rule"),
    pin(
        "stop_rule",
        Contract,
        "semantics",
        Measured,
        "what ends the profiling phase",
    ),
    pin(
        "token_count_source",
        Contract,
        "semantics",
        Measured,
        "server usage, or a local tokenizer by digest",
    ),
    pin(
        "reasoning_accounting",
        Contract,
        "semantics",
        Measured,
        "how reasoning reached the client: separate_field, think_in_content or none",
    ),
    pin(
        "arrival_policy",
        Contract,
        "arrival",
        Measured,
        "concurrency, rate and distribution, ramp, fixed schedule",
    ),
    pin(
        "random_seed",
        Contract,
        "arrival",
        Measured,
        "the seed of the workload and the arrivals",
    ),
    pin(
        "cache_procedure",
        Contract,
        "cache",
        Either,
        "prefix cache on/off, reset between runs, KV state at start",
    ),
    pin(
        "profile",
        Contract,
        "measurement",
        Either,
        "regression (fixed concurrency), service-load (arrival-driven) or trace-replay (timestamped schedule)",
    ),
    pin(
        "client_placement",
        Contract,
        "measurement",
        Either,
        "same-host or other-host, relative to the server",
    ),
    pin(
        "clock_source",
        Contract,
        "harness",
        Measured,
        "the clock request timestamps come from",
    ),
    pin(
        "image_digest",
        Sut,
        "deployment",
        Declared,
        "the server image digest (sha256:…)",
    ),
    pin(
        "image",
        Sut,
        "deployment",
        Declared,
        "the server image reference (a tag alone can move)",
    ),
    pin(
        "model",
        Sut,
        "deployment",
        Measured,
        "the model name(s) requested",
    ),
    pin(
        "server_models",
        Sut,
        "deployment",
        Measured,
        "sha256 of the server's /v1/models answer",
    ),
    pin(
        "model_revision",
        Sut,
        "deployment",
        Declared,
        "the weight revision (e.g. a Hugging Face commit)",
    ),
    pin(
        "tokenizer_digest",
        Sut,
        "deployment",
        Measured,
        "sha256 of the tokenizer file the client counted with",
    ),
    pin(
        "tokenizer_revision",
        Sut,
        "deployment",
        Declared,
        "the tokenizer revision",
    ),
    pin(
        "precision",
        Sut,
        "deployment",
        Declared,
        "weights and KV-cache precision",
    ),
    pin(
        "runtime_args",
        Sut,
        "deployment",
        Declared,
        "the server's runtime arguments",
    ),
    pin(
        "parallelism",
        Sut,
        "deployment",
        Declared,
        "tensor/pipeline/data parallelism",
    ),
    pin(
        "gpu_inventory",
        Sut,
        "deployment",
        Declared,
        "GPU model and count",
    ),
    pin(
        "gpu_driver",
        Sut,
        "deployment",
        Declared,
        "GPU driver and CUDA versions",
    ),
    pin(
        "determinism",
        Sut,
        "deployment",
        Declared,
        "deterministic-algorithm settings",
    ),
    pin(
        "client_binary_digest",
        Client,
        "client",
        Measured,
        "sha256 of the client executable",
    ),
    pin(
        "client_host",
        Client,
        "client",
        Measured,
        "the client host (CPUs, memory, kernel)",
    ),
    pin(
        "client_workers",
        Client,
        "client",
        Measured,
        "the client's worker model",
    ),
    pin(
        "stop_reason",
        Context,
        "context",
        Measured,
        "why the run ended",
    ),
];

/// The catalogue entry of a pin name.
pub fn spec(name: &str) -> Option<&'static PinSpec> {
    CATALOGUE.iter().find(|s| s.name == name)
}

/// Pins that name content (an image, weights, a template, a tokenizer): a declaration of one
/// without a digest (or, for a revision, a full git commit id) names something that can
/// move, so it cannot hold a `reference` grade. Every other declarable pin describes a
/// setting (a precision, a GPU inventory, a cache procedure): the declaration is the evidence.
pub const CONTENT_PINS: &[&str] = &[
    "workload_digest",
    "chat_template_digest",
    "image_digest",
    "image",
    "server_models",
    "model_revision",
    "tokenizer_digest",
    "tokenizer_revision",
];

/// Whether a pin names content (see [`CONTENT_PINS`]).
pub fn held_by_content(name: &str) -> bool {
    CONTENT_PINS.contains(&name)
}

/// Free-form declared context (operator, purpose, ticket): `note.<anything>`.
pub const NOTE_PREFIX: &str = "note.";

/// Where a pin's value came from.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum Provenance {
    /// Established by the run itself.
    Measured,
    /// Said by the user: `--declare`, or the identity file's path.
    Declared { route: String },
    /// Read by an importer from `file` at `key` (a JSON path, a CSV column, a command-line flag).
    Recovered { file: String, key: String },
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Pin {
    pub value: Value,
    #[serde(flatten)]
    pub provenance: Provenance,
}

impl Pin {
    /// A `sha256:<hex>` string value (or an object whose `sha256` field is one): the pin is
    /// held by content, not by name.
    pub fn is_digest(&self) -> bool {
        let s = match &self.value {
            Value::String(s) => Some(s.as_str()),
            Value::Object(o) => o.get("sha256").and_then(Value::as_str),
            _ => None,
        };
        s.is_some_and(|s| crate::canonical::is_sha256_id(s) || is_git_commit(s))
    }
}

/// A full git commit id (40 lowercase hex digits): a Hugging Face revision pinned by content.
fn is_git_commit(s: &str) -> bool {
    s.len() == 40
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Something about the identity a reviewer must see (e.g. `image_tag_movable`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct IdentityFlag {
    pub name: String,
    pub detail: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct Identity {
    /// Known pins by catalogue name, plus `note.*` context.
    pub pins: BTreeMap<String, Pin>,
    /// Catalogue pins not known, with why (e.g. "not in the artifact").
    pub missing: BTreeMap<String, String>,
    pub flags: Vec<IdentityFlag>,
}

/// Why a declaration was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeclareError(pub String);

impl std::fmt::Display for DeclareError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DeclareError {}

/// One user declaration on its way to a run's identity: `--declare KEY=VALUE` or a key of
/// `--identity FILE.toml` (`route` names which, and is the provenance recorded).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Declaration {
    pub key: String,
    pub value: Value,
    pub route: String,
}

/// The pins a user may declare, for error messages and help.
pub fn declarable() -> Vec<&'static str> {
    CATALOGUE
        .iter()
        .filter(|s| s.source != Measured)
        .map(|s| s.name)
        .collect()
}

impl Identity {
    pub fn get(&self, name: &str) -> Option<&Pin> {
        self.pins.get(name)
    }

    /// Records a measured or recovered pin (replacing an earlier value).
    pub fn set(&mut self, name: &str, value: Value, provenance: Provenance) {
        self.missing.remove(name);
        self.pins
            .insert(name.to_string(), Pin { value, provenance });
    }

    /// Records a user declaration. Refuses an unknown key, a pin only the run can measure,
    /// and a value that contradicts what the run measured.
    pub fn declare(&mut self, key: &str, value: Value, route: &str) -> Result<(), DeclareError> {
        if key.len() > NOTE_PREFIX.len() && key.starts_with(NOTE_PREFIX) {
            self.set(
                key,
                value,
                Provenance::Declared {
                    route: route.into(),
                },
            );
            return Ok(());
        }
        let Some(s) = spec(key) else {
            return Err(DeclareError(format!(
                "{route}: unknown identity key '{key}' (declarable: {}, or note.NAME)",
                declarable().join(", ")
            )));
        };
        if s.source == Measured {
            return Err(DeclareError(format!(
                "{route}: '{key}' is measured by the run and cannot be declared"
            )));
        }
        if let Some(p) = self.pins.get(key)
            && p.provenance == Provenance::Measured
            && p.value != value
        {
            return Err(DeclareError(format!(
                "{route}: '{key}' declared as {value} but the run measured {}",
                p.value
            )));
        }
        self.set(
            key,
            value,
            Provenance::Declared {
                route: route.into(),
            },
        );
        Ok(())
    }

    /// Applies declarations in order; the first refused one is the error.
    pub fn declare_all(&mut self, declared: &[Declaration]) -> Result<(), DeclareError> {
        declared
            .iter()
            .try_for_each(|d| self.declare(&d.key, d.value.clone(), &d.route))
    }

    /// Lists every catalogue pin not known as missing (with `why`), and raises the flags
    /// that follow from the pins. Call once, after all pins are in.
    pub fn finish(&mut self, why: &str) {
        for s in CATALOGUE {
            if !self.pins.contains_key(s.name) && !self.missing.contains_key(s.name) {
                self.missing.insert(s.name.to_string(), why.to_string());
            }
        }
        self.flags.retain(|f| f.name != "image_tag_movable");
        if let Some(image) = self.pins.get("image")
            && !self.pins.contains_key("image_digest")
            && !image.value.as_str().is_some_and(|s| s.contains("@sha256:"))
        {
            self.flags.push(IdentityFlag {
                name: "image_tag_movable".into(),
                detail: format!(
                    "image {} is a tag without a digest: the content behind it can change",
                    image.value
                ),
            });
        }
    }

    /// The contract pins by name, a missing one as `null`.
    pub fn contract(&self) -> BTreeMap<&'static str, Value> {
        CATALOGUE
            .iter()
            .filter(|s| s.class == Contract)
            .map(|s| {
                let v = self
                    .pins
                    .get(s.name)
                    .map_or(Value::Null, |p| p.value.clone());
                (s.name, v)
            })
            .collect()
    }

    /// The epoch fingerprint: `sha256:` of the canonical contract pins (values only, not
    /// provenance: a recovered pin equal to a measured one is the same contract).
    pub fn fingerprint(&self) -> String {
        let body = serde_json::json!({"v": 1, "contract": self.contract()});
        crate::canonical::digest(&body).expect("pin values are JSON")
    }
}

/// One pin that differs between two identities (or is unknown on a side).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct PinChange {
    pub name: String,
    pub class: PinClass,
    pub group: String,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

/// Catalogue pins whose values differ, or are unknown on either side, in catalogue order.
/// Two unknowns are listed too: nothing shows them equal.
pub fn diff(base: &Identity, cand: &Identity) -> Vec<PinChange> {
    CATALOGUE
        .iter()
        .filter_map(|s| {
            let before = base.pins.get(s.name).map(|p| p.value.clone());
            let after = cand.pins.get(s.name).map(|p| p.value.clone());
            let same = before.is_some() && before == after;
            (!same).then(|| PinChange {
                name: s.name.into(),
                class: s.class,
                group: s.group.into(),
                before,
                after,
            })
        })
        .collect()
}

/// The seed's decisions (reference §3.4), plus the normal comparison inside an epoch.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    /// Everything that matters is equal: the legacy baseline stays the record.
    KeepLegacy,
    /// Only the harness changed, the server is fixed: rerun both harnesses and bridge.
    Bridge,
    /// The contract changed: declare a new epoch; no series linking.
    NewEpoch,
    /// Same contract, different system under test: a normal comparison inside the epoch.
    Compare,
    /// A contract pin is unknown: context only until a reproducible reference exists.
    Insufficient,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::KeepLegacy => "keep-legacy",
            Decision::Bridge => "bridge",
            Decision::NewEpoch => "new-epoch",
            Decision::Compare => "compare",
            Decision::Insufficient => "insufficient",
        }
    }
}

/// A decision with the pins that decided it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct DecisionReport {
    pub decision: Decision,
    pub deciding: Vec<PinChange>,
    pub reason: String,
}

/// Decides from the pin diff between a candidate and the pinned baseline:
/// 1. a contract pin unknown on either side → `insufficient`;
/// 2. a contract pin outside the `harness` group differs → `new-epoch`;
/// 3. only `harness` pins differ → `bridge` when the SUT pins are known and equal, else
///    `new-epoch` (a tool change and a server change at once cannot be told apart);
/// 4. no contract pin differs, some SUT pin differs or is unknown → `compare`;
/// 5. nothing differs → `keep-legacy`.
///
/// Client and context pins never decide.
pub fn decide(changes: &[PinChange]) -> DecisionReport {
    let of = |f: &dyn Fn(&PinChange) -> bool| -> Vec<PinChange> {
        changes.iter().filter(|c| f(c)).cloned().collect()
    };
    let names = |v: &[PinChange]| {
        v.iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let unknown = of(&|c| c.class == Contract && (c.before.is_none() || c.after.is_none()));
    if !unknown.is_empty() {
        return DecisionReport {
            decision: Decision::Insufficient,
            reason: format!("contract pins unknown: {}", names(&unknown)),
            deciding: unknown,
        };
    }
    let contract = of(&|c| c.class == Contract && c.group != "harness");
    if !contract.is_empty() {
        return DecisionReport {
            decision: Decision::NewEpoch,
            reason: format!("the contract changed: {}", names(&contract)),
            deciding: contract,
        };
    }
    let harness = of(&|c| c.class == Contract);
    let sut = of(&|c| c.class == Sut);
    if !harness.is_empty() {
        if sut.is_empty() {
            return DecisionReport {
                decision: Decision::Bridge,
                reason: format!(
                    "only the harness changed ({}), the system under test is fixed: rerun both harnesses on it",
                    names(&harness)
                ),
                deciding: harness,
            };
        }
        let mut deciding = harness;
        deciding.extend(sut);
        return DecisionReport {
            decision: Decision::NewEpoch,
            reason: format!(
                "the harness and the system under test both changed or are unknown ({}): a bridge needs the server fixed",
                names(&deciding)
            ),
            deciding,
        };
    }
    if !sut.is_empty() {
        return DecisionReport {
            decision: Decision::Compare,
            reason: format!(
                "same contract, the system under test differs ({}): compare inside the epoch",
                names(&sut)
            ),
            deciding: sut,
        };
    }
    DecisionReport {
        decision: Decision::KeepLegacy,
        reason: "contract and system under test are equal: the baseline stays the record".into(),
        deciding: Vec::new(),
    }
}

#[cfg(test)]
mod tests;
