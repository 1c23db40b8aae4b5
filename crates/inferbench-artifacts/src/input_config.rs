//! The `input_config` block of our AIPerf-named summaries, in AIPerf 0.13's own shape (its
//! YAML v2 configuration: `models.items[].name`, `endpoint`, `datasets[]`, `phases[]`,
//! `artifacts`, `tokenizer`, `runtime`), so that tools reading AIPerf's files (its `aiperf
//! plot`, users' scripts and dashboards) find the model, the load and the slice duration
//! where AIPerf puts them. The complete resolved plan stays in `inferbench_manifest.json`.

use inferbench_core::RunPlan;
use inferbench_core::plan::{ArrivalKind, LengthDist, TokenizerSpec};
use serde_json::{Map, Value, json};

/// `plan` as AIPerf 0.13 writes its `input_config` (docs/file-formats.md lists the keys).
pub fn aiperf_input_config(plan: &RunPlan) -> Value {
    let mut o = Map::new();
    let items: Vec<Value> = plan.models.iter().map(|m| json!({"name": m})).collect();
    o.insert("models".into(), json!({ "items": items }));

    let urls: Vec<&str> = if plan.routing.urls.is_empty() {
        vec![plan.url.as_str()]
    } else {
        plan.routing.urls.iter().map(String::as_str).collect()
    };
    let mut endpoint = Map::new();
    endpoint.insert("urls".into(), json!(urls));
    endpoint.insert("type".into(), json!(plan.endpoint_type.as_str()));
    endpoint.insert("path".into(), json!(plan.endpoint_path));
    endpoint.insert("streaming".into(), json!(plan.streaming));
    if !plan.extra_inputs.is_empty() {
        endpoint.insert("extra".into(), Value::Object(plan.extra_inputs.clone()));
    }
    endpoint.insert("timeout".into(), json!(plan.request_timeout_seconds));
    o.insert("endpoint".into(), Value::Object(endpoint));

    let ds = &plan.dataset;
    let mut dataset = Map::new();
    dataset.insert("name".into(), json!("main"));
    // AIPerf's discriminated shape: `type` is `public` (the name under `dataset`), `file`
    // (the loader under `format`) or `synthetic`; readers such as `speed-bench-report` key on
    // `format`/`dataset`.
    match (&ds.input_file, &ds.custom_dataset_type, &ds.public_dataset) {
        (_, _, Some(p)) => {
            dataset.insert("type".into(), json!("public"));
            dataset.insert("dataset".into(), json!(p));
        }
        (Some(_), t, _) => {
            dataset.insert("type".into(), json!("file"));
            if let Some(t) = t {
                dataset.insert("format".into(), json!(t));
            }
        }
        (None, _, _) => {
            dataset.insert("type".into(), json!("synthetic"));
        }
    }
    if let Some(f) = &ds.input_file {
        dataset.insert("path".into(), json!(f));
    }
    dataset.insert("entries".into(), json!(plan.num_dataset_entries));
    dataset.insert("random_seed".into(), json!(plan.random_seed));
    let dist = |d: &LengthDist| json!({"mean": d.mean, "stddev": d.stddev});
    // `--isl-dist`/`--osl-dist` are AIPerf's own YAML shapes: written back as given.
    let shape = |t: &Option<String>| {
        t.as_deref()
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
    };
    let mut prompts = Map::new();
    prompts.insert(
        "isl".into(),
        shape(&ds.isl_dist).unwrap_or_else(|| dist(&plan.isl)),
    );
    match (shape(&ds.osl_dist), &plan.osl) {
        (Some(v), _) => {
            prompts.insert("osl".into(), v);
        }
        (None, Some(osl)) => {
            prompts.insert("osl".into(), dist(osl));
        }
        (None, None) => {}
    }
    dataset.insert("prompts".into(), Value::Object(prompts));
    o.insert("datasets".into(), json!([Value::Object(dataset)]));

    o.insert("phases".into(), Value::Array(phases(plan)));

    let mut artifacts = Map::new();
    artifacts.insert("dir".into(), json!(plan.artifacts.dir));
    if let Some(s) = plan.artifacts.slice_duration_s {
        artifacts.insert("slice_duration".into(), json!(s));
    }
    o.insert("artifacts".into(), Value::Object(artifacts));
    let tokenizer = match &plan.tokenizer {
        TokenizerSpec::Builtin => "builtin".to_string(),
        TokenizerSpec::HuggingFace { path } => path.clone(),
    };
    o.insert("tokenizer".into(), json!({ "name": tokenizer }));
    Value::Object(o)
}

