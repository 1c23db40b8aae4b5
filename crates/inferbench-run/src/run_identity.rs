//! A run's identity (docs/identity.md): the pins it measures itself, from its manifest, its
//! frozen request bodies and, at the end, what the evidence showed; then the user's
//! declarations. The live run builds it before anything is written; a manifest written
//! before identity was recorded gets it rebuilt from its fields (as *recovered* pins).

use inferbench_core::identity::{Identity, Provenance, controls};
use inferbench_core::manifest::{MANIFEST_FILE, Manifest};
use inferbench_core::plan::{ArrivalKind, EndpointType, Target, TokenizerSpec};
use inferbench_core::workload::Workload;
use inferbench_core::{Record, StopReason};
use inferbench_workload::SamplingStrategy;
use serde_json::{Value, json};

/// Why a pin the run could not establish is missing.
pub const NOT_MEASURED: &str = "not measured by this run: declare it (--declare KEY=VALUE)";

/// What the builder reads.
pub struct Facts<'a> {
    pub manifest: &'a Manifest,
    pub workload: &'a Workload,
    /// The sampler's strategy (None: the dataset's default, not recorded).
    pub sampling: Option<SamplingStrategy>,
    /// Requests the profiling phase schedules (None: ended by a duration or the trace).
    pub profiling_requests: Option<u64>,
    /// Look for the chat template beside the tokenizer (the live run; a rebuild does not
    /// read files the run may no longer have had).
    pub read_template: bool,
}

fn sha(hex: &str) -> String {
    if hex.starts_with("sha256:") {
        hex.to_string()
    } else {
        format!("sha256:{hex}")
    }
}

fn sha_bytes(b: &[u8]) -> String {
    sha(&inferbench_core::seed::sha256_hex(b))
}

/// The URL host is this machine.
pub fn is_loopback(url: &str) -> bool {
    let host = url
        .parse::<http::Uri>()
        .ok()
        .and_then(|u| u.host().map(str::to_string))
        .unwrap_or_default();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|a| a.is_loopback())
}

/// The chat template shipped beside a Hugging Face tokenizer, found in the order
/// `transformers` (and `--apply-chat-template`) looks for it: a `chat_template.jinja` file,
/// else `chat_template.json`'s `chat_template`, else `tokenizer_config.json`'s. A string is
/// hashed as its text (so the digest equals the applied template's SHA-256); a list of named
/// templates is hashed as its canonical JSON value (every template of the list is pinned).
pub fn chat_template_digest(tokenizer: &TokenizerSpec) -> Option<String> {
    let TokenizerSpec::HuggingFace { path } = tokenizer else {
        return None;
    };
    let p = std::path::Path::new(path);
    let dir = if p.is_dir() { p } else { p.parent()? };
    if let Ok(b) = std::fs::read(dir.join("chat_template.jinja")) {
        return Some(sha_bytes(&b));
    }
    ["chat_template.json", "tokenizer_config.json"]
        .iter()
        .find_map(|name| {
            let b = std::fs::read(dir.join(name)).ok()?;
            let v = serde_json::from_slice::<Value>(&b).ok()?;
            match v.get("chat_template")? {
                Value::String(s) => Some(sha_bytes(s.as_bytes())),
                v @ Value::Array(_) => inferbench_core::canonical::digest(v).ok(),
                _ => None,
            }
        })
}

