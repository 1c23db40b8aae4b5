//! The built-in simulated server, when no `--url` is given: started on 127.0.0.1 port 0 on
//! its own runtime and threads, so that it never shares the client's event loop.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use inferbench_core::plan::{SimServing, Target};
use inferbench_sim::{AnswerKey, KeyAnswer, Serving, SimConfig, SimServer};
use inferbench_workload::{Corpus, Tokenizer};

use crate::Failure;

/// The simulated server's words: each is one token under `tok`, so its output lengths are
/// exact under the run's own tokenizer.
pub fn sim_words(tok: &Tokenizer) -> Vec<String> {
    inferbench_workload::single_token_words(tok, Corpus::shakespeare(), 2048)
}

/// A running simulated server; dropped with [`Simulated::shutdown`].
pub struct Simulated {
    rt: tokio::runtime::Runtime,
    server: SimServer,
    pub url: String,
}

impl Simulated {
    /// Starts the server `target` describes (a [`Target::Simulated`]; a URL target is a bug
    /// of the caller, refused as input). A target with an answer accuracy needs the run's
    /// answers: see [`Simulated::start_answering`].
    pub fn start(target: &Target, model: &str, tok: &Tokenizer) -> Result<Simulated, Failure> {
        Simulated::start_answering(target, model, tok, &[])
    }

    /// [`Simulated::start`] for the prepared runs it serves: with `--sim-answer-accuracy`,
    /// the key is their own expected answers ([`answer_key`]).
    pub fn start_answering(
        target: &Target,
        model: &str,
        tok: &Tokenizer,
        runs: &[crate::Prepared],
    ) -> Result<Simulated, Failure> {
        let Target::Simulated {
            ttft_ms,
            itl_ms,
            error_rate,
            answer_accuracy,
            ref serving,
        } = *target
        else {
            return Err(Failure::input(
                "the simulated server was asked for with a --url",
            ));
        };
        let ms = |flag: &str, v: f64| {
            Duration::try_from_secs_f64(v / 1000.0)
                .map_err(|_| Failure::input(format!("{flag} {v}: not a duration in ms")))
        };
        let cfg = SimConfig {
            ttft: ms("--sim-ttft-ms", ttft_ms)?,
            itl: ms("--sim-itl-ms", itl_ms)?,
            model: model.to_string(),
            // A percent, as the plan and `mock-server --error-rate` hold it.
            error_rate,
            words: Arc::new(sim_words(tok)),
            answers: match answer_accuracy {
                Some(p) => Some(Arc::new(answer_key(runs, p)?)),
                None => None,
            },
            serving: sim_serving(serving)?,
            ..SimConfig::default()
        };
        // What the serving options alone cannot check (the error rate with the faults), as
        // the user's mistake, before any runtime starts.
        cfg.validate()
            .map_err(|e| Failure::input(format!("the simulated server's --sim-* options: {e}")))?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .thread_name("sim")
            .enable_all()
            .build()
            .map_err(|e| Failure::run(format!("cannot start the simulated server: {e}")))?;
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        let server = rt
            .block_on(SimServer::start(cfg, addr))
            .map_err(|e| Failure::run(format!("cannot start the simulated server: {e}")))?;
        let url = format!("http://{}", server.local_addr());
        Ok(Simulated { rt, server, url })
    }

    /// The server's Prometheus page (vLLM's names): `{url}/metrics`.
    pub fn metrics_url(&self) -> String {
        format!("{}/metrics", self.url)
    }

    /// The server's DCGM exporter page: `{url}/dcgm/metrics`.
    pub fn dcgm_url(&self) -> String {
        format!("{}/dcgm/metrics", self.url)
    }

    pub fn shutdown(self) {
        self.rt.block_on(self.server.shutdown());
    }
}

/// The plan's serving options as the server's; the plan's flags were checked when it was
/// made, this refuses what a hand-written plan could still hold.
pub fn sim_serving(s: &SimServing) -> Result<Serving, Failure> {
    let reset = match s.metrics_reset_after_s {
        None => None,
        Some(t) => match Duration::try_from_secs_f64(t) {
            Ok(d) if t > 0.0 => Some(d),
            _ => {
                return Err(Failure::input(format!(
                    "--sim-metrics-reset-after {t}: positive seconds"
                )));
            }
        },
    };
    let out = Serving {
        max_running: s.max_running,
        decode_tokens_per_s: s.decode_tokens_per_s,
        prefill_us_per_token: s.prefill_us_per_token.unwrap_or(0.0),
        metrics_reset_after: reset,
        gpus: s.gpus.unwrap_or(1),
        faults: s
            .faults
            .iter()
            .map(|f| inferbench_sim::parse_fault(f))
            .collect::<Result<_, _>>()
            .map_err(|e| Failure::input(format!("--sim-fault {e}")))?,
        coalesce: s.coalesce,
        ..Serving::default()
    };
    let probe = SimConfig {
        serving: out.clone(),
        ..SimConfig::default()
    };
    probe
        .validate()
        .map_err(|e| Failure::input(format!("the simulated server's --sim-* options: {e}")))?;
    Ok(out)
}

