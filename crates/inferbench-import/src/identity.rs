//! The identity an importer recovers: every pin it can read from the artifact, with the file
//! and key it came from; the rest listed as "not in the artifact".

use inferbench_core::identity::{Identity, Provenance};
use serde_json::{Value, json};

use crate::SourceTool;

/// Why a pin an importer could not read is missing.
pub const NOT_IN_ARTIFACT: &str = "not in the artifact";

/// The importer's own id, as the `parser` pin says it: `inferbench-import-genai-perf/<ver>`.
pub fn parser_id(tool: SourceTool) -> String {
    format!(
        "inferbench-import-{}/{}",
        tool.as_str(),
        inferbench_core::TOOL_VERSION
    )
}

/// Records `value` as recovered from `file` at `key`.
pub fn recovered(id: &mut Identity, name: &str, value: Value, file: &str, key: &str) {
    id.set(
        name,
        value,
        Provenance::Recovered {
            file: file.into(),
            key: key.into(),
        },
    );
}

/// The pins every import knows: the harness (tool and detected version) and the parser.
pub fn base(tool: SourceTool, version: &str, version_from: (&str, &str)) -> Identity {
    let mut id = Identity::default();
    recovered(
        &mut id,
        "harness",
        json!(format!("{}/{version}", tool.as_str())),
        version_from.0,
        version_from.1,
    );
    id.set("parser", json!(parser_id(tool)), Provenance::Measured);
    id
}

/// A file's name, for provenance (the artifact directory is the context).
pub fn name_of(p: &std::path::Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

/// The request bodies of an `inputs.json` (`data[*].payloads[*]`, or GenAI-Perf's
/// `payload`).
pub fn inputs_bodies(inputs: &Value) -> Vec<serde_json::Map<String, Value>> {
    let mut out = Vec::new();
    for entry in inputs
        .get("data")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let list = entry.get("payloads").or_else(|| entry.get("payload"));
        for p in list.and_then(Value::as_array).into_iter().flatten() {
            if let Some(o) = p.as_object() {
                out.push(o.clone());
            }
        }
    }
    out
}

/// The workload digest of bodies in order, by the rule of a live run's
/// (`Workload::sha256` over each body's compact JSON, key order kept, which is how a replay
/// of them with `--input-file` sends them): an import and inferbench's replay of the same
/// bodies carry the same digest.
fn bodies_digest(bodies: &[serde_json::Map<String, Value>]) -> String {
    let texts: Vec<String> = bodies
        .iter()
        .map(|b| serde_json::to_string(b).unwrap_or_default())
        .collect();
    format!(
        "sha256:{}",
        inferbench_core::workload::bodies_sha256(texts.iter().map(String::as_str))
    )
}

/// Records the workload digest of `inputs.json`'s bodies and the generation controls they
/// carry, or, without it, of the `fallback` bodies read from `fallback_at`.
pub fn workload_pins(
    id: &mut Identity,
    inputs: Option<(&std::path::Path, &[u8])>,
    fallback: (&[serde_json::Map<String, Value>], &str, &str),
) {
    let parsed = inputs.and_then(|(p, b)| Some((p, b, serde_json::from_slice::<Value>(b).ok()?)));
    let (bodies, file, key) = match &parsed {
        Some((p, _, v)) if !inputs_bodies(v).is_empty() => {
            let file = name_of(p);
            let bodies = inputs_bodies(v);
            recovered(
                id,
                "workload_digest",
                json!(bodies_digest(&bodies)),
                &file,
                "data[*].payload(s)[*]",
            );
            (bodies, file, "data[*].payload(s)[*]".to_string())
        }
        _ => {
            // The bodies as sent hold the workload too.
            if !fallback.0.is_empty() {
                recovered(
                    id,
                    "workload_digest",
                    json!(bodies_digest(fallback.0)),
                    fallback.1,
                    fallback.2,
                );
            }
            (
                fallback.0.to_vec(),
                fallback.1.to_string(),
                fallback.2.to_string(),
            )
        }
    };
    let refs: Vec<&serde_json::Map<String, Value>> = bodies.iter().collect();
    for (name, v) in inferbench_core::identity::controls::generation_pins(&refs) {
        recovered(id, name, v, &file, &format!("{key}.{name}"));
    }
}

/// Records the reasoning accounting the rebuilt records show (the importer parsed the
/// responses as the live client does).
pub fn reasoning_pin(id: &mut Identity, records: &[inferbench_core::Record], file: &str) {
    if records.is_empty() {
        return;
    }
    let separate = records.iter().any(|r| {
        r.events
            .iter()
            .any(|e| e.reasoning.as_deref().is_some_and(|s| !s.is_empty()))
    });
    let think = records.iter().any(|r| {
        r.events
            .iter()
            .any(|e| e.content.as_deref().is_some_and(|c| c.contains("<think>")))
    });
    let v = match (separate, think) {
        (true, true) => "separate_field+think_in_content",
        (true, false) => "separate_field",
        (false, true) => "think_in_content",
        (false, false) => "none",
    };
    recovered(
        id,
        "reasoning_accounting",
        json!(v),
        file,
        "(the response texts)",
    );
}

/// `same-host` when a URL's host is loopback.
pub fn placement_of(url: &str) -> Option<&'static str> {
    let rest = url.split("://").nth(1).unwrap_or(url);
    let host = rest.split(['/', '?']).next().unwrap_or("");
    let host = match host.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) && !h.ends_with(':') => h,
        _ => host,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    (host == "localhost" || host == "::1" || host.starts_with("127.")).then_some("same-host")
}

/// Copies `config[key]` (a dotted path; when present and not null) into pin `name`, its
/// provenance `file` at `prefix` + `key` (`config` sits at `prefix` in the file).
pub fn from_key(
    id: &mut Identity,
    name: &str,
    config: &Value,
    file: &str,
    prefix: &str,
    key: &str,
) {
    let mut v = config;
    for part in key.split('.') {
        match v.get(part) {
            Some(x) => v = x,
            None => return,
        }
    }
    if !v.is_null() {
        recovered(id, name, v.clone(), file, &format!("{prefix}{key}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_are_same_host() {
        assert_eq!(placement_of("127.0.0.1:18531"), Some("same-host"));
        assert_eq!(placement_of("http://localhost:8000/v1"), Some("same-host"));
        assert_eq!(placement_of("http://[::1]:80"), Some("same-host"));
        assert_eq!(placement_of("http://10.0.0.5:8000"), None);
    }
}
