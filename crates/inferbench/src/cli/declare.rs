//! `--declare KEY=VALUE` and `--identity FILE.toml`: what the user says about the system
//! under test, checked against the pin catalogue before anything runs (docs/identity.md).
//! Values are kept only in the run's identity: never logged or echoed.

use inferbench_core::identity::{Declaration, Identity};
use serde_json::Value;

use super::ProfileArgs;

pub const DECLARE_ROUTE: &str = "--declare";

/// Checks a key the way the run will (unknown key, a pin only the run measures), with
/// `route` leading the message.
fn check(key: &str, value: &Value, route: &str) -> Result<(), String> {
    Identity::default()
        .declare(key, value.clone(), route)
        .map_err(|e| e.to_string())
}

/// One `--declare KEY=VALUE` (the value is a string).
pub fn parse_declare(s: &str) -> Result<Declaration, String> {
    let Some((key, value)) = s.split_once('=') else {
        return Err(format!(
            "{DECLARE_ROUTE} '{}': expected KEY=VALUE",
            s.chars().take(40).collect::<String>()
        ));
    };
    let key = key.trim();
    if key.is_empty() {
        return Err(format!("{DECLARE_ROUTE}: the key before '=' is empty"));
    }
    let value = Value::String(value.to_string());
    check(key, &value, DECLARE_ROUTE)?;
    Ok(Declaration {
        key: key.to_string(),
        value,
        route: DECLARE_ROUTE.to_string(),
    })
}

/// A TOML value as JSON (a datetime as its text).
fn json_of(v: toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) => serde_json::Number::from_f64(f)
            .map(Value::Number)
            .unwrap_or_else(|| Value::String(f.to_string())),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => Value::Array(a.into_iter().map(json_of).collect()),
        toml::Value::Table(t) => {
            Value::Object(t.into_iter().map(|(k, v)| (k, json_of(v))).collect())
        }
    }
}

/// The line (1-based) of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The declarations of an identity file: a flat table of catalogue keys (`note.X = …` and a
/// `[note]` table are context notes). `path` names the file in errors and provenance.
pub fn parse_identity_file(path: &str, text: &str) -> Result<Vec<Declaration>, String> {
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        let at = e
            .span()
            .map(|s| format!(" line {}", line_of(text, s.start)))
            .unwrap_or_default();
        format!("--identity {path}:{at}: {}", e.message().trim())
    })?;
    let route = format!("--identity {path}");
    let mut out = Vec::new();
    for (key, value) in table {
        let entries: Vec<(String, Value)> = match (key.as_str(), value) {
            ("note", toml::Value::Table(t)) => t
                .into_iter()
                .map(|(k, v)| (format!("note.{k}"), json_of(v)))
                .collect(),
            (_, v) => vec![(key.clone(), json_of(v))],
        };
        for (key, value) in entries {
            check(&key, &value, &route)?;
            out.push(Declaration {
                key,
                value,
                route: route.clone(),
            });
        }
    }
    Ok(out)
}

/// Every declaration of a `profile` command: the identity file's first, then each
/// `--declare` (a later one replaces an earlier one of the same key).
pub fn declarations(a: &ProfileArgs) -> Result<Vec<Declaration>, String> {
    let mut out = Vec::new();
    if let Some(path) = &a.identity {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("--identity {path}: cannot read: {e}"))?;
        out.extend(parse_identity_file(path, &text)?);
    }
    for d in &a.declare {
        out.push(parse_declare(d)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_declaration_is_key_equals_value_of_a_declarable_pin() {
        let d = parse_declare("image=repo/server:1.2").unwrap();
        assert_eq!(d.key, "image");
        assert_eq!(d.value, json!("repo/server:1.2"));
        assert_eq!(d.route, "--declare");
        // Only the first '=' splits: a value may hold more.
        assert_eq!(
            parse_declare("runtime_args=--max-num-seqs=256")
                .unwrap()
                .value,
            json!("--max-num-seqs=256")
        );
        assert_eq!(
            parse_declare("imagerepo").unwrap_err(),
            "--declare 'imagerepo': expected KEY=VALUE"
        );
        assert_eq!(
            parse_declare("=x").unwrap_err(),
            "--declare: the key before '=' is empty"
        );
        let e = parse_declare("colour=blue").unwrap_err();
        assert!(
            e.starts_with("--declare: unknown identity key 'colour' (declarable: "),
            "{e}"
        );
        let e = parse_declare("workload_digest=sha256:00").unwrap_err();
        assert_eq!(
            e,
            "--declare: 'workload_digest' is measured by the run and cannot be declared"
        );
        assert_eq!(
            parse_declare("note.ticket=OPS-1").unwrap().key,
            "note.ticket"
        );
    }

    #[test]
    fn an_identity_file_keeps_toml_types_and_names_file_line_and_key() {
        let text = "image_digest = \"sha256:abc\"\ngpu_inventory = { model = \"H100\", count = 8 }\n\
                    precision = \"bf16\"\n[note]\noperator = \"ops\"\n";
        let ds = parse_identity_file("sut.toml", text).unwrap();
        let by = |k: &str| ds.iter().find(|d| d.key == k).unwrap().value.clone();
        assert_eq!(by("gpu_inventory"), json!({"model": "H100", "count": 8}));
        assert_eq!(by("note.operator"), json!("ops"));
        assert!(ds.iter().all(|d| d.route == "--identity sut.toml"));
        let e = parse_identity_file("sut.toml", "precision = \"bf16\"\ncolour = 1\n").unwrap_err();
        assert!(
            e.starts_with("--identity sut.toml: unknown identity key 'colour'"),
            "{e}"
        );
        let e = parse_identity_file("sut.toml", "precision = \"bf16\"\nimage = \n").unwrap_err();
        assert!(e.starts_with("--identity sut.toml: line 2: "), "{e}");
        assert!(!e.contains('\n'), "{e}");
        let e = parse_identity_file("sut.toml", "streaming = true\n").unwrap_err();
        assert!(e.contains("'streaming' is measured by the run"), "{e}");
    }
}