fn arrival_policy(m: &Manifest, workload: &Workload) -> Value {
    let l = &m.plan.load;
    let mut a = serde_json::Map::new();
    if l.fixed_schedule.enabled == Some(true)
        || workload.payloads.iter().any(|p| p.timestamp_ms.is_some())
            && l.fixed_schedule.enabled != Some(false)
            && l.request_rate.is_none()
            && l.user_centric.is_none()
            && !m.plan.dataset.ignore_trace_delays
    {
        let times: Vec<Option<f64>> = workload.payloads.iter().map(|p| p.timestamp_ms).collect();
        let schedule = json!({"times_ms": times, "options": l.fixed_schedule});
        a.insert("mode".into(), json!("fixed_schedule"));
        a.insert(
            "schedule".into(),
            json!(inferbench_core::canonical::digest(&schedule).unwrap_or_default()),
        );
    } else if let Some(u) = l.user_centric {
        a.insert("mode".into(), json!("user_centric"));
        a.insert("users".into(), json!(u.users));
        a.insert("rate".into(), json!(u.rate));
    } else if let Some(r) = &l.request_rate {
        a.insert("mode".into(), json!("rate"));
        a.insert("rate".into(), json!(r.rate));
        let dist = match r.pattern {
            ArrivalKind::Constant => "constant",
            ArrivalKind::Poisson => "poisson",
            ArrivalKind::Gamma => "gamma",
        };
        a.insert("distribution".into(), json!(dist));
        if r.pattern == ArrivalKind::Gamma {
            a.insert("smoothness".into(), json!(r.smoothness.unwrap_or(1.0)));
        }
        a.insert("ramp_s".into(), json!(r.ramp_s));
        a.insert("concurrency".into(), json!(r.ceiling));
        a.insert("seed".into(), json!(m.random_seed));
    } else {
        a.insert("mode".into(), json!("concurrency"));
        a.insert("concurrency".into(), json!(l.concurrency));
    }
    a.insert("concurrency_ramp_s".into(), json!(l.concurrency_ramp_s));
    a.insert("prefill_concurrency".into(), json!(l.prefill_concurrency));
    if let Some(c) = l.cancellation {
        a.insert(
            "cancellation".into(),
            json!({"rate_pct": c.rate_pct, "delay_s": c.delay_s}),
        );
    }
    Value::Object(a)
}

fn length_spec(m: &Manifest) -> Value {
    let p = &m.plan;
    if p.dataset.input_file.is_some() || p.dataset.public_dataset.is_some() {
        return json!("the dataset's own lengths");
    }
    let mut v = json!({
        "isl": p.isl,
        "osl": p.osl,
        "seq_dist": p.dataset.seq_dist,
        "random_range_ratio": p.dataset.random_range_ratio,
    });
    // Present only when given, so the spec of a run without them is unchanged.
    for (k, d) in [
        ("isl_dist", &p.dataset.isl_dist),
        ("osl_dist", &p.dataset.osl_dist),
    ] {
        if let Some(d) = d {
            v[k] = json!(d);
        }
    }
    v
}

fn dataset_source(m: &Manifest) -> Value {
    let d = &m.plan.dataset;
    let mut v = json!({
        "kind": m.dataset.kind,
        "entries": m.dataset.entries,
        "file": d.input_file,
        "public_dataset": d.public_dataset,
        "prompt_corpus": d.prompt_corpus,
    });
    if let Some(c) = &m.dataset.corpus_sha256 {
        v["sha256"] = json!(sha(c));
    }
    v
}

fn request_count(m: &Manifest, profiling_requests: Option<u64>) -> Value {
    match (m.plan.load.benchmark_duration_s, profiling_requests) {
        (Some(d), _) => json!({"duration_s": d}),
        (None, Some(n)) => json!(n),
        (None, None) => json!("the whole trace"),
    }
}

