//! Images, audio and video through the binary against the built-in simulated server: the
//! bodies of every media endpoint type (checked field by field against files whose base64
//! was worked out beforehand), the media evidence on each record, AIPerf's media metrics in
//! the summary, and one-line errors for bad media and bad flags.

use std::path::Path;

use serde_json::{Value, json};

use crate::common;

use common::*;

/// A 1×1 RGB PNG (grey 0x808080), and its base64.
const PNG: [u8; 69] = [
    137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0,
    0, 0, 144, 119, 83, 222, 0, 0, 0, 12, 73, 68, 65, 84, 120, 156, 99, 104, 104, 104, 0, 0, 3, 4,
    1, 129, 75, 211, 210, 16, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
];
const PNG_B64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGNoaGgAAAMEAYFL09IQAAAAAElFTkSuQmCC";
/// A WAV of four 16-bit mono samples at 8 kHz (8 data bytes at 16,000 bytes/s: 0.0005 s).
const WAV: [u8; 52] = [
    82, 73, 70, 70, 44, 0, 0, 0, 87, 65, 86, 69, 102, 109, 116, 32, 16, 0, 0, 0, 1, 0, 1, 0, 64,
    31, 0, 0, 128, 62, 0, 0, 2, 0, 16, 0, 100, 97, 116, 97, 8, 0, 0, 0, 0, 0, 232, 3, 24, 252, 0,
    0,
];
const WAV_B64: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQgAAAAAAOgDGPwAAA==";

fn profile(dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "profile",
        "--request-count",
        "3",
        "--isl",
        "8",
        "--random-seed",
        "3",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "1",
        "--sim-itl-ms",
        "0.5",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    run(&args)
}

fn first_body(dir: &Path) -> Value {
    read_json(&dir.join("inputs.json"))["data"][0]["payloads"][0].clone()
}

fn summary(dir: &Path) -> Value {
    read_json(&dir.join("profile_export_aiperf.json"))
}

/// Writes the media files and a dataset naming them; returns the dataset's path.
fn dataset(dir: &Path, rows: &str) -> String {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("px.png"), PNG).unwrap();
    std::fs::write(dir.join("tone.wav"), WAV).unwrap();
    std::fs::write(dir.join("clip.webm"), [0x1A, 0x45, 0xDF, 0xA3]).unwrap();
    let rows = rows.replace("DIR", dir.to_str().unwrap());
    let p = dir.join("rows.jsonl");
    std::fs::write(&p, rows).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn single_turn_media_files_become_chat_parts_and_evidence() {
    let d = tmpdir("media-files");
    let input = dataset(
        &d.join("in"),
        r#"{"text":"what is this","image":"DIR/px.png","audio":"DIR/tone.wav","video":"DIR/clip.webm"}
{"text":"and these","images":["https://img.test/a.png","DIR/px.png"],"image_uuids":["u1","u2"]}
"#,
    );
    let out = d.join("out");
    // Three requests from two rows: the third starts the file again.
    let o = profile(
        &out,
        &[
            "--input-file",
            &input,
            "--custom-dataset-type",
            "single_turn",
            "--allow-dataset-wrap",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let bodies = read_json(&out.join("inputs.json"))["data"].clone();
    let first = &bodies[0]["payloads"][0];
    assert_eq!(
        first["messages"],
        json!([{"role": "user", "content": [
            {"type": "text", "text": "what is this"},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG_B64}")}},
            {"type": "input_audio", "input_audio": {"data": WAV_B64, "format": "wav"}},
            {"type": "video_url", "video_url": {"url": "data:video/webm;base64,GkXfow=="}},
        ]}])
    );
    let second = &bodies[1]["payloads"][0];
    assert_eq!(
        second["messages"][0]["content"],
        json!([
            {"type": "text", "text": "and these"},
            {"type": "image_url", "image_url": {"url": "https://img.test/a.png"}, "uuid": "u1"},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG_B64}")}, "uuid": "u2"},
        ])
    );
    // The evidence keeps counts and sizes: 69 PNG bytes, 52 WAV bytes, 4 video bytes; the
    // WAV's length from its header (8 data bytes at 16,000 bytes/s).
    let recs = evidence_records(&out);
    assert_eq!(recs.len(), 3);
    for r in &recs {
        assert!(r.get("error").is_none(), "{r}");
        let want = if r["conversation_id"] == bodies[0]["session_id"] {
            json!({"images": 1, "audios": 1, "videos": 1, "bytes": 69 + 52 + 4, "audio_seconds": 0.0005})
        } else {
            json!({"images": 2, "bytes": 69})
        };
        assert_eq!(r["media"], want, "{r}");
        // No base64 in the evidence.
        assert!(!r.to_string().contains(PNG_B64));
    }
    let s = summary(&out);
    assert_eq!(s["num_images"]["max"], 2.0);
    assert_eq!(s["num_images"]["min"], 1.0);
    assert_eq!(s["audio_duration"]["max"], 0.0005);
    assert!(s["image_latency"]["avg"].as_f64().unwrap() > 0.0);
    assert!(s["rtfx"]["avg"].as_f64().unwrap() > 0.0);
    // image_latency = request_latency / images, record by record.
    for line in jsonl(&out.join("profile_export.jsonl")) {
        let m = &line["metrics"];
        let lat = m["request_latency"]["value"].as_f64().unwrap();
        let n = m["num_images"]["value"].as_f64().unwrap();
        let il = m["image_latency"]["value"].as_f64().unwrap();
        assert!((il - lat / n).abs() < 1e-9 * lat, "{m}");
        assert_eq!(m["num_images"]["unit"], "images");
    }
}

