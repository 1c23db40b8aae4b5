//! Correctness during the run (docs/correctness.md): the question set against the built-in
//! simulated server and `mock-server --answer-key`, the counts predicted from the documented
//! draw, the files rewritten byte for byte offline, the schemas, and the one-line errors.

use crate::common;

use std::path::{Path, PathBuf};

use common::{MockServer, jsonl, read_json, run, stderr, tmpdir};
use serde_json::Value;
use sha2::{Digest, Sha256};

fn questions() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/questions.jsonl")
}

fn question_texts() -> Vec<String> {
    std::fs::read_to_string(questions())
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["text"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// The documented draw, written out here: SHA-256 of "{seed}:{question}", its first 8 bytes
/// big-endian over 2^64, below the accuracy.
fn right(seed: u64, question: &str, accuracy: f64) -> bool {
    let h = Sha256::digest(format!("{seed}:{question}").as_bytes());
    let u = u64::from_be_bytes(h[..8].try_into().unwrap()) as f64 / 2f64.powi(64);
    u < accuracy
}

fn profile(dir: &Path, extra: &[&str]) -> std::process::Output {
    let q = questions();
    let mut args = vec![
        "profile",
        "--input-file",
        q.to_str().unwrap(),
        "--custom-dataset-type",
        "single_turn",
        "--streaming",
        "--ui",
        "none",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    run(&args)
}

fn sim<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["--sim-ttft-ms", "0", "--sim-itl-ms", "0"];
    v.extend_from_slice(extra);
    v
}

fn schema(name: &str) -> jsonschema::Validator {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/schemas")
        .join(name);
    jsonschema::validator_for(&read_json(&p)).unwrap()
}

#[test]
fn every_answer_of_the_question_set_is_right() {
    // Arithmetic and JSON sums recomputed; conversions from their factors; capitals and
    // choices against the facts written here.
    let rows: Vec<Value> = std::fs::read_to_string(questions())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!((40..=60).contains(&rows.len()));
    let capitals = [
        ("France", "Paris"),
        ("Japan", "Tokyo"),
        ("Italy", "Rome"),
        ("Canada", "Ottawa"),
        ("Australia", "Canberra"),
        ("Egypt", "Cairo"),
        ("Kenya", "Nairobi"),
        ("Norway", "Oslo"),
        ("Peru", "Lima"),
        ("Portugal", "Lisbon"),
    ];
    let factors = [
        ("centimetres", "metres", 100.0),
        ("seconds", "hours", 3600.0),
        ("grams", "kilograms", 1000.0),
        ("minutes", "days", 1440.0),
        ("millilitres", "litres", 1000.0),
        ("metres", "kilometres", 1000.0),
        ("inches", "feet", 12.0),
        ("ounces", "pounds", 16.0),
    ];
    let facts = [
        ("largest in the Solar System", "Jupiter"),
        ("photosynthesis", "Carbon dioxide"),
        ("hexagon", "Six"),
        ("prime number", "29"),
        ("symbol of gold", "Au"),
        ("ocean is the largest", "Pacific"),
        ("bits are in a byte", "8"),
        ("boiling point of water", "100"),
    ];
    let calc = |a: f64, op: &str, b: f64| match op {
        "+" => a + b,
        "-" => a - b,
        "*" => a * b,
        "/" => a / b,
        _ => panic!("{op}"),
    };
    let mut checked = 0;
    for r in &rows {
        let text = r["text"].as_str().unwrap();
        let ans = &r["answer"];
        let w: Vec<&str> = text.split_whitespace().collect();
        if let Some(rest) = text.strip_prefix("What is the capital of ") {
            let country = rest.split('?').next().unwrap();
            let (_, city) = capitals.iter().find(|(c, _)| *c == country).unwrap();
            assert_eq!(ans.as_str(), Some(*city), "{text}");
        } else if text.starts_with("What is ") && ans.get("number").is_some() {
            let (a, op, b) = (
                w[2].parse().unwrap(),
                w[3],
                w[4].trim_end_matches('?').parse().unwrap(),
            );
            assert_eq!(ans["number"].as_f64(), Some(calc(a, op, b)), "{text}");
        } else if text.starts_with("How many ") && ans.get("number").is_some() {
            let (small, x, big) = (
                w[2],
                w[5].parse::<f64>().unwrap(),
                w[6].trim_end_matches('?'),
            );
            let (_, _, f) = factors
                .iter()
                .find(|(s, b, _)| *s == small && *b == big)
                .unwrap();
            assert!(
                (ans["number"].as_f64().unwrap() - x * f).abs() < 1e-9,
                "{text}"
            );
        } else if let Some(letter) = ans.get("choice") {
            let (_, fact) = facts.iter().find(|(k, _)| text.contains(k)).unwrap();
            let l = letter.as_str().unwrap();
            assert!(
                text.contains(&format!("{l}) {fact} ")) || text.contains(&format!("{l}) {fact}.")),
                "{text}"
            );
        } else if let Some(s) = ans.get("json_schema") {
            let key = s["required"][0].as_str().unwrap();
            let i = w.iter().position(|x| *x == "holds").unwrap();
            let v = calc(
                w[i + 1].parse().unwrap(),
                w[i + 2],
                w[i + 3].parse().unwrap(),
            );
            assert_eq!(s["properties"][key]["const"].as_f64(), Some(v), "{text}");
            assert_eq!(ans["example"][key].as_f64(), Some(v), "{text}");
        } else if let Some(re) = ans.get("regex") {
            let example = ans["example"].as_str().unwrap();
            let expected = match text {
                t if t.contains("Second World War") => "1945".to_string(),
                t if t.contains("first day of 2024") => "2024-01-01".to_string(),
                t if t.contains("cat backwards") => "cat".chars().rev().collect(),
                t if t.contains("primary colours") => "red".to_string(),
                t if t.contains("10 in binary") => format!("{:b}", 10),
                t => panic!("unchecked question {t}"),
            };
            assert_eq!(example, expected, "{text}");
            assert!(re.is_string());
        } else {
            panic!("unchecked question {text}");
        }
        checked += 1;
    }
    assert_eq!(checked, rows.len());
}

#[test]
fn all_right_at_accuracy_one_and_the_files_validate() {
    let dir = tmpdir("corr-one");
    let o = profile(
        &dir,
        &sim(&["--sim-answer-accuracy", "1.0", "--request-count", "50"]),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let c = read_json(&dir.join("correctness.json"));
    assert_eq!(c["scored"], 50);
    assert_eq!(c["correct"], 50);
    assert_eq!(c["accuracy"], 1.0);
    assert_eq!(c["interval"]["high"], 1.0);
    assert_eq!(c["errors"], 0);
    // Every kind of the set was scored.
    for k in ["exact", "regex", "json_schema", "number", "choice"] {
        assert!(c["by_kind"][k]["scored"].as_u64().unwrap() > 0, "{k}");
    }
    // The digest is the frozen file's, in the manifest and in correctness.json.
    let bytes = std::fs::read(dir.join("expected_answers.jsonl")).unwrap();
    let digest = format!("sha256:{}", hex::encode(Sha256::digest(&bytes)));
    assert_eq!(c["answers"], digest.as_str());
    let m = read_json(&dir.join("inferbench_manifest.json"));
    assert_eq!(m["dataset"]["answers_sha256"], digest.as_str());
    for f in [
        "expected_answers.jsonl",
        "correctness.jsonl",
        "correctness.json",
    ] {
        assert!(
            m["files"].as_array().unwrap().iter().any(|x| x == f),
            "{f} listed"
        );
    }
    let console = std::fs::read_to_string(dir.join("profile_export_console.txt")).unwrap();
    assert!(console.contains("Answer accuracy (%)"), "{console}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("Answer accuracy (%)"));
    // Schemas: correctness.json, each correctness.jsonl line, each expected answer.
    let v = schema("correctness.schema.json");
    assert!(
        v.is_valid(&c),
        "{:?}",
        v.iter_errors(&c).map(|e| e.to_string()).collect::<Vec<_>>()
    );
    let mut bad = c.clone();
    bad["accuracy"] = "high".into();
    assert!(!v.is_valid(&bad));
    let rec = schema("correctness-record.schema.json");
    let lines = jsonl(&dir.join("correctness.jsonl"));
    assert_eq!(lines.len(), 50);
    for l in &lines {
        assert!(rec.is_valid(l), "{l}");
    }
    let mut bad = lines[0].clone();
    bad["outcome"] = "maybe".into();
    assert!(!rec.is_valid(&bad));
    let ans = schema("expected-answer.schema.json");
    for l in jsonl(&dir.join("expected_answers.jsonl")) {
        assert!(ans.is_valid(&l), "{l}");
    }
    // The gate's tally is the same count, from the evidence.
    let t = inferbench_run::correctness::tally(&inferbench_run::RunDir::single(&dir).unwrap())
        .unwrap()
        .unwrap();
    assert_eq!((t.scored, t.correct, t.errors), (50, 50, 0));
    assert_eq!(t.answers_digest, digest);
}

#[test]
fn a_fractional_accuracy_gives_the_predicted_count_and_rewrites_byte_for_byte() {
    let dir = tmpdir("corr-frac");
    let o = profile(
        &dir,
        &sim(&[
            "--sim-answer-accuracy",
            "0.6",
            "--request-count",
            "120",
            "--allow-dataset-wrap",
            "--random-seed",
            "7",
            "--concurrency",
            "4",
        ]),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let texts = question_texts();
    let lines = jsonl(&dir.join("correctness.jsonl"));
    assert_eq!(lines.len(), 120);
    // single_turn: payload i is line i of the file.
    let predicted = lines
        .iter()
        .filter(|l| {
            right(
                7,
                &texts[l["payload_index"].as_u64().unwrap() as usize],
                0.6,
            )
        })
        .count() as u64;
    assert!(predicted > 0 && predicted < 120, "{predicted}");
    let c = read_json(&dir.join("correctness.json"));
    assert_eq!(c["correct"].as_u64(), Some(predicted));
    let wrong = lines.iter().filter(|l| l["outcome"] == "wrong").count() as u64;
    assert_eq!(wrong, 120 - predicted);

    // metrics DIR --write on a copy rewrites the correctness files (and the console) byte
    // for byte.
    let copy = tmpdir("corr-frac-copy");
    crate::common::copy_tree(&dir, &copy);
    std::fs::remove_file(copy.join("correctness.json")).unwrap();
    std::fs::remove_file(copy.join("correctness.jsonl")).unwrap();
    let o = run(&["metrics", copy.to_str().unwrap(), "--write"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in [
        "correctness.json",
        "correctness.jsonl",
        "expected_answers.jsonl",
        "profile_export_console.txt",
        "inferbench_manifest.json",
    ] {
        assert!(
            std::fs::read(dir.join(f)).unwrap() == std::fs::read(copy.join(f)).unwrap(),
            "{f} differs after metrics --write"
        );
    }
}

#[test]
fn mock_server_answers_from_a_key_file() {
    let q = questions();
    let mock = MockServer::start(&[
        "--fast",
        "--answer-key",
        q.to_str().unwrap(),
        "--answer-accuracy",
        "0.5",
        "--random-seed",
        "3",
    ]);
    let dir = tmpdir("corr-mock");
    let o = profile(
        &dir,
        &[
            "--url",
            &mock.url,
            "--model",
            "mock-model",
            "--request-count",
            "50",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let predicted = question_texts().iter().filter(|t| right(3, t, 0.5)).count() as u64;
    assert!(predicted > 0 && predicted < 50);
    let c = read_json(&dir.join("correctness.json"));
    assert_eq!(c["scored"], 50);
    assert_eq!(c["correct"].as_u64(), Some(predicted));
}

fn one_line_exit_2(o: &std::process::Output, needle: &str) {
    assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
    let e = stderr(o);
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(e.contains(needle), "{e}");
}

#[test]
fn bad_answers_and_keys_are_one_line_errors() {
    let dir = tmpdir("corr-bad");
    let bad = dir.join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"text\": \"q1\", \"answer\": \"x\"}\n{\"text\": \"q2\", \"answer\": {\"regex\": \"(\"}}\n",
    )
    .unwrap();
    let b = bad.to_str().unwrap();
    let out = dir.join("run");
    let o = run(&[
        "profile",
        "--input-file",
        b,
        "--custom-dataset-type",
        "single_turn",
        "--ui",
        "none",
        "--artifact-dir",
        out.to_str().unwrap(),
    ]);
    one_line_exit_2(&o, &format!("{b}:2: field 'answer.regex': invalid pattern"));

    // A key row that is not a question with an answer.
    let key = dir.join("key.jsonl");
    std::fs::write(
        &key,
        "{\"text\": \"q1\", \"answer\": \"x\"}\n{\"text\": \"q2\"}\n",
    )
    .unwrap();
    let k = key.to_str().unwrap();
    let o = run(&["mock-server", "--port", "0", "--answer-key", k]);
    one_line_exit_2(&o, &format!("{k}:2: field 'answer': missing"));
    let o = run(&["mock-server", "--port", "0", "--answer-accuracy", "0.5"]);
    one_line_exit_2(&o, "--answer-accuracy needs --answer-key");

    // Asking the built-in server for answers the dataset does not have.
    let o = run(&[
        "profile",
        "--request-count",
        "2",
        "--sim-answer-accuracy",
        "0.9",
        "--ui",
        "none",
        "--artifact-dir",
        out.to_str().unwrap(),
    ]);
    one_line_exit_2(
        &o,
        "--sim-answer-accuracy: the dataset has no expected answers",
    );
    let o = run(&["profile", "--sim-answer-accuracy", "1.5", "--ui", "none"]);
    one_line_exit_2(&o, "--sim-answer-accuracy 1.5: a fraction between 0 and 1");
}

#[test]
fn multi_turn_is_scored_per_turn_and_errors_are_counted_apart() {
    let dir = tmpdir("corr-mt");
    let data = dir.join("mt.jsonl");
    std::fs::write(
        &data,
        concat!(
            "{\"session_id\": \"a\", \"turns\": [{\"text\": \"What is 2 + 2?\", \"answer\": {\"number\": 4}}, {\"text\": \"Say hello.\"}, {\"text\": \"Capital of Peru?\", \"answer\": \"Lima\"}]}\n",
            "{\"session_id\": \"b\", \"turns\": [{\"text\": \"Pick A or B: B\", \"answer\": {\"choice\": \"B\"}}]}\n",
        ),
    )
    .unwrap();
    let out = dir.join("run");
    let o = run(&[
        "profile",
        "--input-file",
        data.to_str().unwrap(),
        "--custom-dataset-type",
        "multi_turn",
        "--sim-answer-accuracy",
        "1",
        "--sim-ttft-ms",
        "0",
        "--sim-itl-ms",
        "0",
        "--ui",
        "none",
        "--artifact-dir",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let c = read_json(&out.join("correctness.json"));
    // Four turns, three with answers, all right; the unanswered turn is counted as such.
    assert_eq!(
        (c["scored"].as_u64(), c["correct"].as_u64()),
        (Some(3), Some(3))
    );
    assert_eq!(c["unanswered"], 1);
    let turns: Vec<u64> = jsonl(&out.join("correctness.jsonl"))
        .iter()
        .filter(|l| l["conversation_id"] == "a")
        .map(|l| l["turn_index"].as_u64().unwrap())
        .collect();
    assert_eq!(turns, vec![0, 2]);

    // Injected server errors are not scored: they are counted apart.
    let out = dir.join("errors");
    let o = profile(
        &out,
        &sim(&[
            "--sim-answer-accuracy",
            "1",
            "--sim-error-rate",
            "20",
            "--request-count",
            "50",
        ]),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let c = read_json(&out.join("correctness.json"));
    let errors = c["errors"].as_u64().unwrap();
    assert!(errors > 0 && errors < 50, "{errors}");
    assert_eq!(c["scored"].as_u64(), Some(50 - errors));
    assert_eq!(c["correct"], c["scored"]);
}

#[test]
fn repeated_runs_score_each_run_and_keep_the_aggregate_aiperfs() {
    let dir = tmpdir("corr-rep");
    let o = profile(
        &dir,
        &sim(&[
            "--sim-answer-accuracy",
            "1",
            "--request-count",
            "10",
            "--num-profile-runs",
            "2",
        ]),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let mut runs = 0;
    for e in std::fs::read_dir(dir.join("profile_runs")).unwrap() {
        let p = e.unwrap().path();
        if p.join("correctness.json").is_file() {
            assert_eq!(read_json(&p.join("correctness.json"))["correct"], 10);
            runs += 1;
        }
    }
    assert_eq!(runs, 2);
    let agg = std::fs::read_to_string(dir.join("aggregate/profile_export_aiperf_aggregate.json"))
        .unwrap();
    assert!(!agg.contains("answer_accuracy"), "{agg}");
}