/// Every pin the run establishes itself (all `Measured`), before declarations, the
/// reasoning accounting and the stop reason (those come at the end, see [`finish_run`]).
pub fn measured(f: &Facts<'_>) -> Identity {
    let m = f.manifest;
    let plan = &m.plan;
    let simulated = matches!(plan.target, Target::Simulated { .. });
    let mut id = Identity::default();
    let mut put = |name: &str, v: Value| id.set(name, v, Provenance::Measured);
    put("workload_digest", json!(sha(&m.dataset.workload_sha256)));
    put(
        "request_order",
        json!({
            "strategy": f.sampling.map_or(format!("the default of {}", m.dataset.kind), |s| s.as_str().to_string()),
            "seed": m.random_seed,
        }),
    );
    put("request_count", request_count(m, f.profiling_requests));
    put("length_spec", length_spec(m));
    put("dataset_source", dataset_source(m));
    let bodies: Vec<serde_json::Map<String, Value>> = f
        .workload
        .payloads
        .iter()
        .filter_map(|p| serde_json::from_str::<Value>(&p.body).ok())
        .filter_map(|v| match v {
            Value::Object(o) => Some(o),
            _ => None,
        })
        .collect();
    let refs: Vec<&serde_json::Map<String, Value>> = bodies.iter().collect();
    for (name, v) in controls::generation_pins(&refs) {
        put(name, v);
    }
    let version = inferbench_core::TOOL_VERSION;
    put("harness", json!(format!("inferbench/{version}")));
    put("parser", json!(format!("inferbench/{version}")));
    put("definition_set", json!(inferbench_metrics::aiperf::NAME));
    put("streaming", json!(plan.streaming));
    put("warmup", json!(m.warmup));
    put("stop_rule", json!(m.stop_rule));
    put(
        "token_count_source",
        json!(if plan.use_server_token_count {
            "server_usage".to_string()
        } else {
            format!("tokenizer:{}", sha(&m.tokenizer.sha256))
        }),
    );
    let arrival = arrival_policy(m, f.workload);
    // The seed's three traffic profiles follow from the arrival mode alone.
    let profile = match arrival["mode"].as_str() {
        Some("fixed_schedule") => "trace-replay",
        Some("concurrency") => "regression",
        _ => "service-load",
    };
    put("profile", json!(profile));
    put("arrival_policy", arrival);
    put("random_seed", json!(m.random_seed));
    put("clock_source", json!("monotonic"));
    if simulated || is_loopback(&plan.url) {
        put("client_placement", json!("same-host"));
    }
    put("model", json!(plan.models));
    if let Some(r) = &m.server.models_response
        && let Ok(d) = inferbench_core::canonical::digest(r)
    {
        put("server_models", json!(d));
    }
    put("tokenizer_digest", json!(sha(&m.tokenizer.sha256)));
    // `--tokenizer-revision` was checked against the cache snapshot: the commit is known.
    if let Some(r) = &m.tokenizer.revision {
        put("tokenizer_revision", json!(r.commit));
    }
    if let Some(b) = &m.tool.binary_sha256 {
        put("client_binary_digest", json!(sha(b)));
    }
    put(
        "client_host",
        serde_json::to_value(&m.host).unwrap_or(Value::Null),
    );
    put(
        "client_workers",
        json!("one client thread (single-threaded async runtime) and one evidence-writer thread"),
    );
    if plan.endpoint_type != EndpointType::Chat {
        put(
            "chat_template_digest",
            json!(format!(
                "not applicable: the {} endpoint sends no chat messages",
                plan.endpoint_type.as_str()
            )),
        );
    } else if simulated {
        put(
            "chat_template_digest",
            json!("none: the simulated server applies no chat template"),
        );
    } else if f.read_template
        && let Some(d) = chat_template_digest(&plan.tokenizer)
    {
        put("chat_template_digest", json!(d));
    }
    id
}

/// Applies the user's declarations, then, for the built-in server, what it says of itself
/// for every deployment pin not declared: a declaration of the deployment replaces it
/// (a declared `image` without a digest keeps the digest unknown, so it reads as movable).
pub fn declare(
    id: &mut Identity,
    declared: &[inferbench_core::identity::Declaration],
    m: &Manifest,
) -> Result<(), inferbench_core::identity::DeclareError> {
    id.declare_all(declared)?;
    let said = |k: &str| declared.iter().any(|d| d.key == k);
    let image_said = said("image") || said("image_digest");
    let mut put = |name: &str, v: Value| {
        let image_pin = name == "image" || name == "image_digest";
        if !(said(name) || image_pin && image_said) {
            id.set(name, v, Provenance::Measured);
        }
    };
    simulated_deployment(&mut put, m);
    Ok(())
}