#[test]
fn bad_media_is_one_line_naming_file_line_and_field() {
    let d = tmpdir("media-bad");
    let cases = [
        (
            r#"{"text":"a"}
{"text":"b","image":"DIR/missing.png"}"#,
            ":2: field 'image': ",
            "missing.png: no such image file",
        ),
        (
            r#"{"text":"b","images":["DIR/tone.wav"]}"#,
            ":1: field 'images[0]': ",
            "not a PNG or JPEG image",
        ),
        (
            r#"{"text":"b","audio":"DIR/px.png"}"#,
            ":1: field 'audio': ",
            "'.png' is not a supported audio format (wav, mp3)",
        ),
        (
            r#"{"text":"b","images":["DIR/px.png"],"image_uuids":["a","b"]}"#,
            ":1: field 'image_uuids': ",
            "image_uuids has 2 entries but images has 1",
        ),
        (
            r#"{"text":"b","audio":"https://h/a.wav"}"#,
            ":1: field 'audio': ",
            "audio is sent inline",
        ),
    ];
    for (i, (rows, at, what)) in cases.iter().enumerate() {
        let input = dataset(&d.join(format!("in{i}")), rows);
        let o = profile(&d.join(format!("out{i}")), &["--input-file", &input]);
        assert_eq!(o.status.code(), Some(2), "{rows}: {}", stderr(&o));
        let e = stderr(&o);
        let line = e
            .lines()
            .find(|l| l.contains("rows.jsonl"))
            .unwrap_or_else(|| panic!("{rows}: {e}"));
        assert!(line.contains(&format!("rows.jsonl{at}")), "{line}");
        assert!(line.contains(what), "{line}");
    }
    // A text-only endpoint refuses media rather than dropping it.
    let input = dataset(&d.join("cmpl"), r#"{"text":"b","image":"DIR/px.png"}"#);
    let o = profile(
        &d.join("cmpl-out"),
        &["--input-file", &input, "--endpoint-type", "completions"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("rows.jsonl:1: the completions endpoint sends no images"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bad_media_flags_are_refused_by_name() {
    let d = tmpdir("media-flags");
    let cases: [(&[&str], &str); 7] = [
        (
            &["--audio-length-mean", "1", "--audio-depths", "12"],
            "--audio-depths 12: must be 8, 16, 24 or 32",
        ),
        (
            &["--audio-length-mean", "1", "--audio-format", "mp3"],
            "--audio-format mp3: not built",
        ),
        (
            &["--audio-length-mean", "0.001"],
            "--audio-length-mean 0.001: must be at least 0.01 seconds",
        ),
        (
            &["--video-fps", "4"],
            "--video-fps: synthetic video is not built (AIPerf encodes it with ffmpeg",
        ),
        (
            &["--image-source", "assets"],
            "--image-source assets: only noise is built",
        ),
        (
            &["--image-width-mean=-3"],
            "--image-width-mean -3: must be a number ≥ 0",
        ),
        (
            &["--endpoint-type", "image_edit"],
            "--endpoint-type image_edit: not built",
        ),
    ];
    for (i, (flags, want)) in cases.iter().enumerate() {
        let o = profile(&d.join(format!("o{i}")), flags);
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{flags:?}: {}", stderr(&o));
    }
    // Synthetic media flags with a dataset file are refused (the file's rows carry media).
    let input = dataset(&d.join("in"), r#"{"text":"x"}"#);
    let o = profile(
        &d.join("o-file"),
        &[
            "--input-file",
            &input,
            "--image-width-mean",
            "4",
            "--image-height-mean",
            "4",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("applies to synthetic turns only"),
        "{}",
        stderr(&o)
    );
}

/// Every media endpoint type runs end to end against the simulated server, with AIPerf's
/// body and the metrics that apply to it.
#[test]
fn every_media_endpoint_type_runs_against_the_simulated_server() {
    let d = tmpdir("media-endpoints");
    let img = ["--image-width-mean", "3", "--image-height-mean", "2"];
    let cases: Vec<(&str, Vec<&str>, &[&str])> = vec![
        (
            "chat",
            [
                &img[..],
                &["--audio-length-mean", "0.05", "--image-format", "jpeg"],
            ]
            .concat(),
            &[
                "num_images",
                "image_throughput",
                "image_latency",
                "audio_duration",
                "rtfx",
                "time_to_first_token",
            ],
        ),
        (
            "chat_embeddings",
            img.to_vec(),
            &["num_images", "image_latency", "input_sequence_length"],
        ),
        ("nim_embeddings", img.to_vec(), &["input_sequence_length"]),
        (
            "image_retrieval",
            [&img[..], &["--image-batch-size", "2"]].concat(),
            &["num_images", "image_throughput"],
        ),
        (
            "audio_transcription",
            vec!["--audio-length-mean", "0.1"],
            &["audio_duration", "rtfx"],
        ),
        ("image_generation", vec![], &["input_sequence_length"]),
        (
            "image_generation",
            vec!["--no-streaming"],
            &["request_latency"],
        ),
    ];
    for (i, (endpoint, flags, metrics)) in cases.iter().enumerate() {
        let out = d.join(format!("{endpoint}-{i}"));
        let mut args = vec!["--endpoint-type", endpoint];
        args.extend(flags.iter().copied());
        let o = profile(&out, &args);
        assert!(o.status.success(), "{endpoint}: {}", stderr(&o));
        let recs = evidence_records(&out);
        assert_eq!(recs.len(), 3, "{endpoint}");
        for r in &recs {
            assert!(r.get("error").is_none(), "{endpoint}: {r}");
        }
        let s = summary(&out);
        for m in *metrics {
            assert!(s.get(*m).is_some(), "{endpoint}: no {m}");
        }
        let body = first_body(&out);
        match *endpoint {
            "chat" => {
                let parts = body["messages"][0]["content"].as_array().unwrap();
                assert_eq!(parts[0]["type"], "text");
                assert!(
                    parts[1]["image_url"]["url"]
                        .as_str()
                        .unwrap()
                        .starts_with("data:image/jpeg;base64,/9j/")
                );
                assert_eq!(parts[2]["input_audio"]["format"], "wav");
                assert_eq!(recs[0]["media"]["images"], 1);
                assert_eq!(recs[0]["media"]["audio_seconds"], 0.05);
            }
            "chat_embeddings" => {
                assert_eq!(body["stream"], false);
                assert_eq!(body["messages"][0]["content"][1]["type"], "image_url");
                assert!(s.get("time_to_first_token").is_none());
            }
            "nim_embeddings" => {
                // Text i and image i as one input string.
                let input = body["input"][0].as_str().unwrap();
                let (text, image) = input.split_once(" data:image/png;base64,").unwrap();
                assert!(!text.is_empty() && !image.is_empty());
                assert!(
                    s.get("num_images").is_none(),
                    "AIPerf counts no image parts here"
                );
            }
            "image_retrieval" => {
                let input = body["input"].as_array().unwrap();
                assert_eq!(input.len(), 2);
                assert_eq!(input[0]["type"], "image_url");
                assert!(body.get("model").is_none());
                assert_eq!(s["num_images"]["avg"], 2.0);
                assert!(
                    recs[0]["tokens"].get("input").is_none(),
                    "no ISL: media only"
                );
            }
            "audio_transcription" => {
                let file = &body["file"];
                assert_eq!(file["filename"], "audio.wav");
                assert_eq!(file["content_type"], "audio/wav");
                assert!(file["b64_data"].as_str().unwrap().starts_with("UklGR"));
                assert_eq!(body["model"], "mock-model");
                // 0.1 s at 16 kHz, 16-bit mono: 1,600 frames, 3,200 data bytes + 44.
                assert_eq!(
                    recs[0]["media"],
                    json!({"audios": 1, "bytes": 3244, "audio_seconds": 0.1})
                );
                // The multipart body went out: the WAV, the form's boundaries and fields.
                assert!(recs[0]["request_bytes"].as_u64().unwrap() > 3244);
                let text: String = recs[0]["events"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|e| e["content"].as_str())
                    .collect();
                assert!(!text.is_empty(), "the transcript is kept");
                assert_eq!(s["audio_duration"]["max"], 0.1);
            }
            _ => {
                assert_eq!(body["response_format"], "b64_json");
                assert_eq!(body["n"], 1);
                let streaming = !flags.contains(&"--no-streaming");
                assert_eq!(body.get("stream").is_some(), streaming, "{body}");
            }
        }
    }
}

/// A later turn resends the conversation so far: its body carries the earlier turns' images
/// too, and the record counts them (AIPerf counts the parts of the body sent).
#[test]
fn multi_turn_history_counts_the_images_it_resends() {
    let d = tmpdir("media-history");
    let input = dataset(
        &d.join("in"),
        r#"{"session_id":"a","turns":[{"text":"one","image":"DIR/px.png"},{"text":"two","images":["DIR/px.png","https://x.test/y.png"]}]}"#,
    );
    let out = d.join("out");
    let o = profile(&out, &["--input-file", &input, "--allow-dataset-wrap"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = evidence_records(&out);
    let turn = |i: u64| recs.iter().find(|r| r["turn_index"] == i).unwrap();
    assert_eq!(turn(0)["media"], json!({"images": 1, "bytes": 69}));
    // Turn 0's image again, then its own two (the URL inlines no bytes).
    assert_eq!(turn(1)["media"], json!({"images": 3, "bytes": 138}));
}
