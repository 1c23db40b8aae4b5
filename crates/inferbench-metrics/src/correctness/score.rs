//! Scoring one response text against one answer, and the degenerate-output rule.

use std::sync::OnceLock;

use serde_json::Value;

use super::{Answer, AnswerSpec};

/// A degenerate output is empty (after trimming), or has at least this many
/// whitespace-separated words and only one distinct word (case-folded).
pub const DEGENERATE_MIN_WORDS: usize = 8;

/// One response, scored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scored {
    pub correct: bool,
    pub degenerate: bool,
    /// What the scorer compared (the number, the letter, the normalised text), when it
    /// found something to compare.
    pub extracted: Option<String>,
}

/// Exact-text normalisation: surrounding whitespace trimmed, case-folded (Unicode
/// lowercase), runs of whitespace inside collapsed to one space, then one trailing period
/// dropped (and the whitespace before it).
pub fn normalize(s: &str) -> String {
    let folded = s
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    match folded.strip_suffix('.') {
        Some(rest) => rest.trim_end().to_string(),
        None => folded,
    }
}

/// Empty, or [`DEGENERATE_MIN_WORDS`] or more words that are all the same word.
pub fn is_degenerate(output: &str) -> bool {
    let words: Vec<String> = output.split_whitespace().map(str::to_lowercase).collect();
    match words.first() {
        None => true,
        Some(first) => words.len() >= DEGENERATE_MIN_WORDS && words.iter().all(|w| w == first),
    }
}

fn number_re() -> &'static regex::Regex {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    RE.get_or_init(|| {
        // Thousands separators (1,234) before plain digits, so "1,234" is one number.
        regex::Regex::new(r"[-+]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?")
            .expect("a valid pattern")
    })
}

/// The first number in the text: an optional sign, digits (with optional `,` thousands
/// separators), an optional fraction and exponent; `.5` counts too.
pub fn first_number(text: &str) -> Option<f64> {
    let m = number_re().find(text)?;
    m.as_str().replace(',', "").parse::<f64>().ok()
}

fn answer_re() -> &'static regex::Regex {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(r"(?i)\banswer\s*(?:is)?\s*[:=]?\s*\(?([a-z])\)?(?:[^a-z0-9]|$)")
            .expect("a valid pattern")
    })
}

fn standalone_re() -> &'static regex::Regex {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    RE.get_or_init(|| regex::Regex::new(r"\b([A-Z])\b").expect("a valid pattern"))
}

/// The chosen letter: after `answer` (`answer: X`, `answer is (X)`, any case), else the first
/// standalone capital letter A–Z (a letter with no letter or digit on either side).
pub fn extract_choice(text: &str) -> Option<char> {
    let c = answer_re()
        .captures(text)
        .or_else(|| standalone_re().captures(text))?;
    c.get(1)?
        .as_str()
        .chars()
        .next()
        .map(|c| c.to_ascii_uppercase())
}

/// The output as JSON: the whole trimmed text, else the first fenced block opened by
/// `` ```json `` (up to the next `` ``` ``).
pub fn extract_json(text: &str) -> Option<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(text.trim()) {
        return Some(v);
    }
    let start = text.find("```json")? + "```json".len();
    let rest = &text[start..];
    let end = rest.find("```")?;
    serde_json::from_str::<Value>(rest[..end].trim()).ok()
}

/// Scores `output` (the response's content text, reasoning excluded) against `answer`.
pub fn score(answer: &Answer, output: &str) -> Scored {
    let degenerate = is_degenerate(output);
    let (correct, extracted) = match &answer.spec {
        AnswerSpec::Exact { text } => {
            let got = normalize(output);
            (got == normalize(text), Some(got))
        }
        AnswerSpec::Regex { .. } => {
            let t = output.trim();
            let ok = answer.regex().is_some_and(|r| r.is_match(t));
            (ok, None)
        }
        AnswerSpec::JsonSchema { .. } => match extract_json(output) {
            Some(v) => (
                answer.validator().is_some_and(|s| s.is_valid(&v)),
                Some(v.to_string()),
            ),
            None => (false, None),
        },
        AnswerSpec::Number {
            value,
            abs_tol,
            rel_tol,
        } => match first_number(output) {
            Some(x) => (within(x, *value, *abs_tol, *rel_tol), Some(format!("{x}"))),
            None => (false, None),
        },
        AnswerSpec::Choice { letter } => match extract_choice(output) {
            Some(c) => (c == *letter, Some(c.to_string())),
            None => (false, None),
        },
    };
    Scored {
        correct,
        degenerate,
        extracted,
    }
}

/// Either tolerance suffices; with neither, the number must be equal.
fn within(x: f64, v: f64, abs_tol: Option<f64>, rel_tol: Option<f64>) -> bool {
    let d = (x - v).abs();
    match (abs_tol, rel_tol) {
        (None, None) => d == 0.0,
        (a, r) => a.is_some_and(|a| d <= a) || r.is_some_and(|r| d <= r * v.abs()),
    }
}
