//! The built-in simulated server, when no `--url` is given: started on 127.0.0.1 port 0 on
//! its own runtime and threads, so that it never shares the client's event loop.

use std::sync::Arc;
use std::time::Duration;

use inferbench_core::plan::Target;
use inferbench_sim::{SimConfig, SimServer};
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
    /// of the caller, refused as input).
    pub fn start(target: &Target, model: &str, tok: &Tokenizer) -> Result<Simulated, Failure> {
        let Target::Simulated {
            ttft_ms,
            itl_ms,
            error_rate,
            answer_accuracy: _,
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
            error_rate,
            words: Arc::new(sim_words(tok)),
            ..SimConfig::default()
        };
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

    pub fn shutdown(self) {
        self.rt.block_on(self.server.shutdown());
    }
}
