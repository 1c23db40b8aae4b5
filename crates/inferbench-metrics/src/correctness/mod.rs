//! Correctness: expected answers and the scorer of a response against one
//! (`docs/correctness.md`). Pure: an answer is parsed once from its JSON form, and a response
//! text is scored against it with no state.
//!
//! Answer forms (the dataset's `answer` field, and the canonical form frozen with a run):
//! - `"Paris"` or `{"exact": "Paris"}`: exact text, compared after [`normalize`];
//! - `{"regex": "^4[0-9]$", "example": "42"}`: matched against the trimmed output;
//! - `{"json_schema": {...}, "example": {...}}`: the output parsed as JSON (or its first
//!   fenced `` ```json `` block) is validated against the schema;
//! - `{"number": 3.5, "abs_tol": 0.01, "rel_tol": 0.001}`: the first number of the output;
//! - `{"choice": "B"}`: a letter A–Z (`answer: X`, else the first standalone capital).
//!
//! `example` (regex, JSON schema) is what the simulated server answers when it answers right;
//! it is checked against the answer itself when parsed.

mod score;
#[cfg(test)]
mod tests;

use serde_json::{Map, Value, json};

pub use score::{
    DEGENERATE_MIN_WORDS, Scored, extract_choice, extract_json, first_number, is_degenerate,
    normalize, score,
};

/// The kinds of answer, as named in the canonical form and in `correctness.json`.
pub const KINDS: [&str; 5] = ["exact", "regex", "json_schema", "number", "choice"];

/// One expected answer, parsed and compiled.
#[derive(Clone, Debug)]
pub struct Answer {
    pub spec: AnswerSpec,
    compiled: Compiled,
}

/// What an answer says, as written.
#[derive(Clone, Debug, PartialEq)]
pub enum AnswerSpec {
    Exact {
        text: String,
    },
    Regex {
        pattern: String,
        example: Option<String>,
    },
    JsonSchema {
        schema: Value,
        example: Option<Value>,
    },
    Number {
        value: f64,
        abs_tol: Option<f64>,
        rel_tol: Option<f64>,
    },
    Choice {
        letter: char,
    },
}

#[derive(Clone, Debug)]
enum Compiled {
    None,
    Regex(regex::Regex),
    Schema(std::sync::Arc<jsonschema::Validator>),
}

/// A bad answer: the field inside the answer (e.g. `answer.regex`) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnswerError {
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for AnswerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "field '{}': {}", self.field, self.message)
    }
}

impl std::error::Error for AnswerError {}

fn err(field: &str, message: impl Into<String>) -> AnswerError {
    AnswerError {
        field: field.to_string(),
        message: message.into(),
    }
}

fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The keys each kind allows, the kind key first.
const FORMS: [(&str, &[&str]); 5] = [
    ("exact", &["exact"]),
    ("regex", &["regex", "example"]),
    ("json_schema", &["json_schema", "example"]),
    ("number", &["number", "abs_tol", "rel_tol"]),
    ("choice", &["choice"]),
];

impl Answer {
    /// Parses an answer from its dataset form (`field` names it in errors, e.g. `answer`) or
    /// from its canonical form (`{"kind": ..., ...}`, as [`Answer::canonical`] writes it).
    pub fn parse(v: &Value, field: &str) -> Result<Answer, AnswerError> {
        let spec = match v {
            Value::String(s) => AnswerSpec::Exact { text: s.clone() },
            Value::Object(m) if m.contains_key("kind") => parse_canonical(m, field)?,
            Value::Object(m) => parse_form(m, field)?,
            other => {
                return Err(err(
                    field,
                    format!(
                        "expected a string or an object with one of {}, got {}",
                        KINDS.join(", "),
                        kind_name(other)
                    ),
                ));
            }
        };
        Answer::new(spec, field)
    }

