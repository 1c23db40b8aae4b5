//! The scraper: every server-metrics and GPU-telemetry target, scraped at its interval on a
//! thread and runtime of its own (never on the client's), each scrape written as it happens
//! to the raw scrape file (`inferbench_telemetry::scrape`). The run takes bracketing scrapes
//! at each phase's edges through [`Scraper::bracket`]; nothing is computed here.
//!
//! A target that does not answer is one warning, never a failed run; AIPerf's default DCGM
//! targets (localhost:9400/9401) that do not answer at the start are dropped quietly.

use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc as std_mpsc;
use std::time::Duration;

use http_body_util::BodyExt;
use inferbench_telemetry::scrape::{
    SCRAPES_SCHEMA_VERSION, ScrapeFileLine, ScrapeLine, ScrapesEnd, ScrapesHeader, TargetInfo,
    TargetKind, TargetOrigin, Trigger,
};
use tokio::sync::mpsc;

use crate::clock::Clock;
use crate::transport::{Conn, Target, TimedBody, connect};

/// One target to scrape.
#[derive(Clone, Debug, PartialEq)]
pub struct ScrapeTarget {
    pub kind: TargetKind,
    pub origin: TargetOrigin,
    /// `http://host[:port]/path` (credentials are removed before anything is recorded).
    pub url: String,
    pub interval: Duration,
    /// Sent with every scrape of this target: its own URL credentials as Basic auth, or the
    /// run's credentials for a target on a run URL's origin (docs/secrets.md). Redacted in
    /// `Debug`, never written.
    pub headers: Vec<crate::ConfiguredHeader>,
}

/// How long one scrape may take before it counts as failed.
const SCRAPE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the start probe waits for every target.
const START_TIMEOUT: Duration = Duration::from_secs(3);

/// What the scraper did, for the run's messages.
#[derive(Clone, Debug, Default)]
pub struct ScrapeOutcome {
    pub targets: Vec<TargetInfo>,
    pub scrapes: u64,
    pub failed: u64,
    /// One line per target that did not answer (or stopped answering), for the user.
    pub warnings: Vec<String>,
    /// Targets dropped quietly (AIPerf's defaults that were not there).
    pub dropped: Vec<String>,
    /// Writing the file failed: the scrapes after it are lost (named, never silent).
    pub write_error: Option<String>,
}

enum Cmd {
    /// Scrape every target now; `done` is told when all have finished.
    Bracket {
        trigger: Trigger,
        phase: Option<String>,
        done: std_mpsc::Sender<()>,
    },
    Stop,
}

/// A running scraper (dropped without [`Scraper::stop`], it stops at the next tick and
/// leaves the file without its end line, like a killed run).
pub struct Scraper {
    cmd: mpsc::UnboundedSender<Cmd>,
    thread: Option<std::thread::JoinHandle<ScrapeOutcome>>,
}

/// `http://user:pw@host/x` → `http://host/x`: credentials never reach a file.
pub fn without_credentials(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    format!("{scheme}://{host}{path}")
}

impl Scraper {
    /// Probes every target once (the `start` scrapes, concurrently), writes the file's header
    /// and those scrapes to `path`, then scrapes each target at its interval until
    /// [`Scraper::stop`]. Returns when the start scrapes are written. When no target is left
    /// (all were AIPerf's absent defaults), the scraper has already ended: [`Scraper::stop`]
    /// returns an outcome with no targets, and the caller removes the file.
    pub fn start(
        targets: Vec<ScrapeTarget>,
        path: PathBuf,
        clock: Clock,
    ) -> Result<Scraper, String> {
        let file = std::fs::File::create(&path)
            .map_err(|e| format!("{}: cannot create: {e}", path.display()))?;
        let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
        let (ready_tx, ready_rx) = std_mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("scraper".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(());
                        return ScrapeOutcome {
                            write_error: Some(format!("cannot start the scraper: {e}")),
                            ..Default::default()
                        };
                    }
                };
                rt.block_on(run(targets, file, clock, cmd_rx, ready_tx))
            })
            .map_err(|e| format!("cannot start the scraper: {e}"))?;
        // The start scrapes happen before the first request.
        let _ = ready_rx.recv();
        Ok(Scraper {
            cmd: cmd_tx,
            thread: Some(thread),
        })
    }

    /// A handle that takes bracketing scrapes (see [`BracketHandle::bracket`]).
    pub fn handle(&self) -> BracketHandle {
        BracketHandle {
            cmd: self.cmd.clone(),
        }
    }

    /// The `end` scrape of every target, the end line, and the outcome.
    pub fn stop(mut self) -> ScrapeOutcome {
        let _ = self.cmd.send(Cmd::Stop);
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }
}