/// The simulated server's key from the runs' own expected answers: each question (the text
/// of its payload's last user message) with its right and wrong answer, drawn with the first
/// run's seed. Every question must be readable and say one thing.
pub fn answer_key(runs: &[crate::Prepared], accuracy: f64) -> Result<AnswerKey, Failure> {
    if !(0.0..=1.0).contains(&accuracy) {
        return Err(Failure::input(format!(
            "--sim-answer-accuracy {accuracy}: a fraction between 0 and 1"
        )));
    }
    let mut entries: HashMap<String, KeyAnswer> = HashMap::new();
    for p in runs {
        let Some(set) = &p.answers else { continue };
        let file = p
            .plan
            .dataset
            .input_file
            .as_deref()
            .unwrap_or("the dataset");
        for (i, a) in set.iter() {
            let payload = usize::try_from(i)
                .ok()
                .and_then(|i| p.workload.payloads.get(i));
            let Some(payload) = payload else { continue };
            let at = format!(
                "--sim-answer-accuracy: {file}: conversation {} turn {}",
                payload.conversation_id, payload.turn_index
            );
            let body: serde_json::Value = serde_json::from_str(&payload.body)
                .map_err(|e| Failure::input(format!("{at}: the body is not JSON: {e}")))?;
            let question = inferbench_sim::question_text(&body).ok_or_else(|| {
                Failure::input(format!(
                    "{at}: the request has no question text the simulated server can read"
                ))
            })?;
            let answer = KeyAnswer {
                right: a
                    .simulated(true)
                    .map_err(|m| Failure::input(format!("{at}: {m}")))?,
                wrong: a
                    .simulated(false)
                    .map_err(|m| Failure::input(format!("{at}: {m}")))?,
            };
            match entries.get(&question) {
                Some(prev) if *prev != answer => {
                    return Err(Failure::input(format!(
                        "{at}: the same question has another answer elsewhere in the dataset"
                    )));
                }
                _ => {
                    entries.insert(question, answer);
                }
            }
        }
    }
    if entries.is_empty() {
        return Err(Failure::input(
            "--sim-answer-accuracy: the dataset has no expected answers (give its rows an \"answer\", docs/correctness.md)",
        ));
    }
    Ok(AnswerKey {
        source: "the run's expected answers".into(),
        accuracy,
        seed: runs.first().map_or(0, |p| p.seed),
        entries,
        // The run's own answers: a question without one is answered with filler words.
        refuse_unknown: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plans_serving_options_reach_the_server() {
        let s = SimServing {
            max_running: Some(2),
            decode_tokens_per_s: Some(50.0),
            prefill_us_per_token: Some(3.5),
            metrics_reset_after_s: Some(1.5),
            gpus: Some(4),
            faults: vec!["stall=12.5".into()],
            coalesce: true,
        };
        let out = sim_serving(&s).unwrap();
        assert_eq!(out.faults, vec![(inferbench_sim::FaultKind::Stall, 12.5)]);
        assert!(out.coalesce);
        assert_eq!(out.max_running, Some(2));
        assert_eq!(out.decode_tokens_per_s, Some(50.0));
        assert_eq!(out.prefill_us_per_token, 3.5);
        assert_eq!(out.metrics_reset_after, Some(Duration::from_millis(1500)));
        assert_eq!(out.gpus, 4);
        // Nothing set: the server's defaults, which change nothing.
        assert_eq!(
            sim_serving(&SimServing::default()).unwrap(),
            Serving::default()
        );
        let bad = SimServing {
            gpus: Some(0),
            ..SimServing::default()
        };
        assert!(sim_serving(&bad).unwrap_err().to_string().contains("gpus"));
        let bad = SimServing {
            metrics_reset_after_s: Some(-1.0),
            ..SimServing::default()
        };
        assert!(
            sim_serving(&bad)
                .unwrap_err()
                .to_string()
                .contains("--sim-metrics-reset-after -1")
        );
    }
}
