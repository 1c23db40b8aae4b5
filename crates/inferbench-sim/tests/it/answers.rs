//! The answer key end to end: the answer's text replaces the filler words, streamed and not,
//! and a prompt the key lacks is refused or answered with filler as configured.

use crate::common;

use std::sync::Arc;

use common::*;
use inferbench_sim::SimConfig;
use tokio::time::timeout;

#[tokio::test(flavor = "current_thread")]
async fn an_answer_key_answers_in_place_of_the_filler_words() {
    timeout(LIMIT, async {
        use inferbench_sim::{AnswerKey, KeyAnswer};
        let mut entries = std::collections::HashMap::new();
        for (q, right, wrong) in [
            ("Capital of France?", "Paris", "not Paris"),
            ("What is 6 x 7?", "42", "53"),
        ] {
            entries.insert(
                q.to_string(),
                KeyAnswer {
                    right: right.into(),
                    wrong: wrong.into(),
                },
            );
        }
        let key = AnswerKey {
            source: "key.jsonl".into(),
            accuracy: 0.5,
            seed: 11,
            entries,
            refuse_unknown: true,
        };
        // The expected text of each question, by the documented rule.
        let expect = |q: &str| {
            let a = &key.entries[q];
            if inferbench_sim::answers_right(11, q, 0.5) {
                a.right.clone()
            } else {
                a.wrong.clone()
            }
        };
        let server = start(SimConfig {
            answers: Some(Arc::new(key.clone())),
            reasoning_tokens: 2,
            ..cfg()
        })
        .await;
        let addr = server.local_addr();
        for q in ["Capital of France?", "What is 6 x 7?"] {
            let body = serde_json::json!({"model": "m", "max_tokens": 50,
                "messages": [{"role": "user", "content": q}]})
            .to_string();
            let r = call(addr, "POST", "/v1/chat/completions", &body).await;
            assert_eq!(r.status, 200);
            let v = r.json();
            assert_eq!(v["choices"][0]["message"]["content"], expect(q).as_str());
            assert_eq!(v["choices"][0]["finish_reason"], "stop");
            // Streamed: the same text, one space-separated piece per event.
            let sbody = serde_json::json!({"model": "m", "stream": true, "max_tokens": 50,
                "messages": [{"role": "user", "content": q}]})
            .to_string();
            let r = call(addr, "POST", "/v1/chat/completions", &sbody).await;
            let text: String = r
                .chunks()
                .iter()
                .filter_map(|c| delta_text(c, "content"))
                .collect();
            assert_eq!(text, expect(q));
            assert!(r.done());
        }
        // A prompt the key does not hold is refused, naming the key.
        let body = r#"{"model":"m","messages":[{"role":"user","content":"Unknown?"}]}"#;
        let r = call(addr, "POST", "/v1/chat/completions", body).await;
        assert_eq!(r.status, 400);
        assert!(
            r.json()["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("key.jsonl: this prompt is not in the answer key")
        );
        server.shutdown().await;
        // Without refuse_unknown, an unknown prompt gets filler words.
        let server = start(SimConfig {
            answers: Some(Arc::new(AnswerKey {
                refuse_unknown: false,
                ..key
            })),
            ..cfg()
        })
        .await;
        let r = call(server.local_addr(), "POST", "/v1/chat/completions", body).await;
        assert_eq!(r.status, 200);
        assert!(WORDS.iter().any(|w| {
            r.json()["choices"][0]["message"]["content"]
                .as_str()
                .unwrap()
                .contains(w.trim())
        }));
        server.shutdown().await;
    })
    .await
    .unwrap();
}