    /// Compiles and checks a spec (its example must satisfy it).
    pub fn new(spec: AnswerSpec, field: &str) -> Result<Answer, AnswerError> {
        let compiled = match &spec {
            AnswerSpec::Exact { text } => {
                if normalize(text).is_empty() {
                    return Err(err(&format!("{field}.exact"), "the expected text is empty"));
                }
                Compiled::None
            }
            AnswerSpec::Regex { pattern, .. } => {
                let re = regex::Regex::new(pattern).map_err(|e| {
                    let first = e.to_string();
                    // The regex crate's message spans lines; keep the error on one.
                    let one = first.split_whitespace().collect::<Vec<_>>().join(" ");
                    err(&format!("{field}.regex"), format!("invalid pattern: {one}"))
                })?;
                Compiled::Regex(re)
            }
            AnswerSpec::JsonSchema { schema, .. } => {
                let v = jsonschema::validator_for(schema).map_err(|e| {
                    err(
                        &format!("{field}.json_schema"),
                        format!("invalid schema: {e}"),
                    )
                })?;
                Compiled::Schema(std::sync::Arc::new(v))
            }
            AnswerSpec::Number {
                value,
                abs_tol,
                rel_tol,
            } => {
                if !value.is_finite() {
                    return Err(err(&format!("{field}.number"), "must be a finite number"));
                }
                for (k, t) in [("abs_tol", abs_tol), ("rel_tol", rel_tol)] {
                    if let Some(t) = t
                        && !(t.is_finite() && *t >= 0.0)
                    {
                        return Err(err(&format!("{field}.{k}"), "must be a number >= 0"));
                    }
                }
                Compiled::None
            }
            AnswerSpec::Choice { letter } => {
                if !letter.is_ascii_uppercase() {
                    return Err(err(&format!("{field}.choice"), "must be one letter A-Z"));
                }
                Compiled::None
            }
        };
        let a = Answer { spec, compiled };
        let example = match &a.spec {
            AnswerSpec::Regex {
                example: Some(e), ..
            } => Some(e.clone()),
            AnswerSpec::JsonSchema {
                example: Some(e), ..
            } => Some(e.to_string()),
            _ => None,
        };
        if let Some(e) = example
            && !score(&a, &e).correct
        {
            return Err(err(
                &format!("{field}.example"),
                "the example does not satisfy the answer",
            ));
        }
        Ok(a)
    }