/// AIPerf's phases: a warmup when the plan has one, then the profiling phase, each with its
/// load type (`concurrency`, `poisson`/`constant`/`gamma` at a rate, or `user_centric`).
fn phases(plan: &RunPlan) -> Vec<Value> {
    let l = &plan.load;
    let mut out = Vec::new();
    if l.warmup_request_count > 0 || l.warmup_duration_s.is_some() || l.warmup_sessions.is_some() {
        let mut w = Map::new();
        w.insert("name".into(), json!("warmup"));
        w.insert("kind".into(), json!("warmup"));
        // AIPerf forces this for a warmup; tools that read the phases (analyze swim-lane)
        // skip excluded phases.
        w.insert("exclude_from_results".into(), json!(true));
        let rate = l
            .warmup_request_rate
            .or(l.request_rate.as_ref().map(|r| r.rate));
        match (l.warmup_user_centric, rate) {
            (Some(u), _) => {
                w.insert("type".into(), json!("user_centric"));
                w.insert("rate".into(), json!(u.rate));
                w.insert("users".into(), json!(u.users));
            }
            (None, Some(rate)) => {
                let pattern = l
                    .warmup_arrival
                    .or(l.request_rate.as_ref().map(|r| r.pattern))
                    .unwrap_or(ArrivalKind::Poisson);
                w.insert("type".into(), json!(pattern_name(pattern)));
                w.insert("rate".into(), json!(rate));
            }
            (None, None) => {
                w.insert("type".into(), json!("concurrency"));
            }
        }
        w.insert(
            "concurrency".into(),
            json!(l.warmup_concurrency.unwrap_or(l.concurrency)),
        );
        if l.warmup_request_count > 0 {
            w.insert("requests".into(), json!(l.warmup_request_count));
        }
        if let Some(n) = l.warmup_sessions {
            w.insert("sessions".into(), json!(n));
        }
        if let Some(d) = l.warmup_duration_s {
            w.insert("duration".into(), json!(d));
        }
        ramp(
            &mut w,
            "concurrency_ramp",
            l.warmup_concurrency_ramp_s.or(l.concurrency_ramp_s),
        );
        ramp(
            &mut w,
            "prefill_ramp",
            l.warmup_prefill_concurrency_ramp_s
                .or(l.prefill_concurrency_ramp_s),
        );
        if rate.is_some() {
            ramp(
                &mut w,
                "rate_ramp",
                l.warmup_request_rate_ramp_s
                    .or(l.request_rate.as_ref().and_then(|r| r.ramp_s)),
            );
        }
        out.push(Value::Object(w));
    }
    let mut p = Map::new();
    p.insert("name".into(), json!("profiling"));
    p.insert("kind".into(), json!("profiling"));
    match (&l.user_centric, &l.request_rate) {
        (Some(u), _) => {
            p.insert("type".into(), json!("user_centric"));
            p.insert("rate".into(), json!(u.rate));
            p.insert("users".into(), json!(u.users));
        }
        (None, Some(r)) => {
            p.insert("type".into(), json!(pattern_name(r.pattern)));
            p.insert("rate".into(), json!(r.rate));
        }
        (None, None) => {
            p.insert("type".into(), json!("concurrency"));
        }
    }
    p.insert("requests".into(), json!(l.request_count));
    if let Some(n) = l.profiling_sessions {
        p.insert("sessions".into(), json!(n));
    }
    p.insert("concurrency".into(), json!(l.concurrency));
    if let Some(d) = l.benchmark_duration_s {
        p.insert("duration".into(), json!(d));
    }
    ramp(&mut p, "concurrency_ramp", l.concurrency_ramp_s);
    ramp(&mut p, "prefill_ramp", l.prefill_concurrency_ramp_s);
    ramp(
        &mut p,
        "rate_ramp",
        l.request_rate.as_ref().and_then(|r| r.ramp_s),
    );
    out.push(Value::Object(p));
    out
}

/// A phase's ramp as AIPerf writes it (`{"duration": seconds}`; its default linear strategy,
/// the only one inferbench runs, is left out as AIPerf leaves unset fields out).
fn ramp(phase: &mut Map<String, Value>, key: &str, seconds: Option<f64>) {
    if let Some(d) = seconds {
        phase.insert(key.into(), json!({ "duration": d }));
    }
}

fn pattern_name(k: ArrivalKind) -> &'static str {
    match k {
        ArrivalKind::Constant => "constant",
        ArrivalKind::Poisson => "poisson",
        ArrivalKind::Gamma => "gamma",
    }
}
