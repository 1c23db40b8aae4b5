//! `inferbench chat`: read messages (one per stdin line, or `--quick`), print each reply as it
//! streams and its stats block. The turns themselves are `inferbench_run::chat`'s.
//!
//! With no `--url` the session talks to the built-in simulated server, started here on
//! 127.0.0.1 port 0 (the project's rule for every command; docs/chat.md).

use std::io::{BufRead, Write};
use std::time::Duration;

use inferbench_core::plan::{Secret, SimServing, Target, TokenizerSpec};
use inferbench_run::Failure;
use inferbench_run::chat::{
    self, ChatClient, ChatTarget, Conversation, DEFAULT_CONNECT_TIMEOUT, DEFAULT_READ_TIMEOUT,
    Delta,
};
use inferbench_run::sim::Simulated;
use inferbench_workload::Tokenizer;

use crate::cli::ChatArgs;

/// AIPerf's variables for the two waits of a turn, in seconds.
const CONNECT_TIMEOUT_VAR: &str = "AIPERF_CHAT_CONNECT_TIMEOUT";
const READ_TIMEOUT_VAR: &str = "AIPERF_CHAT_READ_TIMEOUT";

fn timeout_from_env(var: &str, default: Duration) -> Result<Duration, Failure> {
    let Ok(v) = std::env::var(var) else {
        return Ok(default);
    };
    match v.trim().parse::<f64>() {
        Ok(s) if s > 0.0 => Duration::try_from_secs_f64(s)
            .map_err(|_| Failure::input(format!("{var}={v}: too large"))),
        _ => Err(Failure::input(format!(
            "{var}={v}: a number of seconds above 0"
        ))),
    }
}

pub fn run(a: &ChatArgs) -> Result<u8, Failure> {
    let model = match (&a.model, &a.url) {
        (Some(m), _) if !m.trim().is_empty() => m.trim().to_string(),
        (_, Some(_)) => {
            return Err(Failure::input(
                "--model: required with --url (the model name the server serves)",
            ));
        }
        (_, None) => crate::cli::SIM_MODEL.to_string(),
    };
    let tok = Tokenizer::load(&TokenizerSpec::from_flag(a.tokenizer.as_deref()))
        .map_err(|e| Failure::input(format!("--tokenizer: {e}")))?;
    let connect_timeout = timeout_from_env(CONNECT_TIMEOUT_VAR, DEFAULT_CONNECT_TIMEOUT)?;
    let read_timeout = timeout_from_env(READ_TIMEOUT_VAR, DEFAULT_READ_TIMEOUT)?;
    // An empty key (an exported but empty OPENAI_API_KEY) is no key, as in AIPerf.
    let api_key = a
        .api_key
        .as_deref()
        .filter(|k| !k.is_empty())
        .map(Secret::new);
    let user_headers = crate::cli::parse_headers(&a.header).map_err(Failure::input)?;
    // `user:password@` in the URL goes out as Basic auth, as in `profile`; the URL used
    // (and quoted in errors) keeps no credentials, and the Host header gets none.
    let (given_url, url_auth) = match &a.url {
        Some(u) => {
            let (bare, auth) = crate::cli::split_url_credentials(u.trim());
            // As `profile` checks it (a host, a port that is one), with no credentials in
            // the message.
            crate::cli::normalize_url(&bare).map_err(Failure::input)?;
            (Some(bare), auth)
        }
        None => (None, None),
    };
    crate::cli::one_authorization(api_key.is_some(), url_auth.is_some(), &user_headers)
        .map_err(Failure::input)?;
    let mut all_headers = Vec::with_capacity(user_headers.len() + 1);
    if let Some(auth) = url_auth {
        all_headers.push((
            "Authorization".to_string(),
            inferbench_core::plan::HeaderValue::Secret(Secret::new(auth)),
        ));
    }
    all_headers.extend(user_headers);
    let headers = inferbench_client::configured_headers(api_key.as_ref(), &all_headers)
        .map_err(Failure::input)?;
    let tls = crate::cli::tls_plan(&a.tls).map_err(Failure::input)?;

    let sim = match &a.url {
        Some(_) => None,
        None => Some(Simulated::start(&simulated(), &model, &tok)?),
    };
    let url = match (&given_url, &sim) {
        (Some(u), _) => chat::chat_completions_url(u).map_err(Failure::input)?,
        (None, Some(s)) => chat::chat_completions_url(&s.url).map_err(Failure::run)?,
        (None, None) => unreachable!("the simulated server starts without --url"),
    };
    if url.starts_with("https://") {
        let env = std::env::var("SSL_CERT_FILE").ok();
        let plan = inferbench_client::tls::with_env_ca(&tls, env).map_err(Failure::input)?;
        inferbench_client::tls::install_plan(&plan).map_err(Failure::input)?;
    }
    if let Some(s) = &sim
        && crate::log_level::notes()
    {
        eprintln!(
            "inferbench: note: no --url: chatting with the built-in simulated server at {} (model {model})",
            s.url
        );
    }
    let client = ChatClient::new(ChatTarget {
        url,
        model,
        headers,
        connect_timeout,
        read_timeout,
    })
    .map_err(Failure::input)?;
    let conversation = Conversation::new(a.system_prompt.as_deref(), !a.no_history);
    let result = session(a, client, conversation, &tok);
    if let Some(s) = sim {
        s.shutdown();
    }
    result
}

