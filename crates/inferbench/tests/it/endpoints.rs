//! Every endpoint type through the binary against the built-in simulated server: each
//! request ends as a successful record, token endpoints carry text (and reasoning when the
//! server sends it), non-token endpoints carry none and still count; `--reasoning-tags think`
//! splits `<think>` text sent inside content.

use crate::common;

use common::*;

fn profile(dir: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "profile",
        "--request-count",
        "4",
        "--concurrency",
        "2",
        "--isl",
        "12",
        "--osl",
        "5",
        "--random-seed",
        "5",
        "--ui",
        "none",
        "--artifact-dir",
        dir,
    ];
    if !extra.contains(&"--url") {
        args.extend(["--sim-ttft-ms", "1", "--sim-itl-ms", "0.5"]);
    }
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn every_endpoint_type_runs_against_the_simulated_server() {
    let token_endpoints = [
        "chat",
        "completions",
        "responses",
        "messages",
        "huggingface_generate",
    ];
    let vector_endpoints = [
        "embeddings",
        "nim_embeddings",
        "nim_rankings",
        "hf_tei_rankings",
        "cohere_rankings",
    ];
    for (endpoint, streaming) in token_endpoints
        .iter()
        .flat_map(|e| [(*e, true), (*e, false)])
        .chain(vector_endpoints.iter().map(|e| (*e, false)))
    {
        let d = tmpdir(&format!("ep-{endpoint}-{streaming}"));
        let mut extra = vec!["--endpoint-type", endpoint];
        if streaming {
            extra.push("--streaming");
        } else if !vector_endpoints.contains(&endpoint) {
            // The simulated server streams by default: ask for the non-streaming path.
            extra.push("--no-streaming");
        }
        let o = profile(d.to_str().unwrap(), &extra);
        assert!(o.status.success(), "{endpoint} {streaming}: {}", stderr(&o));
        let recs = evidence_records(&d);
        assert_eq!(recs.len(), 4, "{endpoint}: one record per request");
        for r in &recs {
            assert!(r.get("error").is_none(), "{endpoint}: {r}");
            let text: String = r["events"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|e| e["content"].as_str())
                .collect();
            if vector_endpoints.contains(&endpoint) {
                assert!(text.is_empty(), "{endpoint}: no text expected");
            } else {
                assert!(
                    !text.is_empty(),
                    "{endpoint} {streaming}: text expected: {r}"
                );
                // The simulated server sends exactly the requested number of tokens.
                assert_eq!(r["tokens"]["output"], 5, "{endpoint} {streaming}");
            }
        }
        let s = read_json(&d.join("profile_export_aiperf.json"));
        assert_eq!(s["request_count"]["avg"], 4.0, "{endpoint} {streaming}");
        if vector_endpoints.contains(&endpoint) {
            assert!(s.get("output_sequence_length").is_none(), "{endpoint}");
        }
        if streaming {
            assert!(s.get("time_to_first_token").is_some(), "{endpoint}");
        } else {
            assert!(s.get("time_to_first_token").is_none(), "{endpoint}");
        }
    }
}

#[test]
fn reasoning_tags_split_think_text_sent_in_content() {
    let mock = MockServer::start(&[
        "--fast",
        "--reasoning-tokens",
        "3",
        "--reasoning-field",
        "think",
    ]);
    for split in [true, false] {
        let d = tmpdir(&format!("think-{split}"));
        let mut extra = vec!["--url", &mock.url, "-m", "mock-model", "--streaming"];
        if split {
            extra.extend(["--reasoning-tags", "think"]);
        }
        let o = profile(d.to_str().unwrap(), &extra);
        assert!(o.status.success(), "{}", stderr(&o));
        for r in evidence_records(&d) {
            let events = r["events"].as_array().unwrap();
            let content: String = events
                .iter()
                .filter_map(|e| e["content"].as_str())
                .collect();
            let reasoning: String = events
                .iter()
                .filter_map(|e| e["reasoning"].as_str())
                .collect();
            if split {
                assert!(!content.contains("<think>"), "{content}");
                assert!(!reasoning.is_empty(), "{r}");
                assert_eq!(r["tokens"]["reasoning"], 3, "{r}");
            } else {
                assert!(content.contains("<think>") && content.contains("</think>"));
                assert!(reasoning.is_empty());
            }
        }
    }
}

#[test]
fn unbuilt_endpoint_types_and_bad_options_are_refused_by_name() {
    let d = tmpdir("ep-bad");
    let o = profile(d.to_str().unwrap(), &["--endpoint-type", "image_edit"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("image_edit"), "{}", stderr(&o));
    let o = profile(d.to_str().unwrap(), &["--endpoint-type", "template"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("payload_template"), "{}", stderr(&o));
    let o = profile(
        d.to_str().unwrap(),
        &[
            "--endpoint-type",
            "raw",
            "--extra-inputs",
            "response_field:a[*].b",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("response_field"), "{}", stderr(&o));
}
