use super::values::{redacted_command_line, split_url_credentials};
use super::*;
use clap::FromArgMatches;
use inferbench_core::plan::{ExportLevel, RunPlan, UiKind};

pub(crate) fn parse(args: &[&str]) -> Result<RunPlan, String> {
    let argv: Vec<String> = std::iter::once("inferbench")
        .chain(args.iter().copied())
        .map(String::from)
        .collect();
    let m = command_with_unbuilt()
        .try_get_matches_from(&argv)
        .map_err(|e| e.to_string())?;
    check_unbuilt(&m)?;
    let cli = Cli::from_arg_matches(&m).map_err(|e| e.to_string())?;
    match cli.command {
        Command::Profile(p) => build_plan(&p, &argv, &cells(&p)?[0].values),
        _ => Err("not profile".into()),
    }
}

#[test]
fn aiperf_defaults() {
    let p = parse(&["profile"]).unwrap();
    assert_eq!(p.models, vec!["mock-model"]);
    assert_eq!(p.isl.mean, 550.0);
    assert_eq!(p.osl, None);
    assert_eq!(p.num_dataset_entries, 100);
    assert_eq!(p.load.concurrency, 1);
    assert_eq!(p.load.request_count, 10);
    assert_eq!(p.request_timeout_seconds, 21600.0);
    assert_eq!(p.artifacts.export_level, ExportLevel::Records);
    assert_eq!(
        p.artifacts.run_dir,
        "artifacts/mock-model-openai-chat-concurrency1"
    );
    // The simulated server streams by default (TTFT and ITL on a first run)...
    assert!(p.streaming);
    assert!(!parse(&["profile", "--no-streaming"]).unwrap().streaming);
    // ...a URL keeps AIPerf's default, off.
    let p = parse(&["profile", "-u", "127.0.0.1:9", "-m", "m"]).unwrap();
    assert!(!p.streaming);
    // An endpoint that does not stream is never streamed.
    let p = parse(&["profile", "--endpoint-type", "embeddings", "--streaming"]).unwrap();
    assert!(!p.streaming);
    assert_eq!(p.endpoint_path, "/v1/embeddings");
}

#[test]
fn aliases_match_aiperf() {
    let p = parse(&[
        "profile",
        "-m",
        "m1",
        "-u",
        "127.0.0.1:9",
        "--isl",
        "32",
        "--osl",
        "16",
        "--num-prompts",
        "7",
        "--num-requests",
        "40",
        "--concurrency",
        "8",
        "--artifact-dir",
        "out",
        "--profile-export-file",
        "foo",
        "--ui",
        "none",
        "--endpoint",
        "v2/x",
        "--num-warmup-requests",
        "3",
    ])
    .unwrap();
    assert_eq!(p.url, "http://127.0.0.1:9");
    assert_eq!(p.isl.mean, 32.0);
    assert_eq!(p.osl.unwrap().mean, 16.0);
    assert_eq!(p.num_dataset_entries, 7);
    assert_eq!(p.load.request_count, 40);
    assert_eq!(p.load.warmup_request_count, 3);
    assert_eq!(p.artifacts.run_dir, "out");
    assert_eq!(p.artifacts.prefix, "foo");
    assert_eq!(p.endpoint_path, "/v2/x");
    assert_eq!(p.ui, UiKind::None);
    // request count default is max(10, 2 × concurrency)
    let p = parse(&["profile", "--concurrency", "64"]).unwrap();
    assert_eq!(p.load.request_count, 128);
    // Several URLs in AIPerf's three forms: the flag repeated, several values after it, a
    // comma list.
    for args in [
        &["profile", "-m", "m", "-u", "a:1", "-u", "b:2", "-u", "c:3"][..],
        &["profile", "-m", "m", "-u", "a:1", "b:2", "c:3"],
        &["profile", "-m", "m", "--url", "a:1,b:2", "-u", "c:3"],
    ] {
        let p = parse(args).unwrap();
        assert_eq!(
            p.routing.urls,
            ["http://a:1", "http://b:2", "http://c:3"],
            "{args:?}"
        );
    }
    // Metrics targets take AIPerf's comma lists too.
    let p = parse(&[
        "profile",
        "-m",
        "m",
        "-u",
        "a:1",
        "--server-metrics",
        "s:1,s:2",
        "--gpu-telemetry",
        "g:1,g:2",
    ])
    .unwrap();
    assert_eq!(
        p.telemetry.server_metrics_urls,
        ["http://s:1/metrics", "http://s:2/metrics"]
    );
    assert_eq!(
        p.telemetry.gpu_telemetry_urls,
        ["http://g:1/metrics", "http://g:2/metrics"]
    );
    // An empty --endpoint appends nothing, as in AIPerf (the URL is the whole endpoint).
    let p = parse(&["profile", "-m", "m", "-u", "http://h:1/x", "--endpoint", ""]).unwrap();
    assert_eq!(p.endpoint_path, "");
    assert_eq!(
        inferbench_core::endpoint_url::join(&p.url, &p.endpoint_path),
        "http://h:1/x"
    );
}