/// The deployment the built-in server is: the inferbench binary, no GPUs, no cache.
fn simulated_deployment(put: &mut impl FnMut(&str, Value), m: &Manifest) {
    let Target::Simulated {
        ttft_ms,
        itl_ms,
        error_rate,
        answer_accuracy,
        ref serving,
    } = m.plan.target
    else {
        return;
    };
    put(
        "cache_procedure",
        json!("none: the simulated server keeps no cache"),
    );
    if let Some(b) = &m.tool.binary_sha256 {
        put("image_digest", json!(sha(b)));
    }
    put(
        "image",
        json!(format!(
            "inferbench/{} (built-in simulated server)",
            inferbench_core::TOOL_VERSION
        )),
    );
    let mut args = json!({"sim_ttft_ms": ttft_ms, "sim_itl_ms": itl_ms, "sim_error_rate": error_rate, "sim_answer_accuracy": answer_accuracy});
    // Only when set, so that a default server's identity stays what older runs recorded.
    if !serving.is_default() {
        args["sim_serving"] = json!(serving);
    }
    put("runtime_args", args);
    for name in [
        "model_revision",
        "tokenizer_revision",
        "precision",
        "parallelism",
        "gpu_inventory",
        "gpu_driver",
        "determinism",
    ] {
        put(name, json!("simulated"));
    }
}

/// How reasoning reached the client, as the records show it.
#[derive(Clone, Debug, Default)]
pub struct ReasoningSeen {
    /// `--reasoning-tags` moved `<think>` text out of the content.
    split_tags: bool,
    separate: bool,
    think: bool,
    /// The record's content joined, reused from record to record (this runs per record on
    /// the writer thread).
    joined: String,
}

impl ReasoningSeen {
    pub fn new(split_tags: bool) -> ReasoningSeen {
        ReasoningSeen {
            split_tags,
            ..ReasoningSeen::default()
        }
    }

    pub fn push(&mut self, r: &Record) {
        let reasoning = r
            .events
            .iter()
            .any(|e| e.reasoning.as_deref().is_some_and(|s| !s.is_empty()));
        if reasoning {
            // Reasoning the decoder split from `<think>` tags arrived in the content.
            if self.split_tags {
                self.think = true;
            } else {
                self.separate = true;
            }
        }
        if !self.think {
            // A tag may be cut across events: look at the content as a whole.
            self.joined.clear();
            for c in r.events.iter().filter_map(|e| e.content.as_deref()) {
                self.joined.push_str(c);
            }
            self.think = self.joined.contains("<think>");
        }
    }

    /// `separate_field`, `think_in_content`, both joined by `+`, or `none`.
    pub fn value(&self) -> Value {
        json!(match (self.separate, self.think) {
            (true, true) => "separate_field+think_in_content",
            (true, false) => "separate_field",
            (false, true) => "think_in_content",
            (false, false) => "none",
        })
    }
}

/// The pins known only at the end: the reasoning accounting observed and the stop reason.
pub fn finish_run(id: &mut Identity, reasoning: &ReasoningSeen, stop: StopReason) {
    id.set(
        "reasoning_accounting",
        reasoning.value(),
        Provenance::Measured,
    );
    id.set(
        "stop_reason",
        serde_json::to_value(stop).unwrap_or(Value::Null),
        Provenance::Measured,
    );
    id.finish(NOT_MEASURED);
}