/// Takes bracketing scrapes from another thread (the engine's phase hook).
#[derive(Clone)]
pub struct BracketHandle {
    cmd: mpsc::UnboundedSender<Cmd>,
}

impl BracketHandle {
    /// Scrapes every target now and waits for them (at most `wait`): the bracketing scrapes
    /// at a phase's edges. Called from the client's thread only between phases, when nothing
    /// is in flight.
    pub fn bracket(&self, trigger: Trigger, phase: Option<&str>, wait: Duration) {
        let (done, rx) = std_mpsc::channel();
        if self
            .cmd
            .send(Cmd::Bracket {
                trigger,
                phase: phase.map(str::to_string),
                done,
            })
            .is_ok()
        {
            let _ = rx.recv_timeout(wait);
        }
    }
}

/// An open connection: its sender and the task that drives it.
struct Kept {
    sender: hyper::client::conn::http1::SendRequest<TimedBody>,
    driver: tokio::task::JoinHandle<()>,
}

impl Drop for Kept {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

/// One target's connection, kept between scrapes (and remade after a failure).
struct Slot {
    info: TargetInfo,
    headers: Vec<crate::ConfiguredHeader>,
    target: Target,
    conn: Option<Kept>,
    seq: u64,
    /// The last body and the seq of the scrape that carried it.
    last_body: Option<(String, u64)>,
    warned: bool,
    failed_in_a_row: u32,
}

async fn run(
    targets: Vec<ScrapeTarget>,
    file: std::fs::File,
    clock: Clock,
    mut cmd_rx: mpsc::UnboundedReceiver<Cmd>,
    ready: std_mpsc::Sender<()>,
) -> ScrapeOutcome {
    let mut out = ScrapeOutcome::default();
    let mut slots = Vec::new();
    for (i, t) in targets.iter().enumerate() {
        let url = without_credentials(&t.url);
        let Ok(uri) = url.parse::<hyper::Uri>() else {
            out.warnings
                .push(format!("{}: not a URL; not scraped", kind_name(t.kind)));
            continue;
        };
        slots.push(Slot {
            headers: t.headers.clone(),
            info: TargetInfo {
                index: i as u32,
                kind: t.kind,
                origin: t.origin,
                url,
                interval_ns: t.interval.as_nanos() as u64,
            },
            target: Target::from_uri(&uri),
            conn: None,
            seq: 0,
            last_body: None,
            warned: false,
            failed_in_a_row: 0,
        });
    }
    // The start scrapes, concurrently; a default DCGM target that is not there is dropped.
    let mut first: Vec<ScrapeLine> = Vec::new();
    let results = scrape_all(&mut slots, clock, Trigger::Start, None, START_TIMEOUT).await;
    let mut kept = Vec::new();
    for (slot, line) in slots.into_iter().zip(results) {
        if line.error.is_some()
            && slot.info.origin == TargetOrigin::Default
            && slot.info.kind == TargetKind::Gpu
        {
            out.dropped.push(slot.info.url.clone());
            continue;
        }
        kept.push((slot, line));
    }
    // TRT-LLM's /metrics is JSON; its Prometheus text is at <base>/prometheus/metrics.
    for (slot, line) in kept.iter_mut() {
        if slot.info.kind == TargetKind::Server
            && line.body.as_deref().is_some_and(looks_like_json)
            && let Some(alt) = prometheus_fallback(&slot.info.url)
            && let Ok(uri) = alt.parse::<hyper::Uri>()
        {
            let mut probe = Slot {
                headers: slot.headers.clone(),
                target: Target::from_uri(&uri),
                conn: None,
                info: TargetInfo {
                    url: alt.clone(),
                    ..slot.info.clone()
                },
                seq: 0,
                last_body: None,
                warned: false,
                failed_in_a_row: 0,
            };
            let l = scrape_once(&mut probe, clock, Trigger::Start, None).await;
            if l.error.is_none() && !l.body.as_deref().is_some_and(looks_like_json) {
                *slot = probe;
                *line = l;
            }
        }
    }
    let mut slots: Vec<Slot> = Vec::new();
    let mut writer = std::io::BufWriter::new(file);
    let header = ScrapesHeader {
        schema_version: SCRAPES_SCHEMA_VERSION,
        anchor_unix_ns: clock.anchor_unix_ns(),
        targets: kept.iter().map(|(s, _)| s.info.clone()).collect(),
    };
    out.targets = header.targets.clone();
    let write = |w: &mut std::io::BufWriter<std::fs::File>, l: &ScrapeFileLine| {
        let mut text = serde_json::to_string(l).unwrap_or_default();
        text.push('\n');
        w.write_all(text.as_bytes()).and_then(|_| w.flush())
    };
    if let Err(e) = write(&mut writer, &ScrapeFileLine::Header(header)) {
        out.write_error = Some(format!("writing the scrape file: {e}"));
    }
    for (mut slot, line) in kept {
        note(&mut slot, &line, &mut out);
        first.push(line);
        slots.push(slot);
    }
    for l in first {
        if let Err(e) = write(&mut writer, &ScrapeFileLine::Scrape(l)) {
            out.write_error
                .get_or_insert(format!("writing the scrape file: {e}"));
        }
    }
    let _ = ready.send(());
    if slots.is_empty() {
        return out;
    }
    // Each target on its own absolute ticks; a bracket scrapes all of them at once.
    let start = tokio::time::Instant::now();
    // The phase under way, carried by every scrape (as AIPerf tags its scrapes).
    let mut current: Option<String> = None;
    let mut next: Vec<tokio::time::Instant> = slots
        .iter()
        .map(|s| start + Duration::from_nanos(s.info.interval_ns))
        .collect();
    loop {
        let (i, due) = next
            .iter()
            .enumerate()
            .min_by_key(|(_, t)| **t)
            .map(|(i, t)| (i, *t))
            .expect("at least one target");
        let cmd = tokio::select! {
            _ = tokio::time::sleep_until(due) => None,
            c = cmd_rx.recv() => Some(c.unwrap_or(Cmd::Stop)),
        };
        let lines = match cmd {
            None => {
                let l = scrape_once(&mut slots[i], clock, Trigger::Interval, current.clone()).await;
                let interval = Duration::from_nanos(slots[i].info.interval_ns);
                // Skip ticks that passed while a slow target answered, keeping the grid.
                let now = tokio::time::Instant::now();
                while next[i] <= now {
                    next[i] += interval;
                }
                vec![(i, l)]
            }
            Some(Cmd::Bracket {
                trigger,
                phase,
                done,
            }) => {
                if trigger == Trigger::PhaseStart {
                    current = phase.clone();
                }
                let ls = scrape_all(&mut slots, clock, trigger, phase, SCRAPE_TIMEOUT).await;
                let _ = done.send(());
                ls.into_iter().enumerate().collect()
            }
            Some(Cmd::Stop) => {
                let ls = scrape_all(
                    &mut slots,
                    clock,
                    Trigger::End,
                    current.clone(),
                    SCRAPE_TIMEOUT,
                )
                .await;
                for (i, l) in ls.into_iter().enumerate() {
                    note(&mut slots[i], &l, &mut out);
                    if let Err(e) = write(&mut writer, &ScrapeFileLine::Scrape(l)) {
                        out.write_error
                            .get_or_insert(format!("writing the scrape file: {e}"));
                    }
                }
                let end = ScrapeFileLine::End(ScrapesEnd {
                    scrapes: out.scrapes,
                    failed: out.failed,
                });
                if let Err(e) = write(&mut writer, &end) {
                    out.write_error
                        .get_or_insert(format!("writing the scrape file: {e}"));
                }
                return out;
            }
        };
        for (i, l) in lines {
            note(&mut slots[i], &l, &mut out);
            if let Err(e) = write(&mut writer, &ScrapeFileLine::Scrape(l)) {
                out.write_error
                    .get_or_insert(format!("writing the scrape file: {e}"));
            }
        }
    }
}

/// Counts a scrape and warns once per target about failures.
fn note(slot: &mut Slot, line: &ScrapeLine, out: &mut ScrapeOutcome) {
    out.scrapes += 1;
    match &line.error {
        None => slot.failed_in_a_row = 0,
        Some(e) => {
            out.failed += 1;
            slot.failed_in_a_row += 1;
            if !slot.warned {
                slot.warned = true;
                out.warnings.push(format!(
                    "{} {}: {e} (the run goes on; every failed scrape is kept in the scrape file)",
                    kind_name(slot.info.kind),
                    slot.info.url
                ));
            }
        }
    }
}

fn kind_name(k: TargetKind) -> &'static str {
    match k {
        TargetKind::Server => "server metrics",
        TargetKind::Gpu => "GPU telemetry",
    }
}