/// The simulated server `profile` starts with no `--url`: its default pacing (TTFT 20 ms,
/// ITL 5 ms), no faults.
fn simulated() -> Target {
    Target::Simulated {
        ttft_ms: 20.0,
        itl_ms: 5.0,
        error_rate: 0.0,
        answer_accuracy: None,
        serving: SimServing::default(),
    }
}

fn session(
    a: &ChatArgs,
    mut client: ChatClient,
    mut conversation: Conversation,
    tok: &Tokenizer,
) -> Result<u8, Failure> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::run(format!("cannot start the runtime: {e}")))?;
    let turn = |client: &mut ChatClient, conversation: &mut Conversation, text: &str| {
        let messages = conversation.messages(text);
        let mut out = std::io::stdout();
        let mut print = |d: Delta<'_>| {
            let (Delta::Reasoning(s) | Delta::Content(s)) = d;
            let _ = out.write_all(s.as_bytes());
            let _ = out.flush();
        };
        let r = rt.block_on(client.turn(&messages, tok, &mut print))?;
        let mut block = String::from("\n");
        for l in chat::stats_lines(&r.stats) {
            block.push_str(&l);
            block.push('\n');
        }
        let _ = out.write_all(block.as_bytes());
        let _ = out.flush();
        conversation.remember(text, &r.reply);
        Ok::<(), String>(())
    };

    if let Some(q) = &a.quick {
        // --quick is a single request: history does not apply.
        return match turn(
            &mut client,
            &mut Conversation::new(a.system_prompt.as_deref(), false),
            q.as_str(),
        ) {
            Ok(()) => Ok(0),
            Err(e) => Err(Failure::run(format!("request failed: {e}"))),
        };
    }

    let mut stdout = std::io::stdout();
    let _ = writeln!(
        stdout,
        "Chatting with {} at {}. One message per line; Ctrl-D ends the session.",
        client.target().model,
        client.target().url
    );
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut line = String::new();
    loop {
        let _ = write!(stdout, "> ");
        let _ = stdout.flush();
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) => {
                // Ctrl-D: end the prompt's line before leaving.
                let _ = writeln!(stdout);
                break;
            }
            Ok(_) => {}
            Err(e) => return Err(Failure::run(format!("cannot read stdin: {e}"))),
        }
        let text = line.trim_end_matches(['\n', '\r']);
        // A blank line is not sent: an empty user message only draws a server error.
        if text.trim().is_empty() {
            continue;
        }
        if let Err(e) = turn(&mut client, &mut conversation, text) {
            // The session goes on: the user can retry or say something else.
            eprintln!("request failed: {e}");
        }
    }
    Ok(0)
}