#[test]
fn comma_lists_make_a_grid_sweep() {
    let argv: Vec<String> = [
        "inferbench",
        "profile",
        "--concurrency",
        "1,4",
        "--isl",
        "32,64,128",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let m = command_with_unbuilt().try_get_matches_from(&argv).unwrap();
    let Command::Profile(p) = Cli::from_arg_matches(&m).unwrap().command else {
        panic!("profile")
    };
    let c = cells(&p).unwrap();
    // 2 × 3 cells, concurrency outermost; only the swept flags name the cell.
    let names: Vec<String> = c.iter().map(|c| c.dir_name.clone().unwrap()).collect();
    assert_eq!(
        names,
        [
            "concurrency_1_isl_32",
            "concurrency_1_isl_64",
            "concurrency_1_isl_128",
            "concurrency_4_isl_32",
            "concurrency_4_isl_64",
            "concurrency_4_isl_128"
        ]
    );
    assert_eq!(c[4].values.concurrency, Some(4));
    assert_eq!(c[4].values.isl, 64);
    let plan = build_plan(&p, &argv, &c[4].values).unwrap();
    assert_eq!(plan.load.concurrency, 4);
    assert_eq!(plan.isl.mean, 64.0);
    // A plain run is one unnamed cell.
    let argv: Vec<String> = ["inferbench", "profile"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let m = command_with_unbuilt().try_get_matches_from(&argv).unwrap();
    let Command::Profile(p) = Cli::from_arg_matches(&m).unwrap().command else {
        panic!("profile")
    };
    let c = cells(&p).unwrap();
    assert_eq!(c.len(), 1);
    assert!(c[0].dir_name.is_none() && c[0].parameters.is_empty());
    assert_eq!(c[0].values.isl, 550);
}

#[test]
fn extra_inputs_typed_and_json_merged_later_wins() {
    let m = parse_extra_inputs(&[
        "ignore_eos:true".into(),
        "min_tokens:16".into(),
        "temperature:0.5".into(),
        "stop:END".into(),
        r#"{"min_tokens": 8, "nvext": {"a": 1}}"#.into(),
    ])
    .unwrap();
    assert_eq!(m["ignore_eos"], serde_json::json!(true));
    assert_eq!(m["min_tokens"], serde_json::json!(8));
    assert_eq!(m["temperature"], serde_json::json!(0.5));
    assert_eq!(m["stop"], serde_json::json!("END"));
    assert_eq!(m["nvext"], serde_json::json!({"a": 1}));
    assert!(parse_extra_inputs(&["nocolon".into()]).is_err());
    assert!(parse_extra_inputs(&["{bad".into()]).is_err());
}

/// AIPerf 0.13's `parse_str_or_dict_as_tuple_list` and `coerce_value`, case by case.
#[test]
fn extra_inputs_split_and_coerce_as_aiperf_does() {
    use serde_json::json;
    let m = parse_extra_inputs(&[
        "temperature:0.7,top_p:0.9, max_tokens : 12".into(),
        "a:True,b:FALSE,c:None,d:null".into(),
        "e:007,f:0,g:-0,h:-12,i:.5,j:5.,k:-.25,l:1e5,m:0x10,n:1.2.3,o:-".into(),
        "stop:[\"x,y\", \"z\"],nv:{\"k\": [1, 2]},p:hello world".into(),
    ])
    .unwrap();
    let want = json!({
        "temperature": 0.7, "top_p": 0.9, "max_tokens": 12,
        "a": true, "b": false, "c": null, "d": null,
        "e": "007", "f": 0, "g": 0, "h": -12, "i": 0.5, "j": 5.0, "k": -0.25,
        "l": "1e5", "m": "0x10", "n": "1.2.3", "o": "-",
        "stop": ["x,y", "z"], "nv": {"k": [1, 2]}, "p": "hello world",
    });
    assert_eq!(serde_json::Value::Object(m), want);
    // Brackets that are no JSON (an inline template): the text, not split at its commas.
    let m =
        parse_extra_inputs(&["payload_template:{\"p\": {{ text }}, \"n\": 1},x:1".into()]).unwrap();
    assert_eq!(
        m["payload_template"],
        json!("{\"p\": {{ text }}, \"n\": 1}")
    );
    assert_eq!(m["x"], json!(1));
    // An item without a colon, as AIPerf: refused, naming it.
    let e = parse_extra_inputs(&["a:1,b".into()]).unwrap_err();
    assert!(e.contains("\"b\" is not key:value"), "{e}");
}

#[test]
fn refused_flags_and_values_are_errors_that_say_so() {
    let e = parse(&["profile", "--search-planner", "monotonic_sla"]).unwrap_err();
    assert!(
        e.starts_with("--search-planner: refused: AIPerf's adaptive search"),
        "{e}"
    );
    // The flags built since: accepted.
    let p = parse(&["profile", "--num-warmup-sessions", "2", "--no-sweep-table"]).unwrap();
    assert_eq!(p.load.warmup_sessions, Some(2));
    let e = parse(&["profile", "--endpoint-type", "solido_rag"]).unwrap_err();
    assert!(
        e.contains("solido_rag") && e.contains("not implemented"),
        "{e}"
    );
    let e = parse(&["profile", "--endpoint-type", "video_generation"]).unwrap_err();
    assert!(
        e.contains("video_generation: not built") && e.contains("polled"),
        "{e}"
    );
}

#[test]
fn invalid_values_name_the_flag() {
    for (args, flag) in [
        (vec!["profile", "--concurrency", "0"], "--concurrency"),
        (vec!["profile", "--request-count", "0"], "--request-count"),
        (
            vec!["profile", "--request-timeout-seconds", "-1"],
            "--request-timeout-seconds",
        ),
        (vec!["profile", "-u", "ftp://x", "-m", "m"], "ftp://x"),
        (vec!["profile", "-u", "127.0.0.1:1"], "--model"),
        (
            vec!["profile", "--isl", "0"],
            "--synthetic-input-tokens-mean",
        ),
        (
            vec![
                "profile",
                "-u",
                "127.0.0.1:1",
                "-m",
                "m",
                "--sim-ttft-ms",
                "5",
            ],
            "--sim-ttft-ms",
        ),
        (vec!["profile", "--sim-itl-ms", "-1"], "--sim-itl-ms"),
    ] {
        let e = parse(&args).unwrap_err();
        assert!(e.contains(flag), "{args:?}: {e}");
    }
    let e = parse(&["profile", "--concurrency", "abc"]).unwrap_err();
    assert!(e.contains("--concurrency"), "{e}");
}

#[test]
fn secrets_are_redacted_from_the_command_line_and_plan() {
    let argv: Vec<String> = [
        "inferbench",
        "profile",
        "--api-key",
        "sk-123",
        "-H",
        "Authorization:Bearer zzz",
        "-H",
        "X-Trace:1",
        "--api-key=sk-456",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let line = redacted_command_line(&argv);
    assert!(
        !line.contains("sk-123") && !line.contains("zzz") && !line.contains("sk-456"),
        "{line}"
    );
    assert!(line.contains("X-Trace:1"));
    // (A key and an Authorization header together are refused: see
    // `one_source_of_authorization`; a secret header of another name goes with the key.)
    let p = parse(&[
        "profile",
        "--api-key",
        "sk-123",
        "-H",
        "X-Auth-Token:Bearer zzz",
    ])
    .unwrap();
    let json = serde_json::to_string(&p).unwrap();
    assert!(!json.contains("sk-123") && !json.contains("zzz"), "{json}");
    assert_eq!(p.api_key.as_ref().unwrap().expose(), "sk-123");
}

#[test]
fn url_credentials_become_a_basic_authorization_secret() {
    // RFC 7617's example: base64("Aladdin:open sesame").
    let (url, auth) = split_url_credentials("http://Aladdin:open%20sesame@10.0.0.1:8000/v1");
    assert_eq!(url, "http://10.0.0.1:8000/v1");
    assert_eq!(auth.as_deref(), Some("Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="));
    // One and two padding characters: base64("a:b") and base64("ab:cd").
    assert_eq!(
        split_url_credentials("http://a:b@h").1.as_deref(),
        Some("Basic YTpi")
    );
    assert_eq!(
        split_url_credentials("http://ab:cd@h").1.as_deref(),
        Some("Basic YWI6Y2Q=")
    );
    // An @ after the authority is not userinfo.
    assert_eq!(
        split_url_credentials("http://h:1/p?x=a@b"),
        ("http://h:1/p?x=a@b".to_string(), None)
    );

    let p = parse(&["profile", "-m", "m", "-u", "http://u:TOPSECRET@127.0.0.1:9"]).unwrap();
    assert_eq!(p.url, "http://127.0.0.1:9");
    assert_eq!(p.headers[0].0, "Authorization");
    assert_eq!(p.headers[0].1.expose(), "Basic dTpUT1BTRUNSRVQ=");
    assert!(!serde_json::to_string(&p).unwrap().contains("TOPSECRET"));
    assert!(!p.cli_command.contains("TOPSECRET"), "{}", p.cli_command);
    assert!(
        parse(&["profile", "-m", "m", "-u", "http://u:p@h", "--api-key", "k"])
            .unwrap_err()
            .contains("--api-key")
    );
}

#[test]
fn one_source_of_authorization() {
    let e = parse(&["profile", "--api-key", "k", "-H", "authorization:Bearer x"]).unwrap_err();
    assert_eq!(
        e,
        "--api-key and --header Authorization both set the Authorization header: give one"
    );
    let e = parse(&[
        "profile",
        "-m",
        "m",
        "-u",
        "http://u:p@h",
        "--header=Authorization:Basic x",
    ])
    .unwrap_err();
    assert_eq!(
        e,
        "--url with user:password@ and --header Authorization both set the Authorization header: give one"
    );
    let e = parse(&[
        "profile",
        "-m",
        "m",
        "-u",
        "u:p@h",
        "--api-key",
        "k",
        "-HAuthorization:x",
    ])
    .unwrap_err();
    assert!(
        e.starts_with("--api-key and --url with user:password@ and --header Authorization all set"),
        "{e}"
    );
    // Each alone is fine.
    assert!(parse(&["profile", "-H", "Authorization:Bearer x"]).is_ok());
}

/// Every spelling of a secret flag value, and a secret repeated as another flag's value,
/// is redacted from the stored command line; plain values stay.
#[test]
fn the_stored_command_line_is_redacted_from_parsed_values() {
    let p = parse(&[
        "profile",
        "-m",
        "m",
        "-u",
        "alice:PW1%40x@127.0.0.1:9",
        "--header=X-Authorization:S2",
        "-HX-My-Token:S3",
        "-H=Password:S4",
        "--header",
        "X-Trace:plain-1",
        "-H",
        r#"{"Set-Cookie": "S\u0035-cookie"}"#,
        "--server-metrics",
        "http://bob:S6@127.0.0.1:2/metrics",
        "--gpu-telemetry",
        "carol:S7@127.0.0.1:3",
        "--artifact-dir",
        "S3-dir",
    ])
    .unwrap();
    let line = &p.cli_command;
    for s in [
        "PW1", "alice", "S2", "S3", "S4", "S5", "S6", "bob", "S7", "carol",
    ] {
        assert!(!line.contains(s), "{s} in {line}");
    }
    assert!(line.contains("X-Trace:plain-1"), "{line}");
    assert!(
        line.contains("'--header=X-Authorization:<redacted>'"),
        "{line}"
    );
    assert!(line.contains("'-HX-My-Token:<redacted>'"), "{line}");
    assert!(line.contains("-u '<redacted>@127.0.0.1:9'"), "{line}");
    // A flag value holding a secret is redacted too (here a directory named after one).
    assert!(line.contains("--artifact-dir '<redacted>-dir'"), "{line}");
    // A schemeless URL's credentials are split off too, and sent as Basic
    // (base64 of "alice:PW1@x" = YWxpY2U6UFcxQHg=).
    assert_eq!(p.url, "http://127.0.0.1:9");
    assert_eq!(p.headers[0].1.expose(), "Basic YWxpY2U6UFcxQHg=");
    // The metrics targets keep no credentials.
    assert_eq!(
        p.telemetry.server_metrics_urls,
        ["http://127.0.0.1:2/metrics"]
    );
    assert_eq!(
        p.telemetry.gpu_telemetry_urls,
        ["http://127.0.0.1:3/metrics"]
    );
    let json = serde_json::to_string(&p).unwrap();
    for s in ["PW1", "S2", ":S3", "S4", "S5", "S6", "S7"] {
        assert!(!json.contains(s), "{s} in the plan");
    }
}

#[test]
fn a_bad_url_error_never_shows_its_credentials() {
    let e = parse(&["profile", "-m", "m", "-u", "ftp://u:SECRETX@h"]).unwrap_err();
    assert!(!e.contains("SECRETX") && e.contains("ftp://h"), "{e}");
}

#[test]
fn per_chunk_usage_needs_server_counts_chat_and_streaming() {
    let e = parse(&["profile", "--per-chunk-usage"]).unwrap_err();
    assert!(e.contains("requires --use-server-token-count"), "{e}");
    let e = parse(&[
        "profile",
        "--per-chunk-usage",
        "--use-server-token-count",
        "--endpoint-type",
        "completions",
    ])
    .unwrap_err();
    assert!(e.contains("requires --endpoint-type chat"), "{e}");
    let e = parse(&[
        "profile",
        "--per-chunk-usage",
        "--use-server-token-count",
        "--no-streaming",
    ])
    .unwrap_err();
    assert!(e.contains("requires --streaming"), "{e}");
    let p = parse(&["profile", "--per-chunk-usage", "--use-server-token-count"]).unwrap();
    assert!(p.endpoint.per_chunk_usage);
    assert!(!parse(&["profile"]).unwrap().endpoint.per_chunk_usage);
}

fn profile_of(args: &[&str]) -> (ProfileArgs, Vec<String>) {
    let argv: Vec<String> = ["inferbench", "profile"]
        .iter()
        .chain(args)
        .map(|s| s.to_string())
        .collect();
    let m = command_with_unbuilt().try_get_matches_from(&argv).unwrap();
    let Command::Profile(p) = Cli::from_arg_matches(&m).unwrap().command else {
        panic!("profile")
    };
    (*p, argv)
}

#[test]
fn every_magic_list_flag_sweeps() {
    // Grid of 2 × 2: --isl-stddev comes before --request-count in cell order.
    let (p, argv) = profile_of(&["--request-count", "20,40", "--isl-stddev", "0,8"]);
    let c = cells(&p).unwrap();
    let names: Vec<String> = c.iter().map(|c| c.dir_name.clone().unwrap()).collect();
    assert_eq!(
        names,
        [
            "isl_stddev_0.0_request_count_20",
            "isl_stddev_0.0_request_count_40",
            "isl_stddev_8.0_request_count_20",
            "isl_stddev_8.0_request_count_40"
        ]
    );
    let plan = build_plan(&p, &argv, &c[3].values).unwrap();
    assert_eq!(plan.load.request_count, 40);
    assert_eq!(plan.isl.stddev, 8.0);
    // Zip pairs the i-th values; a one-value list is held in every cell.
    let (p, argv) = profile_of(&[
        "--sweep-type",
        "zip",
        "--conversation-turn-mean",
        "1,3",
        "--num-users",
        "2,5",
        "--user-centric-rate",
        "4",
        "--benchmark-duration",
        "9",
    ]);
    let c = cells(&p).unwrap();
    assert_eq!(c.len(), 2);
    assert_eq!(
        c[1].dir_name.as_deref(),
        Some("conversation_turn_mean_3.0_num_users_5")
    );
    assert_eq!(c[1].values.conversation_turn_mean, 3.0);
    assert_eq!(c[1].values.num_users, Some(5));
    assert_eq!(c[0].values.benchmark_duration, Some(9.0));
    assert_eq!(c[1].values.benchmark_duration, Some(9.0));
    build_plan(&p, &argv, &c[1].values).unwrap();
    // Zip refuses lists of different lengths, naming them.
    let (p, _) = profile_of(&[
        "--sweep-type",
        "zip",
        "--prefill-concurrency",
        "1,2,3",
        "--osl-stddev",
        "1,2",
    ]);
    let e = cells(&p).unwrap_err();
    assert!(
        e.contains("--osl-stddev 2") && e.contains("--prefill-concurrency 3"),
        "{e}"
    );
    // NaN cannot pass as "not given".
    let (p, _) = profile_of(&["--benchmark-duration", "5,nan"]);
    assert!(cells(&p).unwrap_err().contains("--benchmark-duration"));
}

#[test]
fn a_rate_series_file_sets_the_rate_and_lands_in_the_plan() {
    let tmp = tempfile::Builder::new()
        .prefix("ib-series-")
        .tempdir()
        .unwrap();
    let dir = tmp.path();
    let good = dir.join("good.json");
    std::fs::write(
        &good,
        r#"{"points":[{"time_s":0,"qps":4},{"time_s":2,"qps":1}]}"#,
    )
    .unwrap();
    let good = good.to_str().unwrap();
    let p = parse(&["profile", "--request-rate-series", good]).unwrap();
    let r = p.load.request_rate.unwrap();
    // The first point is the starting rate; the points are kept as given.
    assert_eq!(r.rate, 4.0);
    let pts = r.series.unwrap();
    assert_eq!(pts.points().len(), 2);
    assert_eq!((pts.points()[1].time_s, pts.points()[1].qps), (2.0, 1.0));
    // It replaces --request-rate, so the two together are an error.
    let e = parse(&[
        "profile",
        "--request-rate-series",
        good,
        "--request-rate",
        "2",
    ])
    .unwrap_err();
    assert!(
        e.contains("--request-rate-series and --request-rate"),
        "{e}"
    );
    // A bad file: one line naming the flag, the file and the point.
    let bad = dir.join("bad.json");
    std::fs::write(&bad, r#"[{"time_s":0,"qps":4},{"time_s":0,"qps":1}]"#).unwrap();
    let bad = bad.to_str().unwrap();
    let e = parse(&["profile", "--request-rate-series", bad]).unwrap_err();
    assert!(
        e.starts_with(&format!("--request-rate-series {bad}: point 1: time_s")),
        "{e}"
    );
    let e = parse(&["profile", "--request-rate-series", "/nonexistent/x.json"]).unwrap_err();
    assert!(e.contains("cannot read"), "{e}");
}

#[test]
fn prefill_ramps_need_a_prefill_cap_and_fall_back_for_the_warmup() {
    let e = parse(&["profile", "--prefill-concurrency-ramp-duration", "2"]).unwrap_err();
    assert!(e.contains("needs --prefill-concurrency"), "{e}");
    let e = parse(&[
        "profile",
        "--prefill-concurrency",
        "2",
        "--prefill-concurrency-ramp-duration",
        "0",
    ])
    .unwrap_err();
    assert!(e.contains("--prefill-concurrency-ramp-duration"), "{e}");
    let e = parse(&[
        "profile",
        "--warmup-request-count",
        "2",
        "--warmup-prefill-concurrency-ramp-duration",
        "1",
    ])
    .unwrap_err();
    assert!(
        e.contains("needs --warmup-prefill-concurrency or --prefill-concurrency"),
        "{e}"
    );
    let p = parse(&[
        "profile",
        "--prefill-concurrency",
        "4",
        "--prefill-concurrency-ramp-duration",
        "2.5",
    ])
    .unwrap();
    assert_eq!(p.load.prefill_concurrency_ramp_s, Some(2.5));
    assert_eq!(p.load.warmup_prefill_concurrency_ramp_s, None);
    let p = parse(&[
        "profile",
        "--warmup-request-count",
        "2",
        "--warmup-prefill-concurrency",
        "3",
        "--warmup-prefill-concurrency-ramp-duration",
        "1",
    ])
    .unwrap();
    assert_eq!(p.load.warmup_prefill_concurrency_ramp_s, Some(1.0));
}

/// `--header` values split at commas, as AIPerf 0.13 splits them; the JSON form keeps a comma.
#[test]
fn headers_split_at_commas_as_aiperf_does() {
    let h = super::values::parse_headers(&["X-A:1,X-B: two".into(), r#"{"X-C": "a,b"}"#.into()])
        .unwrap();
    let names: Vec<&str> = h.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["X-A", "X-B", "X-C"]);
    let e = super::values::parse_headers(&["Accept:a,b".into()]).unwrap_err();
    assert_eq!(
        e,
        r#"--header: "b" is not Name:Value (or give a JSON object)"#
    );
}

/// AIPerf's enum names match in any case and with `-` for `_` (its `CaseInsensitiveStrEnum`
/// and plugin-name normalization).
#[test]
fn enum_values_match_as_aiperf_normalizes_them() {
    let p = parse(&[
        "profile",
        "--endpoint-type",
        "HF-TEI-Rankings",
        "--export-level",
        "RAW",
        "--ui-type",
        "None",
        "--dataset-sampling-strategy",
        "Shuffle",
        "--url-strategy",
        "ROUND-ROBIN",
        "--model-selection-strategy",
        "Random",
        "--connection-reuse-strategy",
        "STICKY_USER_SESSIONS",
        "--wait-for-model-mode",
        "Both",
        "--request-rate",
        "5",
        "--arrival-pattern",
        "Constant",
    ])
    .unwrap();
    assert_eq!(
        p.endpoint_type,
        inferbench_core::plan::EndpointType::HfTeiRankings
    );
    assert_eq!(p.artifacts.export_level, ExportLevel::Raw);
    assert_eq!(p.ui, UiKind::None);
    assert_eq!(p.dataset.sampling_strategy.as_deref(), Some("shuffle"));
    assert_eq!(
        p.routing.model_strategy,
        inferbench_core::routing_plan::ModelStrategy::Random
    );
    assert_eq!(
        p.connection.reuse_strategy,
        inferbench_core::connection_plan::ReuseStrategy::StickyUserSessions
    );
    assert_eq!(
        p.controls.wait_for_model_mode,
        inferbench_core::controls_plan::WaitMode::Both
    );
    let f = std::env::temp_dir().join(format!("inferbench-enum-{}.jsonl", std::process::id()));
    std::fs::write(&f, "{\"text\": \"hi\"}\n").unwrap();
    let p = parse(&[
        "profile",
        "--input-file",
        f.to_str().unwrap(),
        "--custom-dataset-type",
        "Single-Turn",
    ])
    .unwrap();
    let _ = std::fs::remove_file(&f);
    assert_eq!(
        p.dataset.custom_dataset_type.as_deref(),
        Some("single_turn")
    );
}