    /// The kind's name (one of [`KINDS`]).
    pub fn kind(&self) -> &'static str {
        match self.spec {
            AnswerSpec::Exact { .. } => "exact",
            AnswerSpec::Regex { .. } => "regex",
            AnswerSpec::JsonSchema { .. } => "json_schema",
            AnswerSpec::Number { .. } => "number",
            AnswerSpec::Choice { .. } => "choice",
        }
    }

    /// The canonical form: `kind` first, then the kind's fields in a fixed order, absent
    /// options left out, object keys of schemas and examples sorted.
    pub fn canonical(&self) -> Value {
        let mut m = Map::new();
        m.insert("kind".into(), self.kind().into());
        match &self.spec {
            AnswerSpec::Exact { text } => {
                m.insert("text".into(), text.clone().into());
            }
            AnswerSpec::Regex { pattern, example } => {
                m.insert("pattern".into(), pattern.clone().into());
                if let Some(e) = example {
                    m.insert("example".into(), e.clone().into());
                }
            }
            AnswerSpec::JsonSchema { schema, example } => {
                m.insert("schema".into(), sorted(schema));
                if let Some(e) = example {
                    m.insert("example".into(), sorted(e));
                }
            }
            AnswerSpec::Number {
                value,
                abs_tol,
                rel_tol,
            } => {
                m.insert("value".into(), json!(value));
                if let Some(t) = abs_tol {
                    m.insert("abs_tol".into(), json!(t));
                }
                if let Some(t) = rel_tol {
                    m.insert("rel_tol".into(), json!(t));
                }
            }
            AnswerSpec::Choice { letter } => {
                m.insert("letter".into(), letter.to_string().into());
            }
        }
        Value::Object(m)
    }

    /// What the simulated server says: the right answer, or a wrong one of the same kind.
    /// A regex or JSON-schema answer without an `example` has no right text to say.
    pub fn simulated(&self, correct: bool) -> Result<String, String> {
        match &self.spec {
            AnswerSpec::Exact { text } if correct => Ok(text.clone()),
            // Longer after normalisation, so never equal to the expected text.
            AnswerSpec::Exact { text } => Ok(format!("not {text}")),
            AnswerSpec::Regex { example, .. } => {
                let Some(example) = example else {
                    return Err(
                        "a regex answer needs an \"example\" for the simulated server".into(),
                    );
                };
                if correct {
                    return Ok(example.clone());
                }
                let candidates = [
                    "none".to_string(),
                    format!("not {example}"),
                    "0".to_string(),
                    "?".to_string(),
                ];
                candidates
                    .into_iter()
                    .find(|c| !score(self, c).correct)
                    .ok_or_else(|| {
                        "the pattern matches every wrong answer the simulated server can give"
                            .to_string()
                    })
            }
            AnswerSpec::JsonSchema { example, .. } => {
                let Some(example) = example else {
                    return Err(
                        "a json_schema answer needs an \"example\" for the simulated server".into(),
                    );
                };
                // Not JSON at all: wrong whatever the schema allows.
                Ok(if correct {
                    example.to_string()
                } else {
                    "no JSON here".to_string()
                })
            }
            AnswerSpec::Number {
                value,
                abs_tol,
                rel_tol,
            } => {
                if correct {
                    return Ok(format!("{value}"));
                }
                let delta =
                    1.0 + 10.0 * (abs_tol.unwrap_or(0.0) + rel_tol.unwrap_or(0.0) * value.abs());
                Ok(format!("{}", value + delta))
            }
            AnswerSpec::Choice { letter } => {
                if correct {
                    return Ok(letter.to_string());
                }
                let next = if *letter == 'Z' {
                    'A'
                } else {
                    (*letter as u8 + 1) as char
                };
                Ok(next.to_string())
            }
        }
    }

    pub(crate) fn regex(&self) -> Option<&regex::Regex> {
        match &self.compiled {
            Compiled::Regex(r) => Some(r),
            _ => None,
        }
    }

    pub(crate) fn validator(&self) -> Option<&jsonschema::Validator> {
        match &self.compiled {
            Compiled::Schema(v) => Some(v),
            _ => None,
        }
    }
}

impl PartialEq for Answer {
    fn eq(&self, other: &Answer) -> bool {
        self.spec == other.spec
    }
}

/// A value with every object's keys sorted (the canonical form does not depend on how a
/// dataset ordered them).
fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&m[k])))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

fn parse_form(m: &Map<String, Value>, field: &str) -> Result<AnswerSpec, AnswerError> {
    let Some((kind, allowed)) = FORMS.iter().find(|(k, _)| m.contains_key(*k)) else {
        return Err(err(
            field,
            format!("an answer object needs one of {}", KINDS.join(", ")),
        ));
    };
    for k in m.keys() {
        if !allowed.contains(&k.as_str()) {
            let why = if KINDS.contains(&k.as_str()) {
                format!("an answer has one kind ({kind} is already given)")
            } else {
                format!("unknown field for a {kind} answer")
            };
            return Err(err(&format!("{field}.{k}"), why));
        }
    }
    let f = |k: &str| format!("{field}.{k}");
    Ok(match *kind {
        "exact" => AnswerSpec::Exact {
            text: string(m, "exact", field)?.unwrap_or_default(),
        },
        "regex" => AnswerSpec::Regex {
            pattern: string(m, "regex", field)?.unwrap_or_default(),
            example: string(m, "example", field)?,
        },
        "json_schema" => {
            let schema = m["json_schema"].clone();
            if !matches!(schema, Value::Object(_) | Value::Bool(_)) {
                return Err(err(&f("json_schema"), "expected a JSON schema (an object)"));
            }
            AnswerSpec::JsonSchema {
                schema,
                example: m.get("example").cloned(),
            }
        }
        "number" => AnswerSpec::Number {
            value: number(m, "number", field)?.unwrap_or(f64::NAN),
            abs_tol: number(m, "abs_tol", field)?,
            rel_tol: number(m, "rel_tol", field)?,
        },
        _ => AnswerSpec::Choice {
            letter: letter(m, "choice", field)?,
        },
    })
}