/// Scrapes every slot at once.
async fn scrape_all(
    slots: &mut [Slot],
    clock: Clock,
    trigger: Trigger,
    phase: Option<String>,
    timeout: Duration,
) -> Vec<ScrapeLine> {
    let mut set = tokio::task::JoinSet::new();
    // Each scrape runs with its slot moved in, so they can run concurrently.
    let taken: Vec<Slot> = slots
        .iter_mut()
        .map(|s| Slot {
            info: s.info.clone(),
            headers: s.headers.clone(),
            target: s.target.clone(),
            conn: s.conn.take(),
            seq: s.seq,
            last_body: s.last_body.take(),
            warned: s.warned,
            failed_in_a_row: s.failed_in_a_row,
        })
        .collect();
    for (i, mut s) in taken.into_iter().enumerate() {
        let phase = phase.clone();
        set.spawn(async move {
            let l = match tokio::time::timeout(timeout, scrape_once(&mut s, clock, trigger, phase))
                .await
            {
                Ok(l) => l,
                Err(_) => failed_line(
                    &mut s,
                    clock,
                    trigger,
                    None,
                    format!("no answer within {timeout:?}"),
                ),
            };
            (i, s, l)
        });
    }
    let mut lines: Vec<Option<ScrapeLine>> = (0..slots.len()).map(|_| None).collect();
    while let Some(Ok((i, s, l))) = set.join_next().await {
        slots[i].conn = s.conn;
        slots[i].seq = s.seq;
        slots[i].last_body = s.last_body;
        lines[i] = Some(l);
    }
    lines
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            l.unwrap_or_else(|| {
                failed_line(
                    &mut slots[i],
                    clock,
                    trigger,
                    None,
                    "the scrape task failed".into(),
                )
            })
        })
        .collect()
}

