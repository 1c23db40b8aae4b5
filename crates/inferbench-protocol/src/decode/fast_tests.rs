//! The fast path answers as serde does, or declines.

use super::tests::{S1_FIRST, S1_USAGE, S2_REASONING, S4_TEXT, S5_BODY, S6_ERROR};
use super::*;
use proptest::prelude::*;

const SHAPES: [Shape; 3] = [
    Shape::Chat { body: false },
    Shape::Chat { body: true },
    Shape::Completions,
];

/// Every shape decodes `data` the same with and without the fast path.
fn same_as_serde(data: &str) -> Result<(), TestCaseError> {
    for shape in SHAPES {
        prop_assert_eq!(decode(data, shape), decode_serde(data, shape), "{}", data);
    }
    Ok(())
}

// Real chunks: vLLM's (logprobs, stop_reason), llama.cpp's (keys in another order, timings),
// SGLang's final usage chunk.
const VLLM: &str = r#"{"id":"chatcmpl-9f2","object":"chat.completion.chunk","created":1733300000,"model":"m","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null,"stop_reason":null}]}"#;
const LLAMA_CPP: &str = r#"{"choices":[{"finish_reason":null,"index":0,"delta":{"content":" of"}}],"created":1733300000,"id":"chatcmpl-x","model":"m","system_fingerprint":"b4000","object":"chat.completion.chunk","timings":{"prompt_n":12,"predicted_per_second":51.25e0}}"#;
const SGLANG_USAGE: &str = " {\"id\": \"1\", \"object\": \"chat.completion.chunk\", \"choices\": [], \"usage\": {\"prompt_tokens\": 32, \"completion_tokens\": 16, \"total_tokens\": 48, \"prompt_tokens_details\": null}}\n";

#[test]
fn takes_the_common_chunks() {
    for data in [
        S1_FIRST,
        S1_USAGE,
        S2_REASONING,
        S4_TEXT,
        S5_BODY,
        S6_ERROR,
        VLLM,
        LLAMA_CPP,
        SGLANG_USAGE,
    ] {
        assert!(fast::wire(data).is_some(), "{data}");
        same_as_serde(data).unwrap();
    }
    let d = decode_chat_chunk(LLAMA_CPP).unwrap();
    assert_eq!(d.content.as_deref(), Some(" of"));
    let d = decode_chat_chunk(SGLANG_USAGE).unwrap();
    assert_eq!(d.usage.unwrap()["completion_tokens"], 16);
}

#[test]
fn declines_what_serde_must_read() {
    for data in [
        // An escape in the text, in a key, in a skipped value.
        r#"{"choices":[{"delta":{"content":"a\nb"}}]}"#,
        r#"{"choices":[{"del\u0074a":{"content":"x"}}]}"#,
        r#"{"id":"a\"b","choices":[]}"#,
        // A duplicate key, at each level.
        r#"{"choices":[],"choices":null}"#,
        r#"{"choices":[{"text":"a","text":"b"}]}"#,
        r#"{"choices":[{"delta":{"content":"a","content":"b"}}]}"#,
        // A text field that is not a string or null; tool calls.
        r#"{"choices":[{"delta":{"content":5}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"f"}}]}}]}"#,
        // Not an object at the top; not a choice object; trailing bytes; bad JSON.
        r#"[null,[{"text":"x"}]]"#,
        r#"{"choices":[null]}"#,
        r#"{"choices":[]} x"#,
        r#"{"choices":[],}"#,
        r#"{"created":01,"choices":[]}"#,
        "{\"choices\":[{\"text\":\"a\tb\"}]}",
        "[DONE]",
        "",
    ] {
        assert!(fast::wire(data).is_none(), "{data}");
        same_as_serde(data).unwrap();
    }
}

/// JSON text for an arbitrary value of the kinds servers put in unknown fields.
fn any_json() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_owned()),
        Just("true".to_owned()),
        Just("false".to_owned()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(|x| format!("{x:e}")),
        "[a-z \\\\\"\u{e9}\u{1F600}]{0,6}".prop_map(|s| serde_json::to_string(&s).unwrap()),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec(("[a-z_]{1,8}", inner), 0..4).prop_map(|v| {
                let fields: Vec<String> = v.iter().map(|(k, x)| format!("\"{k}\":{x}")).collect();
                format!("{{{}}}", fields.join(","))
            }),
        ]
    })
}

/// A text field's value: usually a plain string, sometimes null, an escape or a number.
fn text_value() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[ a-z\u{e9}]{0,8}".prop_map(|s| format!("\"{s}\"")),
        1 => Just("null".to_owned()),
        1 => "[ a-z\n\"]{0,4}".prop_map(|s| serde_json::to_string(&s).unwrap()),
        1 => any_json(),
    ]
}