fn parse_canonical(m: &Map<String, Value>, field: &str) -> Result<AnswerSpec, AnswerError> {
    let kind = string(m, "kind", field)?.unwrap_or_default();
    let allowed: &[&str] = match kind.as_str() {
        "exact" => &["kind", "text"],
        "regex" => &["kind", "pattern", "example"],
        "json_schema" => &["kind", "schema", "example"],
        "number" => &["kind", "value", "abs_tol", "rel_tol"],
        "choice" => &["kind", "letter"],
        other => {
            return Err(err(
                &format!("{field}.kind"),
                format!(
                    "unknown answer kind {other:?} (known: {})",
                    KINDS.join(", ")
                ),
            ));
        }
    };
    if let Some(k) = m.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(err(
            &format!("{field}.{k}"),
            format!("unknown field for a {kind} answer"),
        ));
    }
    let need = |k: &str| {
        if m.contains_key(k) {
            Ok(())
        } else {
            Err(err(&format!("{field}.{k}"), "missing"))
        }
    };
    Ok(match kind.as_str() {
        "exact" => {
            need("text")?;
            AnswerSpec::Exact {
                text: string(m, "text", field)?.unwrap_or_default(),
            }
        }
        "regex" => {
            need("pattern")?;
            AnswerSpec::Regex {
                pattern: string(m, "pattern", field)?.unwrap_or_default(),
                example: string(m, "example", field)?,
            }
        }
        "json_schema" => {
            need("schema")?;
            AnswerSpec::JsonSchema {
                schema: m["schema"].clone(),
                example: m.get("example").cloned(),
            }
        }
        "number" => {
            need("value")?;
            AnswerSpec::Number {
                value: number(m, "value", field)?.unwrap_or(f64::NAN),
                abs_tol: number(m, "abs_tol", field)?,
                rel_tol: number(m, "rel_tol", field)?,
            }
        }
        _ => {
            need("letter")?;
            AnswerSpec::Choice {
                letter: letter(m, "letter", field)?,
            }
        }
    })
}

fn string(m: &Map<String, Value>, k: &str, field: &str) -> Result<Option<String>, AnswerError> {
    match m.get(k) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(v) => Err(err(
            &format!("{field}.{k}"),
            format!("expected a string, got {}", kind_name(v)),
        )),
    }
}

fn number(m: &Map<String, Value>, k: &str, field: &str) -> Result<Option<f64>, AnswerError> {
    match m.get(k) {
        None => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(v) => Err(err(
            &format!("{field}.{k}"),
            format!("expected a number, got {}", kind_name(v)),
        )),
    }
}

fn letter(m: &Map<String, Value>, k: &str, field: &str) -> Result<char, AnswerError> {
    let s = string(m, k, field)?.unwrap_or_default();
    let mut chars = s.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if c.is_ascii_alphabetic() => Ok(c.to_ascii_uppercase()),
        _ => Err(err(
            &format!("{field}.{k}"),
            format!("expected one letter A-Z, got {s:?}"),
        )),
    }
}

/// Accuracy with its Wilson score interval (two-sided, at `confidence`), as fractions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Accuracy {
    pub correct: u64,
    pub scored: u64,
    /// `correct / scored` (None when nothing was scored).
    pub fraction: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

/// The accuracy of `correct` of `scored` responses.
pub fn accuracy(correct: u64, scored: u64, confidence: f64) -> Accuracy {
    let ci = crate::confidence::wilson_interval(correct, scored, confidence);
    Accuracy {
        correct,
        scored,
        fraction: (scored > 0).then(|| correct as f64 / scored as f64),
        low: ci.map(|c| c.0),
        high: ci.map(|c| c.1),
    }
}
