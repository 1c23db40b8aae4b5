//! JSON values as block YAML, for `kubectl apply -f -`: every string double-quoted (a JSON
//! string is a valid YAML double-quoted scalar, so nothing is ever read back as a number, a
//! boolean or a date), documents separated by `---`. No YAML library needed.

use serde_json::Value;

/// Several documents, each ending in a newline, separated by `---`.
pub fn documents(values: &[Value]) -> String {
    values
        .iter()
        .map(document)
        .collect::<Vec<_>>()
        .join("---\n")
}

/// One document.
pub fn document(v: &Value) -> String {
    let mut out = String::new();
    match v {
        Value::Object(_) | Value::Array(_) if !is_empty(v) => block(v, 0, &mut out),
        _ => {
            out.push_str(&scalar(v));
            out.push('\n');
        }
    }
    out
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
        other => other.to_string(),
    }
}

/// Whether `v` is written on its key's line.
fn inline(v: &Value) -> bool {
    !matches!(v, Value::Object(_) | Value::Array(_)) || is_empty(v)
}

fn indent(n: usize, out: &mut String) {
    out.extend(std::iter::repeat_n(' ', n));
}

/// A non-empty object or array at `depth` spaces.
fn block(v: &Value, depth: usize, out: &mut String) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                indent(depth, out);
                entry(k, v, depth, out);
            }
        }
        Value::Array(a) => {
            for item in a {
                indent(depth, out);
                out.push_str("- ");
                match item {
                    Value::Object(m) if !m.is_empty() => {
                        // The first key on the dash's line, the rest under it.
                        for (i, (k, v)) in m.iter().enumerate() {
                            if i > 0 {
                                indent(depth + 2, out);
                            }
                            entry(k, v, depth + 2, out);
                        }
                    }
                    Value::Array(x) if !x.is_empty() => {
                        out.push('\n');
                        block(item, depth + 2, out);
                    }
                    other => {
                        out.push_str(&scalar(other));
                        out.push('\n');
                    }
                }
            }
        }
        other => {
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
}

/// A key written without quotes: a plain identifier-like word that YAML 1.1 and 1.2 both
/// read as that string (not a boolean or null).
fn bare_key(k: &str) -> bool {
    let mut b = k.bytes();
    b.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || b"_./-".contains(&c))
        && !matches!(
            k.to_ascii_lowercase().as_str(),
            "y" | "n" | "yes" | "no" | "on" | "off" | "true" | "false" | "null"
        )
}

/// `key: value` at `depth` (the indentation already written).
fn entry(k: &str, v: &Value, depth: usize, out: &mut String) {
    if bare_key(k) {
        out.push_str(k);
    } else {
        out.push_str(&Value::String(k.to_string()).to_string());
    }
    out.push(':');
    if inline(v) {
        out.push(' ');
        out.push_str(&scalar(v));
        out.push('\n');
    } else {
        out.push('\n');
        // Sequences under a key are indented like mappings, for readability.
        block(v, depth + 2, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_maps_and_lists_by_hand() {
        let v = json!({
            "a": 1,
            "b": {"c": "x: y", "d": []},
            "e": [{"f": true, "g": [1, 2]}, "h", {}],
            "no": null,
            "app.kubernetes.io/name": "x"
        });
        let want = "\
a: 1
b:
  c: \"x: y\"
  d: []
e:
  - f: true
    g:
      - 1
      - 2
  - \"h\"
  - {}
\"no\": null
app.kubernetes.io/name: \"x\"
";
        assert_eq!(document(&v), want);
        assert_eq!(
            documents(&[json!({"a": 1}), json!({"b": 2})]),
            "a: 1\n---\nb: 2\n"
        );
    }
}
