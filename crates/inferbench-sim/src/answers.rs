//! Answering questions: with an answer key, the simulated server recognises a question by
//! the text of the request's last user message and answers it right with a set probability,
//! deterministically (see `docs/simulated-server.md`, "Answers").

use std::collections::HashMap;

/// What the server answers, by question text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AnswerKey {
    /// Where the key came from (a file, or "the run's expected answers"), for the error a
    /// request with an unknown question gets.
    pub source: String,
    /// Probability in [0, 1] that a question is answered right.
    pub accuracy: f64,
    /// Seeds the right/wrong draw of each question.
    pub seed: u64,
    /// Question text → the right and the wrong answer text.
    pub entries: HashMap<String, KeyAnswer>,
    /// A prompt the key lacks is refused (HTTP 400 naming `source`: a key that does not match
    /// the dataset); otherwise it gets the usual filler words (a run whose dataset has
    /// questions without answers).
    pub refuse_unknown: bool,
}

/// The two texts the server can give for one question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyAnswer {
    pub right: String,
    pub wrong: String,
}

impl AnswerKey {
    /// The answer text for `question`, or None when the key does not hold it.
    pub fn answer(&self, question: &str) -> Option<&str> {
        let a = self.entries.get(question)?;
        Some(if answers_right(self.seed, question, self.accuracy) {
            &a.right
        } else {
            &a.wrong
        })
    }
}

/// The draw for one question: `u = first 8 bytes of SHA-256("{seed}:{question}")`, read
/// big-endian, divided by 2^64; the question is answered right when `u < accuracy`. The same
/// question gets the same verdict on every request, so the number of right answers of a run
/// follows from the questions it sent.
pub fn answers_right(seed: u64, question: &str, accuracy: f64) -> bool {
    let hex = inferbench_core::seed::sha256_hex(format!("{seed}:{question}").as_bytes());
    let u = u64::from_str_radix(&hex[..16], 16).unwrap_or(u64::MAX) as f64
        / 18_446_744_073_709_551_616.0;
    u < accuracy
}

/// The question of a request body: the text of its last user message (chat, Messages,
/// Responses `input` items), else its `prompt` (completions), `input` string (Responses) or
/// `inputs` (TGI). Content parts' texts are joined by a newline.
pub fn question_text(body: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    fn text_of(content: &Value) -> Option<String> {
        match content {
            Value::String(s) => Some(s.clone()),
            Value::Array(parts) => {
                let texts: Vec<&str> = parts
                    .iter()
                    .filter_map(|p| match p {
                        Value::String(s) => Some(s.as_str()),
                        Value::Object(o) => o.get("text").and_then(Value::as_str),
                        _ => None,
                    })
                    .collect();
                (!texts.is_empty()).then(|| texts.join("\n"))
            }
            _ => None,
        }
    }
    fn last_user(items: &[Value]) -> Option<String> {
        items
            .iter()
            .rev()
            .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            .and_then(|m| m.get("content"))
            .and_then(text_of)
    }
    let o = body.as_object()?;
    if let Some(Value::Array(ms)) = o.get("messages") {
        return last_user(ms);
    }
    match o.get("input") {
        Some(Value::Array(items)) => return last_user(items),
        Some(Value::String(s)) => return Some(s.clone()),
        _ => {}
    }
    o.get("prompt")
        .or_else(|| o.get("inputs"))
        .and_then(text_of)
}

/// An answer as output tokens: split at spaces, each later piece keeping its space, so the
/// tokens laid end to end are the text.
pub(crate) fn tokens_of(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, piece) in text.split(' ').enumerate() {
        out.push(if i == 0 {
            piece.to_string()
        } else {
            format!(" {piece}")
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tokens_lay_end_to_end_as_the_text() {
        for t in ["Paris", "not  Paris", "{\"a\": 1}", ""] {
            assert_eq!(tokens_of(t).concat(), t);
        }
        assert_eq!(tokens_of("a b"), vec!["a".to_string(), " b".to_string()]);
    }

    #[test]
    fn the_question_is_the_last_user_message() {
        let chat = json!({"messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
        ]});
        assert_eq!(question_text(&chat).as_deref(), Some("a\nb"));
        assert_eq!(
            question_text(&json!({"prompt": "2+2?"})).as_deref(),
            Some("2+2?")
        );
        assert_eq!(
            question_text(&json!({"input": "hi"})).as_deref(),
            Some("hi")
        );
        assert_eq!(
            question_text(&json!({"inputs": "tgi"})).as_deref(),
            Some("tgi")
        );
        assert_eq!(question_text(&json!({"query": "x"})), None);
    }

    #[test]
    fn the_draw_is_the_documented_hash_rule() {
        // SHA-256("0:q") = e4eff618 40181c2f … (sha256sum): u = 0xe4eff61840181c2f / 2^64.
        let u = 0xe4ef_f618_4018_1c2f_u64 as f64 / 2f64.powi(64);
        assert!((u - 0.8943).abs() < 1e-3);
        assert!(answers_right(0, "q", u + 1e-9));
        assert!(!answers_right(0, "q", u));
        assert!(answers_right(7, "anything", 1.0));
        assert!(!answers_right(7, "anything", 0.0));
        // Over many questions the fraction right is close to the accuracy.
        let right = (0..2000)
            .filter(|i| answers_right(3, &format!("question {i}"), 0.9))
            .count();
        assert!((1740..=1860).contains(&right), "{right}");
    }
}
