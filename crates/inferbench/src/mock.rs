//! `inferbench mock-server`: the simulated server, standalone, until Ctrl-C.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use inferbench_core::plan::TokenizerSpec;
use inferbench_sim::{ReasoningField, SimConfig, SimServer};
use inferbench_workload::Tokenizer;

use crate::Failure;
use crate::cli::MockServerArgs;

fn ms(name: &str, v: f64) -> Result<Duration, Failure> {
    crate::cli::millis(name, v).map_err(Failure::input)
}

pub fn run(a: &MockServerArgs) -> Result<u8, Failure> {
    let spec = TokenizerSpec::from_flag(a.tokenizer.as_deref());
    let tok = Tokenizer::load(&spec).map_err(|e| Failure::input(format!("--tokenizer: {e}")))?;
    let reasoning_field = ReasoningField::parse(&a.reasoning_field).ok_or_else(|| {
        Failure::input(format!(
            "--reasoning-field {:?}: expected reasoning_content, reasoning or think",
            a.reasoning_field
        ))
    })?;
    let (ttft, itl) = if a.fast {
        (Duration::ZERO, Duration::ZERO)
    } else {
        (ms("--ttft-ms", a.ttft_ms)?, ms("--itl-ms", a.itl_ms)?)
    };
    let cfg = SimConfig {
        ttft,
        itl,
        tokens_per_chunk: a.tokens_per_chunk,
        role_first_chunk: a.role_first_chunk,
        reasoning_tokens: a.reasoning_tokens,
        reasoning_field,
        error_rate: a.error_rate,
        cut_rate: a.cut_rate,
        seed: a.random_seed,
        model: a.model.clone(),
        default_output_tokens: a.default_output_tokens,
        words: Arc::new(inferbench_run::sim::sim_words(&tok)),
        answers: answer_key(a)?.map(Arc::new),
    };
    cfg.validate()
        .map_err(|e| Failure::input(format!("mock-server: {e}")))?;
    let addr: SocketAddr = format!("{}:{}", a.host, a.port)
        .parse()
        .map_err(|e| Failure::input(format!("--host {} --port {}: {e}", a.host, a.port)))?;
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    if let Some(w) = a.workers {
        if w == 0 {
            return Err(Failure::input("--workers 0: must be ≥ 1"));
        }
        rt.worker_threads(w);
    }
    let rt = rt
        .enable_all()
        .build()
        .map_err(|e| Failure::run(format!("cannot start the runtime: {e}")))?;
    rt.block_on(async move {
        let server = SimServer::start(cfg, addr)
            .await
            .map_err(|e| Failure::run(format!("mock-server: cannot listen on {addr}: {e}")))?;
        eprintln!(
            "inferbench mock-server: listening on http://{} (ttft {:?}, itl {:?}, tokenizer {}); Ctrl-C stops",
            server.local_addr(),
            ttft,
            itl,
            tok.name()
        );
        let _ = tokio::signal::ctrl_c().await;
        let stats = server.stats();
        server.shutdown().await;
        eprintln!(
            "inferbench mock-server: stopped; {}",
            serde_json::to_string(&stats).unwrap_or_default()
        );
        Ok(0)
    })
}

/// `--answer-key FILE --answer-accuracy P`: the key's questions with their right and wrong
/// answers; a row that is not a question with an answer is a one-line error naming the file
/// and line.
fn answer_key(a: &MockServerArgs) -> Result<Option<inferbench_sim::AnswerKey>, Failure> {
    let Some(path) = &a.answer_key else {
        if a.answer_accuracy.is_some() {
            return Err(Failure::input(
                "--answer-accuracy needs --answer-key FILE (the questions and their answers)",
            ));
        }
        return Ok(None);
    };
    let accuracy = a.answer_accuracy.unwrap_or(1.0);
    if !(0.0..=1.0).contains(&accuracy) {
        return Err(Failure::input(format!(
            "--answer-accuracy {accuracy}: a fraction between 0 and 1"
        )));
    }
    let questions = inferbench_workload::dataset::read_answer_key(std::path::Path::new(path))
        .map_err(|e| Failure::input(format!("--answer-key: {e}")))?;
    let mut entries = std::collections::HashMap::new();
    for q in questions {
        let at = |m: String| Failure::input(format!("--answer-key: {path}:{}: {m}", q.line));
        let answer = inferbench_sim::KeyAnswer {
            right: q.answer.simulated(true).map_err(at)?,
            wrong: q.answer.simulated(false).map_err(at)?,
        };
        if let Some(prev) = entries.get(&q.question)
            && *prev != answer
        {
            return Err(at(
                "the same question has another answer on an earlier line".into(),
            ));
        }
        entries.insert(q.question, answer);
    }
    Ok(Some(inferbench_sim::AnswerKey {
        source: path.clone(),
        accuracy,
        seed: a.random_seed,
        entries,
        refuse_unknown: true,
    }))
}