fn failed_line(
    s: &mut Slot,
    clock: Clock,
    trigger: Trigger,
    phase: Option<String>,
    error: String,
) -> ScrapeLine {
    s.conn = None;
    let now = clock.now_ns();
    let seq = s.seq;
    s.seq += 1;
    ScrapeLine {
        target: s.info.index,
        seq,
        trigger: Some(trigger),
        phase,
        send_ns: now,
        first_byte_ns: None,
        end_ns: now,
        wall_unix_ns: clock.anchor_unix_ns() + now,
        error: Some(error),
        ..Default::default()
    }
}

/// One GET of one target.
async fn scrape_once(
    s: &mut Slot,
    clock: Clock,
    trigger: Trigger,
    phase: Option<String>,
) -> ScrapeLine {
    let seq = s.seq;
    s.seq += 1;
    let mut line = ScrapeLine {
        target: s.info.index,
        seq,
        trigger: Some(trigger),
        phase,
        ..Default::default()
    };
    let mut kept = match s.conn.take() {
        Some(k) if !k.sender.is_closed() => k,
        _ => match connect(&s.target, clock).await {
            Ok(Conn { sender, io, .. }) => Kept {
                sender,
                // The connection is driven by its own task, for as long as it is kept.
                driver: tokio::spawn(async move {
                    let _ = io.await;
                }),
            },
            Err(e) => {
                let now = clock.now_ns();
                line.send_ns = now;
                line.end_ns = now;
                line.wall_unix_ns = clock.anchor_unix_ns() + now;
                line.error = Some(e);
                return line;
            }
        },
    };
    let mut req = hyper::Request::get(s.target.path.clone())
        .header(http::header::HOST, s.target.host_header.clone());
    for h in &s.headers {
        let (name, value) = h.wire();
        req = req.header(name, value);
    }
    let req = req
        .header(
            http::header::USER_AGENT,
            concat!("inferbench/", env!("CARGO_PKG_VERSION")),
        )
        // 0.0.4 only: OpenMetrics rewrites vLLM's sample names (docs/telemetry.md).
        .header(
            http::header::ACCEPT,
            "text/plain;version=0.0.4;q=1,*/*;q=0.1",
        )
        .header(http::header::ACCEPT_ENCODING, "identity")
        .body(TimedBody::empty(clock));
    let req = match req {
        Ok(r) => r,
        Err(e) => return finish_failed(line, clock, e.to_string()),
    };
    line.send_ns = clock.now_ns();
    let resp = match kept.sender.send_request(req).await {
        Ok(r) => r,
        Err(e) => return finish_failed(line, clock, crate::transport::error_chain(&e)),
    };
    let head_ns = clock.now_ns();
    line.first_byte_ns = Some(head_ns);
    line.wall_unix_ns = clock.anchor_unix_ns() + head_ns;
    line.status = Some(resp.status().as_u16());
    line.content_type = resp
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let ok = resp.status().is_success();
    let body = resp.into_body().collect().await;
    line.end_ns = clock.now_ns();
    match body {
        Ok(b) if ok => {
            let text = String::from_utf8_lossy(&b.to_bytes()).into_owned();
            match &s.last_body {
                Some((prev, at)) if *prev == text => line.same_as = Some(*at),
                _ => {
                    s.last_body = Some((text.clone(), seq));
                    line.body = Some(text);
                }
            }
            // Keep the connection for the next scrape.
            s.conn = Some(kept);
        }
        Ok(_) => {
            line.error = Some(format!("HTTP {}", line.status.unwrap_or(0)));
            s.conn = Some(kept);
        }
        Err(e) => line.error = Some(format!("reading the body: {e}")),
    }
    line
}

