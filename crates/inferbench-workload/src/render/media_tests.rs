//! The media bodies, field by field (AIPerf 0.13's shapes, docs/endpoints.md).

use super::tests::plan;
use super::*;

fn turn(texts: &[&str]) -> TurnInput {
    TurnInput {
        texts: texts.iter().map(|t| t.to_string()).collect(),
        ..Default::default()
    }
}

fn m(c: &str) -> MediaRef {
    MediaRef::new(c)
}

fn body(endpoint: EndpointType, t: &TurnInput) -> Value {
    let mut p = plan(endpoint);
    p.extra_inputs.clear();
    p.streaming = endpoint.supports_streaming();
    Value::Object(build_turn_body(&p, "m", t).unwrap())
}

fn err(endpoint: EndpointType, t: &TurnInput) -> String {
    let mut p = plan(endpoint);
    p.extra_inputs.clear();
    build_turn_body(&p, "m", t).unwrap_err().to_string()
}

#[test]
fn chat_parts_follow_the_texts_in_aiperf_order() {
    let mut t = turn(&["look", ""]);
    t.images = vec![m("data:image/png;base64,AAAA"), m("")];
    t.audios = vec![m("wav,UklG"), m("data:audio/mp3;base64,SUQz")];
    t.videos = vec![m("https://v.test/a.mp4")];
    let b = body(EndpointType::Chat, &t);
    assert_eq!(
        b["messages"],
        json!([{"role": "user", "content": [
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            {"type": "input_audio", "input_audio": {"data": "UklG", "format": "wav"}},
            {"type": "input_audio", "input_audio": {"data": "SUQz", "format": "mp3"}},
            {"type": "video_url", "video_url": {"url": "https://v.test/a.mp4"}},
        ]}])
    );
    // One text alone is a plain string; with one image it becomes parts.
    assert_eq!(
        body(EndpointType::Chat, &turn(&["x"]))["messages"][0]["content"],
        "x"
    );
    let mut one = turn(&["x"]);
    one.images = vec![m("u://h")];
    one.images[0].uuid = Some("id-1".into());
    assert_eq!(
        body(EndpointType::Chat, &one)["messages"][0]["content"][1],
        json!({"type": "image_url", "image_url": {"url": "u://h"}, "uuid": "id-1"})
    );
    // Media alone: parts without a text.
    let mut only = turn(&[]);
    only.images = vec![m("u://h")];
    assert_eq!(
        body(EndpointType::ChatEmbeddings, &only)["messages"][0]["content"],
        json!([{"type": "image_url", "image_url": {"url": "u://h"}}])
    );
}

#[test]
fn responses_and_messages_image_shapes() {
    let mut t = turn(&["q"]);
    t.images = vec![m("data:image/jpeg;base64,/9j/")];
    let r = body(EndpointType::Responses, &t);
    assert_eq!(
        r["input"][0]["content"][1],
        json!({"type": "input_image", "image_url": "data:image/jpeg;base64,/9j/"})
    );
    let a = body(EndpointType::Messages, &t);
    assert_eq!(
        a["messages"][0]["content"][1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/"}})
    );
    t.images = vec![m("https://i.test/x.png")];
    assert_eq!(
        body(EndpointType::Messages, &t)["messages"][0]["content"][1],
        json!({"type": "image", "source": {"type": "url", "url": "https://i.test/x.png"}})
    );
    let mut v = turn(&["q"]);
    v.videos = vec![m("https://v")];
    assert!(err(EndpointType::Responses, &v).contains("the responses endpoint sends no videos"));
    let mut a = turn(&["q"]);
    a.audios = vec![m("wav,AA")];
    assert!(err(EndpointType::Messages, &a).contains("the messages endpoint sends no audios"));
    assert!(
        err(EndpointType::Completions, &t).contains("the completions endpoint sends no images")
    );
}

#[test]
fn nim_embeddings_pairs_text_and_image() {
    let mut t = turn(&["a cat", "a dog"]);
    t.images = vec![m("data:image/png;base64,A"), m("data:image/png;base64,B")];
    assert_eq!(
        body(EndpointType::NimEmbeddings, &t)["input"],
        json!([
            "a cat data:image/png;base64,A",
            "a dog data:image/png;base64,B"
        ])
    );
    let mut only = turn(&[]);
    only.images = vec![m("data:image/png;base64,A")];
    assert_eq!(
        body(EndpointType::NimEmbeddings, &only)["input"],
        json!(["data:image/png;base64,A"])
    );
    t.images.pop();
    assert!(err(EndpointType::NimEmbeddings, &t).contains("got 2 texts and 1 images"));
}

#[test]
fn image_retrieval_audio_transcription_and_image_generation_bodies() {
    let mut t = turn(&["ignored text"]);
    t.images = vec![m("data:image/png;base64,A"), m("https://i.test/b.png")];
    assert_eq!(
        body(EndpointType::ImageRetrieval, &t),
        json!({"input": [
            {"type": "image_url", "url": "data:image/png;base64,A"},
            {"type": "image_url", "url": "https://i.test/b.png"},
        ]})
    );
    assert!(err(EndpointType::ImageRetrieval, &turn(&["x"])).contains("needs at least one image"));

    let mut a = turn(&[]);
    a.audios = vec![m("mp3,SUQz"), m("wav,UklG")];
    assert_eq!(
        body(EndpointType::AudioTranscription, &a),
        json!({"file": {"b64_data": "SUQz", "filename": "audio.mp3", "content_type": "audio/mpeg"}, "model": "m"})
    );
    assert!(err(EndpointType::AudioTranscription, &turn(&["x"])).contains("needs an audio clip"));
    let mut p = plan(EndpointType::AudioTranscription);
    p.extra_inputs.clear();
    p.extra_inputs.insert("file".into(), Value::from("x"));
    assert!(
        build_turn_body(&p, "m", &a)
            .unwrap_err()
            .to_string()
            .contains("--extra-inputs file")
    );

    let g = body(EndpointType::ImageGeneration, &turn(&["a red fox"]));
    assert_eq!(
        g,
        json!({"prompt": "a red fox", "model": "m", "response_format": "b64_json", "n": 1, "stream": true})
    );
    let mut p = plan(EndpointType::ImageGeneration);
    p.streaming = false;
    p.extra_inputs.clear();
    p.extra_inputs.insert("size".into(), Value::from("256x256"));
    let g = Value::Object(build_turn_body(&p, "m", &turn(&["fox"])).unwrap());
    assert_eq!(
        g,
        json!({"prompt": "fox", "model": "m", "response_format": "b64_json", "n": 1, "size": "256x256"})
    );
}

#[test]
fn template_sees_the_media() {
    let mut p = plan(EndpointType::Template);
    p.extra_inputs.clear();
    p.endpoint.template = Some(r#"{"img": {{ image|tojson }}, "n": {{ images|length }}}"#.into());
    let mut t = turn(&["x"]);
    t.images = vec![m("u://1"), m("u://2")];
    assert_eq!(
        Value::Object(build_turn_body(&p, "m", &t).unwrap()),
        json!({"img": "u://1", "n": 2})
    );
}
