//! `inferbench inspect`: send one request (or `--count N`) of the workload, one after another,
//! and show how each response was read, event by event, with the warnings a user must see
//! before trusting a run or a crosswalk. Nothing is written to disk.

use std::sync::Arc;
use std::time::Duration;

use inferbench_client::{Clock, Engine, EngineConfig, EngineEvent, StopSignal};
use inferbench_core::record::Record;
use inferbench_workload::Tokenizer;

use inferbench_core::plan::Target;
use inferbench_run::Failure;
use inferbench_run::prepare::{Counter, isl_counter};
use inferbench_run::sim::Simulated;

use crate::cli::InspectArgs;

pub fn run(a: &InspectArgs, argv: &[String]) -> Result<u8, Failure> {
    if a.count == 0 || a.count > 1000 {
        return Err(Failure::input(format!(
            "--count {}: must be 1 to 1000",
            a.count
        )));
    }
    // Inspect writes no manifest: a declaration would be accepted and lost.
    if !a.profile.declare.is_empty() || a.profile.identity.is_some() {
        return Err(Failure::input(
            "--declare and --identity are for profile: inspect writes no manifest",
        ));
    }
    let cells = crate::cli::cells(&a.profile).map_err(Failure::input)?;
    if cells.len() > 1 {
        return Err(Failure::input(
            "inspect takes one value per flag: a comma list (a sweep) is for profile",
        ));
    }
    let plan =
        crate::cli::build_plan(&a.profile, argv, &cells[0].values).map_err(Failure::input)?;
    let tok = Arc::new(
        Tokenizer::load_for(&plan.tokenizer, plan.dataset.apply_chat_template)
            .map_err(|e| Failure::input(format!("--tokenizer: {e}")))?,
    );
    let mut prepared = inferbench_run::prepare(&plan, tok.clone())?;
    let sim = match plan.target {
        Target::Simulated { .. } => {
            let s = Simulated::start_answering(
                &plan.target,
                &plan.models[0],
                &tok,
                std::slice::from_ref(&prepared),
            )?;
            prepared.retarget(&s.url)?;
            Some(s)
        }
        _ => None,
    };
    let result = inspect(a, &prepared);
    if let Some(s) = sim {
        s.shutdown();
    }
    result
}

fn inspect(a: &InspectArgs, prepared: &inferbench_run::Prepared) -> Result<u8, Failure> {
    let plan = &prepared.plan;
    let tok = prepared.tokenizer.clone();
    // The first conversations in dataset order: inspect shows what the workload holds, in
    // the order a user wrote it.
    // Roots only: child sessions start from their parents.
    let roots = prepared.roots.clone();
    let mut next = 0usize;
    let order = Box::new(move || {
        let c = roots[next % roots.len()];
        next += 1;
        c
    });
    let mut cfg = prepared.engine.clone();
    cfg.phases = EngineConfig::burst_phases(1, 0, a.count as u64);
    cfg.keep_raw = true;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::run(format!("cannot start the runtime: {e}")))?;
    let clock = Clock::start();
    let models = rt.block_on(inferbench_client::probe::fetch_models_with(
        clock,
        &plan.url,
        &prepared.engine.headers,
        Duration::from_secs(10),
    ));
    if let Err(e) = models {
        return Err(Failure::run(format!("--url: {e}")));
    }
    let payloads = prepared.payloads.clone();
    let bodies: Vec<bytes::Bytes> = payloads.iter().map(|p| p.body.clone()).collect();
    let engine = Engine::new(cfg, clock, payloads, order, None, StopSignal::new());
    let isl = isl_counter(plan, tok.clone());
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    rt.block_on(engine.run(tx));
    let mut records: Vec<(Record, Option<bytes::Bytes>)> = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        if let EngineEvent::Record(mut r, sent) = ev {
            if let Some(b) = &sent {
                r.tokens.input = isl(b);
            }
            records.push((*r, sent));
        }
    }
    records.sort_by_key(|(r, _)| r.id);
    let count = |t: &str| tok.count(t) as u64;
    let tags = plan.endpoint.reasoning_tags.is_some();
    let mut failed = false;
    for (rec, sent) in &mut records {
        inferbench_client::engine::count_tokens(&Counter(tok.clone()), rec, &mut String::new());
        // The body as sent: with the conversation's history when it had one.
        let body = match sent {
            Some(b) => String::from_utf8_lossy(b).to_string(),
            None => bodies
                .get(rec.payload_index as usize)
                .map(|b| String::from_utf8_lossy(b).to_string())
                .unwrap_or_default(),
        };
        let i = inferbench_metrics::adapter::inspect(rec, &count, tags);
        failed |= rec.error.is_some();
        print!(
            "{}",
            render(rec, &body, &i, a.max_events, plan.endpoint_type.as_str())
        );
    }
    Ok(if failed { 1 } else { 0 })
}

