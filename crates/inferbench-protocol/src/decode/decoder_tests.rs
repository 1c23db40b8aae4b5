//! Tests of the run's `Decoder` and its per-stream state.

use super::*;

fn s(t: &str) -> Option<String> {
    Some(t.to_owned())
}

fn think_plan() -> EndpointPlan {
    EndpointPlan {
        reasoning_tags: Some("think".into()),
        ..Default::default()
    }
}

fn chunk(content: &str) -> String {
    serde_json::json!({"choices":[{"delta":{"content":content}}]}).to_string()
}

#[test]
fn think_tags_split_across_chat_chunks() {
    let dec = Decoder::new(EndpointType::Chat, &think_plan()).unwrap();
    let mut st = dec.stream();
    let mut got = Vec::new();
    for piece in ["<thi", "nk>a b", "</think", ">c", " <"] {
        let d = st.message(None, &chunk(piece)).unwrap();
        got.push((d.content, d.reasoning));
    }
    assert_eq!(
        got,
        vec![
            (s(""), None),
            (s(""), s("a b")),
            (s(""), None),
            (s("c"), None),
            (s(" "), None),
        ]
    );
    let rest = st.finish().unwrap();
    assert_eq!((rest.content, rest.reasoning), (s("<"), None));
    assert_eq!(st.finish(), None);
    // The reasoning field of a chunk is kept and the split text appended to it.
    let mut st = dec.stream();
    let d = st
        .message(
            None,
            r#"{"choices":[{"delta":{"reasoning_content":"r1","content":"<think>r2</think>x"}}]}"#,
        )
        .unwrap();
    assert_eq!((d.content, d.reasoning), (s("x"), s("r1r2")));
}

#[test]
fn think_tags_in_a_whole_body() {
    let dec = Decoder::new(EndpointType::Completions, &think_plan()).unwrap();
    let d = dec
        .body(r#"{"choices":[{"text":"<think>why</think>because"}]}"#)
        .unwrap();
    assert_eq!((d.content, d.reasoning), (s("because"), s("why")));
    // Without the option nothing is split (AIPerf's behaviour).
    let d = Decoder::plain(EndpointType::Completions)
        .body(r#"{"choices":[{"text":"<think>why</think>because"}]}"#)
        .unwrap();
    assert_eq!(d.content, s("<think>why</think>because"));
}

#[test]
fn bad_options_name_the_value() {
    let plan = EndpointPlan {
        reasoning_tags: Some("reason".into()),
        ..Default::default()
    };
    let e = Decoder::new(EndpointType::Chat, &plan).unwrap_err();
    assert!(e.to_string().contains("\"reason\""), "{e}");
    let plan = EndpointPlan {
        response_field: Some("a[".into()),
        ..Default::default()
    };
    assert!(matches!(
        Decoder::new(EndpointType::Raw, &plan),
        Err(DecodeError::BadFieldPath { .. })
    ));
}

#[test]
fn every_endpoint_has_a_decoder() {
    for e in EndpointType::ALL {
        // An error object decodes to an error everywhere, stream or body.
        let err = r#"{"error":{"message":"m"}}"#;
        assert_eq!(decode_response_body(e, err).unwrap().error, s("m"), "{e:?}");
        assert_eq!(
            decode_stream_message(e, None, err).unwrap().error,
            s("m"),
            "{e:?}"
        );
    }
}

#[test]
fn message_into_overwrites_what_the_target_held() {
    let dec = Decoder::new(EndpointType::Chat, &EndpointPlan::default()).unwrap();
    let mut st = dec.stream();
    let mut d = Decoded::default();
    st.message_into(
        None,
        r#"{"choices":[{"delta":{"reasoning_content":"r","content":"a"},"finish_reason":"stop"}],"usage":{"total_tokens":3}}"#,
        &mut d,
    )
    .unwrap();
    assert_eq!(
        (d.reasoning.as_deref(), d.finish_reason.as_deref()),
        (Some("r"), Some("stop"))
    );
    assert!(d.usage.is_some());
    // The next messages into the same target: nothing of the one before is left, also
    // from a usage-only chunk, which sets no choice fields at all.
    st.message_into(None, &chunk("b"), &mut d).unwrap();
    assert_eq!(d, st.message(None, &chunk("b")).unwrap());
    assert_eq!(
        (d.content.as_deref(), d.reasoning.as_deref()),
        (Some("b"), None)
    );
    let usage_only = r#"{"choices":[],"usage":{"total_tokens":3}}"#;
    st.message_into(None, usage_only, &mut d).unwrap();
    assert_eq!(d, st.message(None, usage_only).unwrap());
    assert_eq!(d.content, None);
}