/// An object of `known` fields (each maybe given, maybe twice) and unknown ones, shuffled,
/// with random whitespace between tokens.
fn object_of(known: Vec<(&'static str, BoxedStrategy<String>)>) -> impl Strategy<Value = String> {
    let fields: Vec<BoxedStrategy<Vec<(String, String)>>> = known
        .into_iter()
        .map(|(k, v)| {
            prop::collection::vec(v, 0..3)
                .prop_map(move |vs| vs.into_iter().map(|x| (k.to_owned(), x)).collect())
                .boxed()
        })
        .collect();
    (
        fields,
        prop::collection::vec(("[a-z]{1,6}", any_json()), 0..3),
        prop::collection::vec(prop::sample::select(vec!["", "", " ", "\n", "\t "]), 8),
        any::<u64>(),
    )
        .prop_map(|(known, unknown, ws, seed)| {
            let mut all: Vec<(String, String)> = known.into_iter().flatten().collect();
            all.extend(unknown);
            // A deterministic shuffle from the seed.
            let n = all.len();
            for i in 0..n {
                let j = (seed.rotate_left(i as u32 * 7) % n as u64) as usize;
                all.swap(i, j);
            }
            let w = |i: usize| ws[i % ws.len()];
            let body: Vec<String> = all
                .iter()
                .enumerate()
                .map(|(i, (k, v))| format!("{}\"{k}\"{}:{}{v}", w(i), w(i + 1), w(i + 2)))
                .collect();
            format!("{{{}{}}}", body.join(","), w(n + 3))
        })
}

fn message() -> BoxedStrategy<String> {
    prop_oneof![
        8 => object_of(vec![
            ("content", text_value().boxed()),
            ("reasoning_content", text_value().boxed()),
            ("reasoning", text_value().boxed()),
            ("tool_calls", prop_oneof![Just("null".to_owned()), any_json()].boxed()),
        ]),
        1 => any_json(),
    ]
    .boxed()
}

fn choices() -> BoxedStrategy<String> {
    let choice = object_of(vec![
        ("delta", message()),
        ("message", message()),
        ("text", text_value().boxed()),
        ("finish_reason", text_value().boxed()),
    ]);
    prop_oneof![
        8 => prop::collection::vec(choice, 0..3).prop_map(|v| format!("[{}]", v.join(","))),
        1 => any_json(),
    ]
    .boxed()
}

fn chunk() -> impl Strategy<Value = String> {
    object_of(vec![
        ("object", text_value().boxed()),
        ("choices", choices()),
        ("usage", any_json().boxed()),
        ("error", any_json().boxed()),
        ("message", text_value().boxed()),
    ])
}

/// Decodes `chunks` in turn through one memo, each answer checked against the chunk decoded
/// alone (with serde's answer checked against that by the other tests); the memo's hits.
fn same_through_a_memo(shape: Shape, chunks: &[String]) -> Result<u64, TestCaseError> {
    let mut memo = fast::Memo::default();
    for data in chunks {
        let mut out = Decoded::default();
        let with_memo = decode_into(data, shape, &mut out, Some(&mut memo)).map(|()| out);
        prop_assert_eq!(with_memo, decode(data, shape), "{}", data);
    }
    Ok(memo.hits)
}

#[test]
fn a_stream_reads_its_leading_fields_once() {
    let chunk = |delta: &str, finish: &str| {
        format!(
            r#"{{"id":"chatcmpl-9f2","object":"chat.completion.chunk","created":1733300000,"model":"m","choices":[{{"index":0,"delta":{delta},"finish_reason":{finish}}}]}}"#
        )
    };
    let stream = [
        chunk(r#"{"role":"assistant","content":""}"#, "null"),
        chunk(r#"{"content":" the"}"#, "null"),
        chunk(r#"{"content":" end"}"#, r#""length""#),
        r#"{"id":"chatcmpl-9f2","object":"chat.completion.chunk","created":1733300000,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}"#.to_owned(),
        // Another id: read whole, and remembered in turn.
        chunk(r#"{"content":" x"}"#, "null").replace("9f2", "9f3"),
        chunk(r#"{"content":" y"}"#, "null").replace("9f2", "9f3"),
        // The same leading bytes, then a key given twice: declined as read whole.
        r#"{"id":"chatcmpl-9f3","object":"chat.completion.chunk","created":1733300000,"model":"m","object":"x","choices":[]}"#.to_owned(),
    ];
    let hits = same_through_a_memo(Shape::Chat { body: false }, &stream).unwrap();
    assert_eq!(hits, 4);
    let mut memo = fast::Memo::default();
    let mut out = Decoded::default();
    for data in &stream[..3] {
        decode_into(data, Shape::Chat { body: false }, &mut out, Some(&mut memo)).unwrap();
    }
    assert_eq!(out.content.as_deref(), Some(" end"));
    assert_eq!(out.finish_reason.as_deref(), Some("length"));
    // llama.cpp puts `choices` first: nothing to remember, nothing lost.
    // An error's `object` is among the leading fields: its message still comes out.
    let errors = [
        r#"{"object":"error","message":"overloaded","code":503}"#.to_owned(),
        r#"{"object":"error","message":"still overloaded","code":503}"#.to_owned(),
    ];
    assert_eq!(
        same_through_a_memo(Shape::Chat { body: false }, &errors).unwrap(),
        1
    );
    let mut out = Decoded::default();
    for data in &errors {
        decode_into(data, Shape::Chat { body: false }, &mut out, Some(&mut memo)).unwrap();
    }
    assert_eq!(out.error.as_deref(), Some("still overloaded"));
    let llama = vec![LLAMA_CPP.to_owned(); 3];
    assert_eq!(
        same_through_a_memo(Shape::Chat { body: false }, &llama).unwrap(),
        0
    );
}

/// A value without escapes, which the fast path reads (so that a chunk can be remembered).
fn plain_json() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_owned()),
        Just("true".to_owned()),
        any::<i32>().prop_map(|n| n.to_string()),
        "[a-z \u{e9}]{0,6}".prop_map(|s| format!("\"{s}\"")),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop::collection::vec(inner, 0..3).prop_map(|v| format!("[{}]", v.join(",")))
    })
}

/// Chunks that share leading fields (`object` and unknown keys, in any order and spacing)
/// and differ after them, as a stream's do; some damaged anywhere, the shared part included.
fn stream_of_chunks() -> impl Strategy<Value = Vec<String>> {
    let ws = || prop::sample::select(vec!["", "", " ", "\n"]);
    // `"object": "error"` makes the chunk an error, whose message comes after it.
    let key = prop_oneof![
        2 => "[a-z]{1,6}",
        1 => Just("object".to_owned()),
        1 => Just("choices".to_owned()),
    ];
    let value = prop_oneof![
        3 => plain_json(),
        1 => Just(r#""error""#.to_owned()),
    ];
    let leading = prop::collection::vec((key, value, ws(), ws()), 1..5).prop_map(|fields| {
        let body: Vec<String> = fields
            .iter()
            .map(|(k, v, a, b)| format!("{a}\"{k}\"{b}:{v}"))
            .collect();
        format!("{{{},", body.join(","))
    });
    let word = "[ a-z\u{e9}]{0,6}";
    let tail = prop_oneof![
        4 => (word, prop::sample::select(vec!["null", r#""length""#])).prop_map(|(w, f)| format!(
            r#""choices":[{{"index":0,"delta":{{"content":"{w}"}},"finish_reason":{f}}}]}}"#
        )),
        1 => Just(r#""choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}"#.to_owned()),
        1 => word.prop_map(|w| format!(r#""message":"{w}","code":503}}"#)),
        1 => word.prop_map(|w| format!(r#""error":{{"message":"{w}"}}}}"#)),
        1 => Just(r#""x":1 }"#.to_owned()),
        // A key the leading fields may hold already.
        1 => Just(r#""object":"again","choices":[]}"#.to_owned()),
        1 => chunk().prop_map(|c| c.trim_start().trim_start_matches('{').to_owned()),
    ];
    let damage = (
        any::<prop::sample::Index>(),
        prop::sample::select(b"{}[],:\"\\ 0-eE.ntf".to_vec()),
        0..6u8,
    );
    (leading, prop::collection::vec((tail, damage), 1..6)).prop_map(|(head, tails)| {
        tails
            .into_iter()
            .map(|(tail, (at, byte, how))| {
                let mut b = format!("{head}{tail}").into_bytes();
                let i = at.index(b.len().max(1)).min(b.len());
                match how {
                    0 => b.truncate(i),
                    1 if i < b.len() && b[i].is_ascii() => b[i] = byte,
                    _ => {}
                }
                String::from_utf8(b).unwrap_or_default()
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn chunks_through_a_memo_decode_as_each_alone(chunks in stream_of_chunks()) {
        for shape in SHAPES {
            same_through_a_memo(shape, &chunks)?;
        }
    }

    #[test]
    fn chunks_decode_as_serde_decodes_them(data in chunk()) {
        same_as_serde(&data)?;
    }

    /// Cut anywhere, or with one byte replaced: still the same answer.
    #[test]
    fn damaged_chunks_decode_as_serde_decodes_them(
        data in chunk(),
        at in any::<prop::sample::Index>(),
        byte in prop::sample::select(b"{}[],:\"\\ 0-eE.ntf".to_vec()),
        cut in any::<bool>(),
    ) {
        let mut b = data.into_bytes();
        let i = at.index(b.len().max(1)).min(b.len());
        if cut {
            b.truncate(i);
        } else if i < b.len() && b[i].is_ascii() {
            b[i] = byte;
        }
        if let Ok(s) = String::from_utf8(b) {
            same_as_serde(&s)?;
        }
    }

    #[test]
    fn any_text_decodes_as_serde_decodes_it(data in ".{0,64}") {
        same_as_serde(&data)?;
    }
}
