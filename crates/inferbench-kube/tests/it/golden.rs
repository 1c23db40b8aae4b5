//! The rendered manifests against the committed golden files (which `.ci/kube.sh` validates
//! with `kubernetes-validate --strict`). `UPDATE_GOLDEN=1` rewrites them; review the diff.

use inferbench_kube::{
    ConfigFile, RenderSpec, parse_header_secret, parse_secret_ref, parse_toleration, render, yaml,
};

fn spec() -> RenderSpec {
    RenderSpec {
        name: "bench".into(),
        namespace: "load".into(),
        shard_count: 4,
        image: "registry.example/inferbench:0.1.0".into(),
        results_pvc: "inferbench-results".into(),
        cpu: "4".into(),
        memory: "8Gi".into(),
        node_selector: vec![("pool".into(), "loadgen".into())],
        tolerations: vec![parse_toleration("dedicated=bench:NoSchedule").unwrap()],
        active_deadline_seconds: 3600,
        ttl_seconds_after_finished: 86_400,
        files: vec![ConfigFile {
            name: "trace.jsonl".into(),
            content: "{\"timestamp\": 0, \"input_length\": 64, \"output_length\": 16}\n".into(),
        }],
        start_at: Some("2026-01-01T00:00:00Z".into()),
        profile: [
            "profile",
            "--url",
            "http://vllm.load.svc:8000",
            "-m",
            "model",
            "--input-file",
            "/inferbench/inputs/trace.jsonl",
            "--custom-dataset-type",
            "mooncake_trace",
        ]
        .map(String::from)
        .to_vec(),
        api_key_secret: None,
        header_secrets: vec![],
    }
}

fn check(name: &str, got: &str) {
    let path = format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, got).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(got, want, "{path} differs (UPDATE_GOLDEN=1 rewrites it)");
}

#[test]
fn the_manifests_match_their_golden_files() {
    let docs = render(&spec()).unwrap();
    check("sharded-run.yaml", &yaml::documents(&docs));
    let mut plain = spec();
    plain.files.clear();
    plain.start_at = None;
    plain.node_selector.clear();
    plain.tolerations.clear();
    plain.profile = [
        "profile",
        "--url",
        "http://vllm:8000",
        "-m",
        "model",
        "--concurrency",
        "64",
        "--request-count",
        "10000",
    ]
    .map(String::from)
    .to_vec();
    check(
        "concurrency-run.yaml",
        &yaml::documents(&render(&plain).unwrap()),
    );
}

/// A run whose key and a secret header come from Secrets: only their names are rendered.
fn secret_spec() -> RenderSpec {
    let mut s = spec();
    s.files.clear();
    s.api_key_secret = Some(parse_secret_ref("--api-key-secret", "llm-creds/api-key").unwrap());
    s.header_secrets =
        vec![parse_header_secret("X-Session-Token=llm-creds/session.token").unwrap()];
    s.profile.truncate(5);
    s
}

#[test]
fn secrets_are_env_references_never_values() {
    let docs = render(&secret_spec()).unwrap();
    check("secret-run.yaml", &yaml::documents(&docs));
    let pod = &docs[1]["spec"]["template"]["spec"]["containers"][0];
    let env = pod["env"].as_array().unwrap();
    assert_eq!(env[1]["name"], "INFERBENCH_API_KEY");
    assert_eq!(
        env[1]["valueFrom"]["secretKeyRef"],
        serde_json::json!({"name": "llm-creds", "key": "api-key"})
    );
    assert_eq!(env[2]["name"], "INFERBENCH_HEADER_0");
    assert_eq!(env[2]["valueFrom"]["secretKeyRef"]["key"], "session.token");
    let args: Vec<&str> = pod["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    // Kubernetes expands `$(VAR)` in args from the container's env.
    let at = args.iter().position(|a| *a == "--header").unwrap();
    assert_eq!(args[at + 1], "X-Session-Token:$(INFERBENCH_HEADER_0)");
    assert!(parse_secret_ref("--api-key-secret", "creds").is_err());
    assert!(parse_secret_ref("--api-key-secret", "Creds/k").is_err());
    assert!(parse_secret_ref("--api-key-secret", "creds/a b").is_err());
    assert!(parse_header_secret("X Bad=creds/k").is_err());
    let mut s = spec();
    s.profile.push("--api-key=sk-x".into());
    assert!(
        render(&s)
            .unwrap_err()
            .contains("--api-key-secret NAME/KEY")
    );
}

#[test]
fn the_job_holds_the_fields_the_run_depends_on() {
    let docs = render(&spec()).unwrap();
    assert_eq!(docs.len(), 3);
    let (svc, cm, job) = (&docs[0], &docs[1], &docs[2]);
    assert_eq!(svc["spec"]["clusterIP"], "None");
    assert_eq!(cm["data"]["trace.jsonl"].as_str().unwrap().len(), 58);
    let s = &job["spec"];
    assert_eq!(s["completionMode"], "Indexed");
    assert_eq!(
        (s["completions"].as_i64(), s["parallelism"].as_i64()),
        (Some(4), Some(4))
    );
    assert_eq!(s["backoffLimitPerIndex"], 0);
    assert_eq!(s["maxFailedIndexes"], 0);
    let rules = &s["podFailurePolicy"]["rules"];
    assert_eq!(rules[0]["action"], "FailIndex");
    assert_eq!(rules[0]["onExitCodes"]["values"][0], 6);
    assert_eq!(rules[1]["action"], "Ignore");
    assert_eq!(rules[1]["onPodConditions"][0]["type"], "DisruptionTarget");
    let pod = &s["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never");
    assert_eq!(pod["subdomain"], svc["metadata"]["name"]);
    assert_eq!(pod["tolerations"][0]["operator"], "Equal");
    let args: Vec<&str> = pod["containers"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let tail = &args[args.len() - 8..];
    assert_eq!(
        tail,
        [
            "--shard-count",
            "4",
            "--artifact-dir",
            "/results/bench/shard-$(SHARD_INDEX)",
            "--time-reference",
            "bench-0.bench.load.svc.cluster.local:9123",
            "--start-at",
            "2026-01-01T00:00:00Z"
        ]
    );
}

#[test]
fn bad_specs_are_refused_by_name() {
    let mut s = spec();
    s.profile.push("--shard-count".into());
    assert!(
        render(&s)
            .unwrap_err()
            .contains("--shard-count is set per pod")
    );
    let mut s = spec();
    s.name = "Bench".into();
    assert!(render(&s).unwrap_err().contains("--name \"Bench\""));
    let mut s = spec();
    s.profile[0] = "metrics".into();
    assert!(render(&s).unwrap_err().contains("after --: `profile`"));
    let mut s = spec();
    s.files[0].content = "x".repeat(1024 * 1024 + 1);
    assert!(render(&s).unwrap_err().contains("over a ConfigMap's 1 MiB"));
    assert!(parse_toleration("k:Sometimes").is_err());
    assert_eq!(parse_toleration("k:NoExecute").unwrap().operator, "Exists");
}