/// The identity of a manifest written before identity was recorded: its fields read again,
/// every pin marked as recovered from the manifest (or the evidence, for reasoning).
pub fn rebuild(
    m: &Manifest,
    workload: &Workload,
    evidence: &inferbench_core::Evidence,
) -> Identity {
    let facts = Facts {
        manifest: m,
        workload,
        sampling: m
            .plan
            .dataset
            .sampling_strategy
            .as_deref()
            .and_then(SamplingStrategy::parse),
        profiling_requests: m
            .plan
            .load
            .benchmark_duration_s
            .is_none()
            .then_some(m.plan.load.request_count),
        read_template: false,
    };
    let mut id = measured(&facts);
    let _ = declare(&mut id, &[], m);
    let mut seen = ReasoningSeen::new(m.plan.endpoint.reasoning_tags.is_some());
    for r in &evidence.records {
        seen.push(r);
    }
    finish_run(&mut id, &seen, m.stop_reason);
    let evidence_pins = ["reasoning_accounting"];
    for (name, pin) in id.pins.iter_mut() {
        pin.provenance = Provenance::Recovered {
            file: if evidence_pins.contains(&name.as_str()) {
                inferbench_core::evidence::EVIDENCE_FILE.to_string()
            } else {
                MANIFEST_FILE.to_string()
            },
            key: name.clone(),
        };
    }
    id.missing
        .values_mut()
        .for_each(|w| *w = "not recorded by this older manifest".into());
    id
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_core::Event;

    #[test]
    fn the_chat_template_beside_a_tokenizer_is_hashed_in_the_loaders_order() {
        let tok = |p: &std::path::Path| TokenizerSpec::HuggingFace {
            path: p.join("tokenizer.json").to_string_lossy().into_owned(),
        };
        // The workload crate's test tokenizer ships only chat_template.jinja (sha256sum).
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../inferbench-workload/tests/data/tokenizer");
        assert_eq!(
            chat_template_digest(&tok(&dir)).as_deref(),
            Some("sha256:cd61dc8c18d10e3e9e987c9052f8001b7b54d177f307bf2c8fd1eb3f7494cde4")
        );
        let guard = tempfile::Builder::new()
            .prefix("ib-template-")
            .tempdir()
            .unwrap();
        let tmp = guard.path();
        std::fs::write(
            tmp.join("tokenizer_config.json"),
            r#"{"chat_template": "{{ messages }}"}"#,
        )
        .unwrap();
        // Only the config: its string (`printf '{{ messages }}' | sha256sum`).
        assert_eq!(
            chat_template_digest(&tok(tmp)).as_deref(),
            Some("sha256:f24189f08c85a1eb19a737306c3a13e85462ee33d964f28108d64a2485fa2171")
        );
        // chat_template.json comes before the config (`printf json | sha256sum`).
        std::fs::write(
            tmp.join("chat_template.json"),
            r#"{"chat_template": "json"}"#,
        )
        .unwrap();
        assert_eq!(
            chat_template_digest(&tok(tmp)).as_deref(),
            Some("sha256:02bd175f329720378ce83dd56a1b6b1f5291a60182d6c54b5e0d1e8d248a267a")
        );
        // The .jinja file comes first of all (`printf other | sha256sum`).
        std::fs::write(tmp.join("chat_template.jinja"), "other").unwrap();
        assert_eq!(
            chat_template_digest(&tok(tmp)).as_deref(),
            Some("sha256:d9298a10d1b0735837dc4bd85dac641b0f3cef27a47e5d53a54f2f3f5b2fcffa")
        );
        assert_eq!(chat_template_digest(&TokenizerSpec::Builtin), None);
    }

    #[test]
    fn loopback_urls_are_this_host() {
        assert!(is_loopback("http://127.0.0.1:8000"));
        assert!(is_loopback("http://localhost:8000"));
        assert!(is_loopback("http://[::1]:8000"));
        assert!(!is_loopback("http://10.1.2.3:8000"));
        assert!(!is_loopback("https://api.example.com"));
    }

    fn record(content: &[&str], reasoning: Option<&str>) -> Record {
        let mut events: Vec<Event> = content
            .iter()
            .map(|c| Event {
                content: Some(c.to_string()),
                ..Event::default()
            })
            .collect();
        events.push(Event {
            reasoning: reasoning.map(str::to_string),
            ..Event::default()
        });
        Record {
            events,
            ..Record::default()
        }
    }

    #[test]
    fn reasoning_accounting_is_what_the_records_show() {
        let mut s = ReasoningSeen::new(false);
        s.push(&record(&["hello"], None));
        assert_eq!(s.value(), json!("none"));
        // A tag cut across two events still counts.
        s.push(&record(&["<thi", "nk>x"], None));
        assert_eq!(s.value(), json!("think_in_content"));
        s.push(&record(&["a"], Some("because")));
        assert_eq!(s.value(), json!("separate_field+think_in_content"));
        // With --reasoning-tags the decoder moved <think> text into reasoning.
        let mut t = ReasoningSeen::new(true);
        t.push(&record(&["a"], Some("moved")));
        assert_eq!(t.value(), json!("think_in_content"));
        let mut u = ReasoningSeen::new(false);
        u.push(&record(&["a"], Some("")));
        assert_eq!(u.value(), json!("none"));
    }
}