fn finish_failed(mut line: ScrapeLine, clock: Clock, error: String) -> ScrapeLine {
    let now = clock.now_ns();
    if line.send_ns == 0 {
        line.send_ns = now;
    }
    line.end_ns = now;
    line.wall_unix_ns = clock.anchor_unix_ns() + now;
    line.error = Some(error);
    line
}

fn looks_like_json(body: &str) -> bool {
    matches!(body.trim_start().as_bytes().first(), Some(b'[' | b'{'))
}

/// `<base>/metrics` → `<base>/prometheus/metrics` (TRT-LLM's Prometheus text).
fn prometheus_fallback(url: &str) -> Option<String> {
    url.strip_suffix("/metrics")
        .map(|base| format!("{base}/prometheus/metrics"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_stay_in_a_url() {
        assert_eq!(
            without_credentials("http://u:p@h:9/metrics"),
            "http://h:9/metrics"
        );
        assert_eq!(without_credentials("http://h:9"), "http://h:9");
        assert_eq!(without_credentials("http://a@b@h/x?y=@"), "http://h/x?y=@");
    }

    #[test]
    fn trt_llm_fallback_path() {
        assert_eq!(
            prometheus_fallback("http://h:8000/metrics").as_deref(),
            Some("http://h:8000/prometheus/metrics")
        );
        assert!(looks_like_json(" [{\"iter\":1}]"));
        assert!(!looks_like_json("# HELP x\nx 1\n"));
    }
}
