//! Listener, connection handling and routing.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::arrival::{ArrivalCell, ArrivalStream};

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;

use crate::api::{self, Req};
use crate::body::{SimBody, SimStream, StreamParams};
use crate::config::{ReasoningField, SimConfig};
use crate::faults::{self, ConnCtl};
use crate::metrics::{Gauges, Registry};
use crate::pacing::Timer;
use crate::render::{self, Shape, Words};
use crate::request::{Endpoint, FaultPlan, InferRequest, asked, body_hash, output_len};
use crate::sched::{Job, Scheduler};
use crate::stats::{Counters, SimStats, bump};

/// Largest request body accepted.
const MAX_BODY: usize = 64 << 20;
/// How long shutdown lets in-flight responses finish before dropping their connections.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
/// Listen backlog: load generators open hundreds of connections at once.
const BACKLOG: u32 = 4096;

const SERVER_ERROR: &[u8] =
    br#"{"error":{"message":"simulated failure","type":"server_error","code":500}}"#;

/// State shared by every connection.
pub(crate) struct Shared {
    pub(crate) cfg: SimConfig,
    pub(crate) words: Words,
    pub(crate) counters: Counters,
    pub(crate) sched: Scheduler,
    pub(crate) registry: Registry,
    pub(crate) timer: Timer,
    hostname: String,
    faults: FaultPlan,
    fault_chain: faults::FaultChain,
    /// `cfg.model` as a quoted JSON string, for responses to requests naming no model.
    model_json: Vec<u8>,
    models_body: Bytes,
}