fn clip(s: &str, n: usize) -> String {
    let mut out: String = s.chars().take(n).collect();
    if s.chars().count() > n {
        out.push('…');
    }
    out.replace('\n', "\\n")
}

/// The text `inspect` prints for one request.
fn render(
    rec: &Record,
    sent_body: &str,
    i: &inferbench_metrics::adapter::Inspection,
    max_events: usize,
    endpoint: &str,
) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "== request {} ({} turn {}, endpoint {endpoint}, {}) ==",
        rec.id,
        rec.conversation_id,
        rec.turn_index,
        if rec.streaming {
            "streaming"
        } else {
            "not streaming"
        }
    );
    let pretty = serde_json::from_str::<serde_json::Value>(sent_body)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| sent_body.to_string());
    let _ = writeln!(
        o,
        "-- request body ({} bytes sent{}) --\n{}",
        rec.request_bytes,
        if rec.turn_index > 0 {
            "; a later turn: the conversation so far is in front of its own messages when it has history"
        } else {
            ""
        },
        clip(&pretty, 4000).replace("\\n", "\n")
    );
    let _ = writeln!(
        o,
        "-- response: HTTP {} , {} frames, {} events, {:.3} ms --",
        rec.status.map_or("-".to_string(), |s| s.to_string()),
        rec.frames.len(),
        rec.events.len(),
        rec.end_ns.saturating_sub(rec.start_ns) as f64 / 1e6
    );
    let _ = writeln!(o, "-- raw stream (first events, as received) --");
    for r in i.rows.iter().take(max_events.min(8)) {
        if let Some(raw) = &r.raw {
            let _ = writeln!(o, "  [{:>3}] {}", r.index, clip(raw, 200));
        }
    }
    let _ = writeln!(o, "-- events --");
    let _ = writeln!(
        o,
        "  {:>4} {:>10} {:>5} {:<6} {:>4} {:>4}  text",
        "#", "t (ms)", "frame", "kind", "out", "rsn"
    );
    for r in i.rows.iter().take(max_events) {
        let mut text = String::new();
        if let Some(c) = &r.content {
            let _ = write!(text, "content={:?} ", clip(c, 40));
        }
        if let Some(c) = &r.reasoning {
            let _ = write!(text, "reasoning={:?} ", clip(c, 40));
        }
        if let Some(c) = &r.tool {
            let _ = write!(text, "tool={:?} ", clip(c, 40));
        }
        if let Some(u) = &r.usage {
            let _ = write!(text, "usage={} ", clip(&u.to_string(), 120));
        }
        if !r.marks.is_empty() {
            let _ = write!(text, "<= {}", r.marks.join(", "));
        }
        let _ = writeln!(
            o,
            "  {:>4} {:>10.3} {:>5} {:<6} {:>4} {:>4}  {}",
            r.index, r.t_ms, r.frame, r.kind, r.output_tokens, r.reasoning_tokens, text
        );
    }
    if i.rows.len() > max_events {
        let _ = writeln!(
            o,
            "  … {} more events (--max-events)",
            i.rows.len() - max_events
        );
    }
    let _ = writeln!(o, "-- token counts --");
    let _ = writeln!(
        o,
        "  client: input {}, output {}, reasoning {}; requested output {}",
        i.client_input_tokens
            .map_or("-".to_string(), |v| v.to_string()),
        i.client_output_tokens,
        i.client_reasoning_tokens,
        i.requested_output_tokens
            .map_or("-".to_string(), |v| v.to_string())
    );
    match &i.server {
        Some(s) => {
            let f = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
            let _ = writeln!(
                o,
                "  server usage: prompt {}, completion {}, reasoning {}",
                f(s.prompt_tokens),
                f(s.completion_tokens),
                f(s.reasoning_tokens)
            );
        }
        None => {
            let _ = writeln!(o, "  server usage: none");
        }
    }
    if let Some(e) = &rec.error {
        let _ = writeln!(
            o,
            "-- error: {} {}: {}",
            e.kind.as_str(),
            e.error_type,
            e.message
        );
    }
    for n in &i.notes {
        let _ = writeln!(o, "note: {n}");
    }
    for w in &i.warnings {
        let _ = writeln!(o, "WARNING: {w}");
    }
    if i.warnings.is_empty() {
        let _ = writeln!(o, "no warnings");
    }
    o.push('\n');
    o
}
