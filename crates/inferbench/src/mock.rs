//! `inferbench mock-server`: the simulated server, standalone, until Ctrl-C.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use inferbench_core::plan::TokenizerSpec;
use inferbench_sim::{ReasoningField, Serving, SimConfig, SimServer};
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
        serving: serving(a)?,
    };
    cfg.validate()
        .map_err(|e| Failure::input(format!("mock-server: {e}")))?;
    let addr = listen_addr(&a.host, a.port).map_err(Failure::input)?;
    let tls = sim_tls(a)?;
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
        let server = SimServer::start_tls(cfg, addr, tls.as_ref())
            .await
            .map_err(|e| Failure::run(format!("mock-server: cannot listen on {addr}: {e}")))?;
        eprintln!(
            "inferbench mock-server: listening on {}://{} (ttft {:?}, itl {:?}, tokenizer {}; /metrics, /dcgm/metrics); Ctrl-C stops",
            if tls.is_some() { "https" } else { "http" },
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

/// `--host`: an IPv4 or IPv6 address (`::1` or `[::1]`), or `localhost` (127.0.0.1). The
/// address and port were joined as text, so `::1` was "invalid socket address syntax".
fn listen_addr(host: &str, port: u16) -> Result<SocketAddr, String> {
    let h = host.trim();
    let bare = h
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .unwrap_or(h);
    let ip: std::net::IpAddr = if bare.eq_ignore_ascii_case("localhost") {
        std::net::Ipv4Addr::LOCALHOST.into()
    } else {
        bare.parse().map_err(|_| {
            format!("--host {host}: not an IP address (e.g. 127.0.0.1, 0.0.0.0, ::1) or localhost")
        })?
    };
    Ok(SocketAddr::new(ip, port))
}

/// `--tls-cert`, `--tls-key`, `--tls-client-ca`: read and checked here, so that a bad file is
/// named before the server starts.
fn sim_tls(a: &MockServerArgs) -> Result<Option<inferbench_sim::SimTls>, Failure> {
    let read = |flag: &str, p: &str| {
        std::fs::read(p).map_err(|e| Failure::input(format!("{flag} {p}: cannot read: {e}")))
    };
    let (Some(cert), Some(key)) = (&a.tls_cert, &a.tls_key) else {
        return Ok(None);
    };
    let tls = inferbench_sim::SimTls {
        cert_pem: read("--tls-cert", cert)?,
        key_pem: read("--tls-key", key)?,
        client_ca_pem: match &a.tls_client_ca {
            Some(p) => Some(read("--tls-client-ca", p)?),
            None => None,
        },
    };
    tls.server_config()
        .map_err(|e| Failure::input(format!("--tls-cert {cert} / --tls-key {key}: {e}")))?;
    Ok(Some(tls))
}

/// `--max-running`, `--decode-tokens-per-s`, `--prefill-us-per-token`,
/// `--metrics-reset-after`, `--gpus`: each checked here so the error names its flag.
fn serving(a: &MockServerArgs) -> Result<Serving, Failure> {
    let bad = |m: String| Err(Failure::input(m));
    if a.max_running == Some(0) {
        return bad("--max-running 0: at least 1".into());
    }
    if let Some(r) = a.decode_tokens_per_s
        && !(r.is_finite() && r > 0.0)
    {
        return bad(format!("--decode-tokens-per-s {r}: a positive number"));
    }
    let p = a.prefill_us_per_token;
    if !(p.is_finite() && (0.0..=1e6).contains(&p)) {
        return bad(format!("--prefill-us-per-token {p}: between 0 and 1000000"));
    }
    let reset = match a.metrics_reset_after {
        None => None,
        Some(t) => match Duration::try_from_secs_f64(t) {
            Ok(d) if t > 0.0 => Some(d),
            _ => return bad(format!("--metrics-reset-after {t}: positive seconds")),
        },
    };
    if !(1..=64).contains(&a.gpus) {
        return bad(format!("--gpus {}: between 1 and 64", a.gpus));
    }
    Ok(Serving {
        max_running: a.max_running,
        decode_tokens_per_s: a.decode_tokens_per_s,
        prefill_us_per_token: p,
        metrics_reset_after: reset,
        gpus: a.gpus,
        faults: a
            .fault
            .iter()
            .map(|f| {
                inferbench_sim::parse_fault(f).map_err(|e| Failure::input(format!("--fault {e}")))
            })
            .collect::<Result<_, _>>()?,
        close_after_response: a.close_after_response,
        coalesce: a.coalesce,
        ..Serving::default()
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

#[cfg(test)]
mod tests {
    use super::listen_addr;

    #[test]
    fn hosts_are_addresses_of_either_family_or_localhost() {
        assert_eq!(
            listen_addr("127.0.0.1", 80).unwrap().to_string(),
            "127.0.0.1:80"
        );
        assert_eq!(listen_addr("::1", 8000).unwrap().to_string(), "[::1]:8000");
        assert_eq!(
            listen_addr("[::1]", 8000).unwrap().to_string(),
            "[::1]:8000"
        );
        assert_eq!(
            listen_addr("localhost", 0).unwrap().to_string(),
            "127.0.0.1:0"
        );
        assert_eq!(
            listen_addr("example.com", 1),
            Err(
                "--host example.com: not an IP address (e.g. 127.0.0.1, 0.0.0.0, ::1) or localhost"
                    .into()
            )
        );
    }
}