impl Shared {
    fn new(cfg: SimConfig) -> Shared {
        let mut model_json = Vec::new();
        render::push_json_str(&mut model_json, &cfg.model);
        let mut models = Vec::new();
        models.extend_from_slice(br#"{"object":"list","data":[{"id":"#);
        models.extend_from_slice(&model_json);
        models.extend_from_slice(br#","object":"model","created":0,"owned_by":"inferbench"}]}"#);
        let plan = FaultPlan::new(cfg.error_rate, cfg.cut_rate, cfg.seed);
        Shared {
            sched: Scheduler::new(&cfg.serving),
            registry: Registry::new(unix_now()),
            timer: Timer::new(),
            hostname: crate::dcgm::hostname(),
            words: Words::new(&cfg.words),
            fault_chain: faults::FaultChain::new(&cfg.serving.faults, cfg.seed, plan.error_share()),
            faults: plan,
            counters: Counters::default(),
            model_json,
            models_body: Bytes::from(models),
            cfg,
        }
    }

    fn stats(&self) -> SimStats {
        self.counters.snapshot(self.cfg.ttft, self.cfg.itl)
    }

    /// The `/metrics` page, rendered now.
    pub(crate) fn metrics_text(&self) -> String {
        let g = Gauges {
            running: self.sched.running(),
            waiting: self.sched.waiting(),
            kv_usage: self.sched.kv_usage(),
        };
        crate::metrics::render(&self.registry, &g, &self.cfg.model)
    }

    /// The `/dcgm/metrics` page, rendered now.
    pub(crate) fn dcgm_text(&self) -> String {
        let (running, energy_mj) = self.sched.energy_mj();
        let load = crate::dcgm::GpuLoad {
            running,
            max_running: self.cfg.serving.max_running,
            kv_usage: self.sched.kv_usage(),
            energy_mj,
        };
        crate::dcgm::render(self.cfg.serving.gpus, &self.hostname, &load)
    }
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// A running simulated server. Dropping it stops the server in the background; call
/// [`SimServer::shutdown`] to wait for that.
pub struct SimServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
    fault: Option<JoinHandle<()>>,
}

impl SimServer {
    /// Validates `cfg`, binds `addr` and serves on the current Tokio runtime (which needs IO
    /// and time enabled). Port 0 picks a free port; see [`SimServer::local_addr`].
    pub async fn start(cfg: SimConfig, addr: SocketAddr) -> io::Result<SimServer> {
        SimServer::start_tls(cfg, addr, None).await
    }

    /// [`SimServer::start`], serving HTTPS when `tls` is given (docs/tls.md).
    pub async fn start_tls(
        cfg: SimConfig,
        addr: SocketAddr,
        tls: Option<&crate::tls::SimTls>,
    ) -> io::Result<SimServer> {
        let tls = match tls {
            Some(t) => Some(tokio_rustls::TlsAcceptor::from(t.server_config()?)),
            None => None,
        };
        cfg.validate()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let listener = bind(addr)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::new(cfg));
        let (stop, stop_rx) = watch::channel(false);
        let task = tokio::spawn(accept_loop(listener, shared.clone(), stop_rx, tls));
        // The counter-reset fault: once, at its time after the server emitted its first token
        // (so that it falls inside a run however long the client's set-up took), holding no
        // server alive.
        let fault = shared.cfg.serving.metrics_reset_after.map(|after| {
            let weak = Arc::downgrade(&shared);
            tokio::spawn(async move {
                loop {
                    match weak.upgrade() {
                        Some(s)
                            if s.registry
                                .generation_tokens
                                .load(std::sync::atomic::Ordering::Relaxed)
                                > 0 =>
                        {
                            break;
                        }
                        Some(_) => {}
                        None => return,
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
                tokio::time::sleep(after).await;
                if let Some(s) = weak.upgrade() {
                    s.registry.restart(unix_now());
                }
            })
        });
        Ok(SimServer {
            addr,
            shared,
            stop,
            task,
            fault,
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Counters since start or the last reset.
    pub fn stats(&self) -> SimStats {
        self.shared.stats()
    }

    /// Zeroes the counters and restarts the fault sequences (as `POST /sim/reset`).
    pub fn reset_stats(&self) {
        self.shared.counters.reset();
    }

    /// Stops accepting, lets in-flight responses finish (up to a short grace period), then
    /// returns.
    pub async fn shutdown(self) {
        if let Some(f) = &self.fault {
            f.abort();
        }
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }

    /// Serves until `signal` completes (e.g. `tokio::signal::ctrl_c()`), shuts down and
    /// returns the final counters.
    pub async fn run_until(self, signal: impl Future<Output = ()>) -> SimStats {
        signal.await;
        let shared = self.shared.clone();
        self.shutdown().await;
        shared.stats()
    }
}

/// Starts a server on `addr` and serves until `signal` completes; returns the final counters.
pub async fn serve_until(
    cfg: SimConfig,
    addr: SocketAddr,
    signal: impl Future<Output = ()>,
) -> io::Result<SimStats> {
    let server = SimServer::start(cfg, addr).await?;
    Ok(server.run_until(signal).await)
}

fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    // Lets a restarted mock-server rebind while old connections sit in TIME_WAIT.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
    tls: Option<tokio_rustls::TlsAcceptor>,
) {
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            biased;
            // A send or the handle being dropped both mean stop.
            _ = stop.changed() => break,
            // Reap finished connections before accepting more, so the set stays small.
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
            res = listener.accept() => match res {
                Ok((stream, _)) => match &tls {
                    None => {
                        // Events must leave as soon as they are written, not wait for Nagle.
                        let _ = stream.set_nodelay(true);
                        let fd = raw_fd(&stream);
                        let arrival = Arc::new(ArrivalCell::default());
                        let stream = ArrivalStream::new(stream, arrival.clone());
                        conns.spawn(serve_connection(stream, fd, arrival, shared.clone(), stop.clone()));
                    }
                    Some(acc) => {
                        conns.spawn(crate::tls::serve_tls(acc.clone(), stream, shared.clone(), stop.clone()));
                    }
                },
                // Out of file descriptors and the like: back off instead of spinning.
                Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
            },
        }
    }
    drop(listener);
    let drain = async { while conns.join_next().await.is_some() {} };
    if tokio::time::timeout(SHUTDOWN_GRACE, drain).await.is_err() {
        conns.shutdown().await;
    }
}

/// Serves HTTP/1.1 on a plain or TLS stream (`TCP_NODELAY` already set); `fd` is the TCP
/// socket under it, for the faults that act on the socket (reset, close after response);
/// `arrival` is where the stream records when its reads' bytes arrived (`crate::arrival`).
pub(crate) async fn serve_connection<S>(
    stream: S,
    fd: i32,
    arrival: Arc<ArrivalCell>,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let ctl = ConnCtl::new(fd, arrival);
    let close_after = shared.cfg.serving.close_after_response;
    let svc_ctl = ctl.clone();
    let svc = service_fn(move |req| handle(shared.clone(), req, svc_ctl.clone()));
    let mut conn = pin!(
        http1::Builder::new()
            .keep_alive(true)
            .serve_connection(TokioIo::new(stream), svc)
    );
    tokio::select! {
        biased;
        _ = conn.as_mut() => {}
        // Close-after-response: the response's last bytes are out; close, not waiting for
        // another request.
        _ = ctl.notify.notified(), if close_after => {
            conn.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(SHUTDOWN_GRACE, conn.as_mut()).await;
        }
        _ = stop.changed() => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
}

async fn handle(
    shared: Arc<Shared>,
    req: Request<Incoming>,
    ctl: Arc<ConnCtl>,
) -> Result<Response<SimBody>, Infallible> {
    // Arrival: when the request's bytes reached the socket (the kernel's stamp of the read
    // that completed its head), else now, the head just parsed. All deadlines count from here.
    let arrival = ctl
        .arrival
        .get()
        .map_or_else(Instant::now, Instant::from_std);
    let method = req.method().clone();
    if method == Method::POST
        && let Some(endpoint) = route(req.uri().path())
    {
        let close_after = shared.cfg.serving.close_after_response;
        let resp = infer(shared, req, endpoint, arrival, &ctl).await;
        return Ok(faults::apply(resp, None, &ctl, close_after));
    }
    let resp = match req.uri().path() {
        "/v1/models" if method == Method::GET => json(StatusCode::OK, shared.models_body.clone()),
        "/health" if method == Method::GET => {
            json(StatusCode::OK, Bytes::from_static(br#"{"status":"ok"}"#))
        }
        "/sim/stats" if method == Method::GET => {
            let body = serde_json::to_vec(&shared.stats()).unwrap_or_default();
            json(StatusCode::OK, body)
        }
        "/metrics" if method == Method::GET => prometheus(shared.metrics_text()),
        "/dcgm/metrics" if method == Method::GET => prometheus(shared.dcgm_text()),
        // vLLM's route (and SGLang's name for it): what `--reset-kv-cache` posts. The
        // simulated server holds no cache; the call is counted so that a test sees it.
        "/reset_prefix_cache" | "/flush_cache" if method == Method::POST => {
            crate::stats::bump(&shared.counters.prefix_cache_resets);
            json(StatusCode::OK, Bytes::from_static(br#"{"status":"ok"}"#))
        }
        // vLLM's and SGLang's torch-profiler routes: what `--server-profiler` posts around
        // the profiling phase. Counted, with the requests received so far (their order).
        "/start_profile" | "/stop_profile" if method == Method::POST => {
            let c = &shared.counters;
            let n = c.requests.load(std::sync::atomic::Ordering::Relaxed);
            let (calls, at) = if req.uri().path() == "/start_profile" {
                (&c.profiler_starts, &c.requests_at_profiler_start)
            } else {
                (&c.profiler_stops, &c.requests_at_profiler_stop)
            };
            at.store(n, std::sync::atomic::Ordering::Relaxed);
            crate::stats::bump(calls);
            json(StatusCode::OK, Bytes::from_static(br#"{"status":"ok"}"#))
        }
        "/sim/reset" if method == Method::POST => {
            shared.counters.reset();
            json(StatusCode::OK, Bytes::from_static(br#"{"status":"reset"}"#))
        }
        p if route(p).is_some() => error(
            StatusCode::METHOD_NOT_ALLOWED,
            "invalid_request_error",
            &format!("method {method} not allowed on {p}"),
        ),
        "/v1/models" | "/health" | "/sim/stats" | "/sim/reset" | "/metrics" | "/dcgm/metrics" => {
            error(
                StatusCode::METHOD_NOT_ALLOWED,
                "invalid_request_error",
                &format!("method {method} not allowed on {}", req.uri().path()),
            )
        }
        path => error(
            StatusCode::NOT_FOUND,
            "not_found_error",
            &format!("no route for {method} {path}"),
        ),
    };
    Ok(resp)
}

/// The inference route at `path`, at AIPerf's default path of each endpoint type.
fn route(path: &str) -> Option<Endpoint> {
    Some(match path {
        "/v1/chat/completions" => Endpoint::Chat,
        "/v1/completions" => Endpoint::Completions,
        "/v1/responses" => Endpoint::Responses,
        "/v1/messages" => Endpoint::Messages,
        "/v1/embeddings" => Endpoint::Embeddings,
        "/v1/ranking" => Endpoint::NimRankings,
        "/rerank" => Endpoint::TeiRankings,
        "/v2/rerank" => Endpoint::CohereRankings,
        "/generate" => Endpoint::Generate { stream: false },
        "/generate_stream" => Endpoint::Generate { stream: true },
        "/v1/infer" => Endpoint::ImageRetrieval,
        "/v1/audio/transcriptions" => Endpoint::Transcription,
        "/v1/images/generations" => Endpoint::Images,
        _ => return None,
    })
}

async fn infer(
    shared: Arc<Shared>,
    req: Request<Incoming>,
    endpoint: Endpoint,
    arrival: Instant,
    ctl: &Arc<ConnCtl>,
) -> Response<SimBody> {
    let content_type = req
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let bytes = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(c) => c.to_bytes(),
        Err(e) => {
            bump(&shared.counters.bad_requests);
            return if e.is::<http_body_util::LengthLimitError>() {
                error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "invalid_request_error",
                    &format!("request body exceeds {MAX_BODY} bytes"),
                )
            } else {
                error(
                    StatusCode::BAD_REQUEST,
                    "invalid_request_error",
                    &format!("could not read the request body: {e}"),
                )
            };
        }
    };
    let parsed: InferRequest<'_> = if endpoint == Endpoint::Transcription {
        match crate::media::form_request(&bytes, content_type.as_deref()) {
            Ok(r) => r,
            Err(msg) => return bad_request(&shared, &msg),
        }
    } else {
        match serde_json::from_slice(&bytes) {
            Ok(r) => r,
            Err(e) => return bad_request(&shared, &format!("invalid JSON body: {e}")),
        }
    };
    let input = match asked(&parsed, endpoint) {
        Ok(a) => a,
        Err(msg) => return bad_request(&shared, &msg),
    };
    let mut len = if endpoint.produces_tokens() {
        match output_len(&parsed, endpoint, shared.cfg.default_output_tokens) {
            Ok(l) => l,
            Err(msg) => return bad_request(&shared, &msg),
        }
    } else {
        // Vectors and scores: one answer, due when a first token would be.
        crate::request::OutputLen {
            tokens: 0,
            finish: "stop",
        }
    };

    // With an answer key, the answer's tokens replace the filler words (up to the output
    // limit; an answer that fits ends with `stop`).
    let answer = match &shared.cfg.answers {
        Some(key) if endpoint.produces_tokens() => {
            let question = serde_json::from_slice::<serde_json::Value>(&bytes)
                .ok()
                .and_then(|v| crate::answers::question_text(&v));
            match question.as_deref().and_then(|q| key.answer(q)) {
                Some(text) => {
                    let tokens = crate::answers::tokens_of(text);
                    if tokens.len() <= len.tokens {
                        len.tokens = tokens.len();
                        len.finish = "stop";
                    }
                    Some(Words::new(&tokens))
                }
                None if key.refuse_unknown => {
                    return bad_request(
                        &shared,
                        &format!("{}: this prompt is not in the answer key", key.source),
                    );
                }
                None => None,
            }
        }
        _ => None,
    };

    let k = shared.counters.requests.fetch_add(1, Relaxed) + 1;
    bump(&shared.counters.per_endpoint[endpoint.index()]);
    if shared.faults.is_error(k) {
        bump(&shared.counters.errors);
        return json(
            StatusCode::INTERNAL_SERVER_ERROR,
            Bytes::from_static(SERVER_ERROR),
        );
    }
    let fault = shared.fault_chain.pick(k);
    if let Some(early) = faults::early(fault, ctl).await {
        bump(&shared.counters.errors);
        return early;
    }

    let stream = match endpoint {
        Endpoint::Generate { stream } => stream,
        e if e.produces_tokens() => parsed.stream.unwrap_or(false),
        _ => false,
    };
    let think_tags = shared.cfg.reasoning_field == ReasoningField::ThinkTags;
    let reasoning = match endpoint {
        // An answer is all content.
        _ if answer.is_some() => 0,
        Endpoint::Chat | Endpoint::Responses | Endpoint::Messages => {
            shared.cfg.reasoning_tokens.min(len.tokens)
        }
        Endpoint::Completions | Endpoint::Generate { .. } if think_tags => {
            shared.cfg.reasoning_tokens.min(len.tokens)
        }
        _ => 0,
    };
    let hash = body_hash(&bytes);
    let shape = Shape {
        endpoint,
        offset: if answer.is_some() {
            0
        } else {
            (hash % shared.words.len() as u64) as usize
        },
        tokens: len.tokens,
        reasoning,
        finish: len.finish,
        prompt_tokens: input.prompt_words,
        reasoning_key: shared.cfg.reasoning_field.key(),
        think_tags,
        continuous_usage: stream
            && parsed
                .stream_options
                .as_ref()
                .and_then(|o| o.continuous_usage_stats)
                .unwrap_or(false),
    };
    let (id_prefix, object) = match (endpoint, stream) {
        (Endpoint::Chat, true) => ("chatcmpl-sim-", "chat.completion.chunk"),
        (Endpoint::Chat, false) => ("chatcmpl-sim-", "chat.completion"),
        (Endpoint::Completions, _) => ("cmpl-sim-", "text_completion"),
        (Endpoint::Responses, _) => ("resp_sim_", "response"),
        (Endpoint::Messages, _) => ("msg_sim_", "message"),
        (Endpoint::Embeddings, _) => ("emb-sim-", "list"),
        (Endpoint::ImageRetrieval | Endpoint::Transcription | Endpoint::Images, _) => {
            ("media-sim-", "")
        }
        _ => ("rank-sim-", ""),
    };
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let model_json = match &parsed.model {
        Some(m) => {
            let mut model = Vec::with_capacity(m.len() + 2);
            render::push_json_str(&mut model, m);
            model
        }
        None => shared.model_json.clone(),
    };
    let head = match endpoint {
        Endpoint::Chat | Endpoint::Completions => {
            render::head(id_prefix, Some(k), object, created, &model_json)
        }
        _ => Vec::new(),
    };
    let req = Req {
        shape,
        head,
        id: format!("{id_prefix}{k}"),
        model_json,
        created,
        items: input.items,
        hash,
        answer,
    };
    let timed =
        !(shared.cfg.ttft.is_zero() && shared.cfg.itl.is_zero()) || shared.cfg.serving.paces();
    let finish = crate::sched::finish_of(req.shape.finish);
    let tokens = req.shape.tokens;
    let mut job = Job::new(shared.clone(), arrival, req.shape.prompt_tokens, timed);

    if stream {
        let include_usage = parsed
            .stream_options
            .as_ref()
            .and_then(|o| o.include_usage)
            .unwrap_or(false);
        let params = StreamParams {
            req,
            tokens_per_chunk: shared.cfg.tokens_per_chunk,
            role_first_chunk: shared.cfg.role_first_chunk,
            include_usage,
            cut: shared.faults.is_cut(k),
            arrival,
            job,
        };
        let close_after = shared.cfg.serving.close_after_response;
        let mut resp = Response::new(SimBody::Stream(Box::new(SimStream::new(shared, params))));
        let h = resp.headers_mut();
        h.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        return faults::apply(resp, fault, ctl, close_after);
    }

    // Non-streaming: the whole answer is ready when its last token is due (with a shared
    // decode budget each deadline depends on the batch when the one before it passes).
    job.admitted().await;
    let last = tokens.max(1) - 1;
    if job.shares_budget() {
        for i in 0..last {
            job.due(i, false).await;
        }
    }
    job.due(last, true).await;
    let words = req.words(&shared.words);
    let media_stream = endpoint == Endpoint::Images && parsed.stream == Some(true);
    let body = match endpoint {
        Endpoint::ImageRetrieval | Endpoint::Transcription | Endpoint::Images if media_stream => {
            crate::media::images_event(&req).freeze()
        }
        Endpoint::ImageRetrieval | Endpoint::Transcription | Endpoint::Images => {
            crate::media::full_body(&req, words, crate::media::wants_urls(&parsed)).freeze()
        }
        _ => api::full_body(&req, words).freeze(),
    };
    job.emitted_all(tokens);
    job.finish(finish);
    let c = &shared.counters;
    c.ttft.add_one(arrival.elapsed());
    c.tokens.fetch_add(len.tokens as u64, Relaxed);
    bump(&c.completed);
    let close_after = shared.cfg.serving.close_after_response;
    let mut resp = json(StatusCode::OK, body);
    if media_stream {
        resp.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    }
    faults::apply(resp, fault, ctl, close_after)
}

fn prometheus(text: String) -> Response<SimBody> {
    let mut resp = Response::new(SimBody::full(text));
    resp.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static(crate::metrics::CONTENT_TYPE),
    );
    resp
}

fn json(status: StatusCode, body: impl Into<Bytes>) -> Response<SimBody> {
    let mut resp = Response::new(SimBody::full(body));
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

fn bad_request(shared: &Shared, message: &str) -> Response<SimBody> {
    bump(&shared.counters.bad_requests);
    error(StatusCode::BAD_REQUEST, "invalid_request_error", message)
}

/// An OpenAI-style error body.
fn error(status: StatusCode, kind: &str, message: &str) -> Response<SimBody> {
    let body = serde_json::json!({
        "error": {"message": message, "type": kind, "param": null, "code": status.as_u16()}
    });
    json(status, serde_json::to_vec(&body).unwrap_or_default())
}

#[cfg(unix)]
pub(crate) fn raw_fd(s: &tokio::net::TcpStream) -> i32 {
    std::os::fd::AsRawFd::as_raw_fd(s)
}

#[cfg(not(unix))]
fn raw_fd(_s: &tokio::net::TcpStream) -> i32 {
    -1
}
