//! Faults the simulated server injects (docs/simulated-server.md, docs/faults.md): each at a
//! percentage of inference requests, chosen from the arrival number and the seed as
//! `error_rate` is, and the close-after-each-response mode that llama.cpp's server shows.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::sync::Notify;

use crate::body::{SimBody, StreamCut};
use crate::request::FaultPlan;

/// One kind of fault. Stream faults act on the SSE frames of a streaming response; a
/// non-streaming response gets the ones that make sense for one body (see each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// HTTP 500 with an OpenAI-style error body (as `error_rate`).
    Http500,
    /// HTTP 429 with `Retry-After: 1`.
    Http429,
    /// After two frames, half of the next one, then the connection drops (no terminating
    /// chunk); a single-body response is cut in its middle.
    CutMidEvent,
    /// The second frame of a stream is replaced by an event whose JSON is cut short.
    Malformed,
    /// The stream ends without `data: [DONE]`.
    NoDone,
    /// The usage chunk (`"choices":[]` with `"usage"`) is left out.
    NoUsage,
    /// The response head waits [`SLOW_HEAD`] before it is sent.
    SlowHead,
    /// After the head and two frames, nothing more is ever sent.
    Stall,
    /// After two frames, the connection is reset (`SO_LINGER` 0, then close: an RST).
    Reset,
    /// Every frame leaves a byte at a time, [`TRICKLE_GAP`] apart.
    Trickle,
    /// The request is read and the connection closed without a byte of response.
    Drop,
}

/// The delay of [`FaultKind::SlowHead`].
pub const SLOW_HEAD: Duration = Duration::from_millis(300);
/// The gap between the bytes of [`FaultKind::Trickle`].
pub const TRICKLE_GAP: Duration = Duration::from_millis(1);
/// How long a reset waits after its frames were flushed.
const RESET_AFTER: Duration = Duration::from_millis(50);
/// Frames sent before a cut, a stall or a reset.
const FRAMES_BEFORE: usize = 2;

impl FaultKind {
    pub const ALL: [FaultKind; 11] = [
        FaultKind::Http500,
        FaultKind::Http429,
        FaultKind::CutMidEvent,
        FaultKind::Malformed,
        FaultKind::NoDone,
        FaultKind::NoUsage,
        FaultKind::SlowHead,
        FaultKind::Stall,
        FaultKind::Reset,
        FaultKind::Trickle,
        FaultKind::Drop,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Http500 => "http-500",
            FaultKind::Http429 => "http-429",
            FaultKind::CutMidEvent => "cut-mid-event",
            FaultKind::Malformed => "malformed-json",
            FaultKind::NoDone => "no-done",
            FaultKind::NoUsage => "no-usage",
            FaultKind::SlowHead => "slow-head",
            FaultKind::Stall => "stall",
            FaultKind::Reset => "reset",
            FaultKind::Trickle => "trickle",
            FaultKind::Drop => "drop",
        }
    }

    pub fn parse(s: &str) -> Option<FaultKind> {
        FaultKind::ALL.into_iter().find(|k| k.name() == s.trim())
    }
}

/// `KIND=PERCENT` (as `mock-server --fault` and `profile --sim-fault` take it).
pub fn parse_fault(s: &str) -> Result<(FaultKind, f64), String> {
    let names = || {
        FaultKind::ALL
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (k, p) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?}: expected KIND=PERCENT (kinds: {})", names()))?;
    let kind = FaultKind::parse(k)
        .ok_or_else(|| format!("{s:?}: unknown fault {k:?} (kinds: {})", names()))?;
    let pct: f64 = p
        .trim()
        .parse()
        .map_err(|_| format!("{s:?}: {p:?} is not a number"))?;
    if !(0.0..=100.0).contains(&pct) {
        return Err(format!("{s:?}: a percentage between 0 and 100"));
    }
    Ok((kind, pct))
}

/// Which fault, if any, hits inference request k (1-based arrival number). The kinds share
/// the arrivals out, none hit twice: `--error-rate` takes its arrivals first, then each
/// listed kind in turn takes its percentage of all arrivals from those the earlier ones left.
/// Each kind is spread evenly over its arrivals with a phase from the seed (seed 0: no phase,
/// so one kind at 25 % hits requests 4, 8, 12, …). Before, every kind was chosen from k alone
/// and the first listed won: at seed 0 equal percentages hit the same arrivals, and only the
/// first kind was ever seen. Built once per server: `pick` runs for every inference request.
pub(crate) struct FaultChain {
    kinds: Vec<FaultKind>,
    /// (percent of all arrivals, phase): the error rate's first, then each kind's.
    chain: Vec<(f64, u64)>,
}

impl FaultChain {
    /// `error`: the error rate's percentage and phase ([`FaultPlan::error_share`]).
    pub(crate) fn new(faults: &[(FaultKind, f64)], seed: u64, error: (f64, u64)) -> FaultChain {
        let mut chain = vec![error];
        chain.extend(faults.iter().map(|&(kind, pct)| (pct, phase(seed, kind))));
        FaultChain {
            kinds: faults.iter().map(|f| f.0).collect(),
            chain,
        }
    }

    pub(crate) fn pick(&self, k: u64) -> Option<FaultKind> {
        if self.kinds.is_empty() {
            return None;
        }
        match share_out(&self.chain, k)? {
            0 => None,
            i => Some(self.kinds[i - 1]),
        }
    }
}

fn phase(seed: u64, kind: FaultKind) -> u64 {
    if seed == 0 {
        return 0;
    }
    let b = inferbench_core::seed::derive_seed(seed, &format!("sim-fault-{}", kind.name()));
    u64::from_le_bytes(b[0..8].try_into().unwrap_or_default()) % 100
}

/// The member of `chain` (percent of all arrivals, phase) that arrival k falls to. Member i
/// sees only the arrivals members 0..i left, numbered 1, 2, … among themselves, and hits its
/// share of them (its percentage over the percentage still free) by [`FaultPlan::hit`]. So
/// the first member's hits are exactly those it would have alone, and each later one's count
/// is its percentage of all arrivals, within one hit (the share is a rounded quotient).
fn share_out(chain: &[(f64, u64)], k: u64) -> Option<usize> {
    let mut j = k;
    let mut free = 100.0;
    for (i, &(pct, offset)) in chain.iter().enumerate() {
        if pct <= 0.0 {
            continue;
        }
        if free <= 0.0 {
            return None;
        }
        let share = (100.0 * pct / free).min(100.0);
        if FaultPlan::hit(share, j + offset) {
            return Some(i);
        }
        // Arrival j was not this member's; its number among the arrivals still free is j
        // less this member's hits among 1..=j (at least 1, since j itself was not hit).
        j -= hits_through(share, offset, j);
        free -= pct;
    }
    None
}

/// Hits of [`FaultPlan::hit`] at `rate` among arrivals 1..=j with `offset`.
fn hits_through(rate: f64, offset: u64, j: u64) -> u64 {
    let f = |x: u64| (x as f64 * rate / 100.0).floor() as u64;
    f(j + offset) - f(offset)
}

/// What the server knows of one connection: its socket (for a reset, a drop and the close
/// after a response) and whether an inference response on it has ended.
pub(crate) struct ConnCtl {
    pub(crate) fd: i32,
    /// When the latest read's bytes arrived (a request's arrival).
    pub(crate) arrival: Arc<crate::arrival::ArrivalCell>,
    pub(crate) ended: AtomicBool,
    pub(crate) notify: Notify,
}

impl ConnCtl {
    pub(crate) fn new(fd: i32, arrival: Arc<crate::arrival::ArrivalCell>) -> Arc<ConnCtl> {
        Arc::new(ConnCtl {
            fd,
            arrival,
            ended: AtomicBool::new(false),
            notify: Notify::new(),
        })
    }

    /// Close-after-response: the rest of the response leaves with the FIN in one segment
    /// (`TCP_CORK` now; the connection's task then shuts it down gracefully), so the client sees
    /// the close by the time it has the response, as it does from llama.cpp on a loaded
    /// host. Called when the body's last bytes are handed to hyper.
    fn mark_ended(&self) {
        if !self.ended.swap(true, Ordering::Relaxed) {
            set_cork(self.fd);
            self.notify.notify_one();
        }
    }

    /// Shut both directions now: the client reads EOF with no response byte.
    pub(crate) fn drop_now(&self) {
        #[cfg(target_os = "linux")]
        // SAFETY: the fd is this connection's socket, open while its hyper connection lives
        // (this runs inside its service); shutdown does not close it.
        unsafe {
            libc::shutdown(self.fd, libc::SHUT_RDWR);
        }
    }

    /// `SO_LINGER` 0: the close that follows sends an RST instead of a FIN.
    fn linger_zero(&self) {
        #[cfg(target_os = "linux")]
        {
            let l = libc::linger {
                l_onoff: 1,
                l_linger: 0,
            };
            // SAFETY: as in `drop_now`; `l` outlives the call.
            unsafe {
                libc::setsockopt(
                    self.fd,
                    libc::SOL_SOCKET,
                    libc::SO_LINGER,
                    (&l as *const libc::linger).cast(),
                    std::mem::size_of::<libc::linger>() as libc::socklen_t,
                );
            }
        }
    }
}

fn set_cork(_fd: i32) {
    #[cfg(target_os = "linux")]
    {
        let one: libc::c_int = 1;
        // SAFETY: as in `ConnCtl::drop_now`.
        unsafe {
            libc::setsockopt(
                _fd,
                libc::IPPROTO_TCP,
                libc::TCP_CORK,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    }
}

/// A response body with a fault applied, and/or the close-after-response notice.
pub(crate) struct FaultBody {
    inner: SimBody,
    kind: Option<FaultKind>,
    /// Set in close-after-response mode: told when the last bytes are handed over.
    close: Option<Arc<ConnCtl>>,
    /// For a reset.
    ctl: Arc<ConnCtl>,
    frames: usize,
    /// Bytes still to trickle out, or the half event before a cut.
    rest: Bytes,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    /// A `Pending` was returned since the last frame (hyper flushed what it had).
    flushed: bool,
    /// The fault's end is reached: flush, then fail (cut, reset) or wait forever (stall).
    ending: bool,
}

impl FaultBody {
    pub(crate) fn new(
        inner: SimBody,
        kind: Option<FaultKind>,
        ctl: Arc<ConnCtl>,
        close_after: bool,
    ) -> FaultBody {
        FaultBody {
            inner,
            kind,
            close: close_after.then(|| ctl.clone()),
            ctl,
            frames: 0,
            rest: Bytes::new(),
            sleep: None,
            flushed: false,
            ending: false,
        }
    }

    fn pending(&mut self) -> Poll<Option<Result<Frame<Bytes>, StreamCut>>> {
        self.flushed = true;
        Poll::Pending
    }

    fn data(&mut self, b: Bytes) -> Poll<Option<Result<Frame<Bytes>, StreamCut>>> {
        self.flushed = false;
        if let Some(c) = &self.close
            && self.rest.is_empty()
            && self.inner.is_end_stream()
        {
            c.mark_ended();
        }
        Poll::Ready(Some(Ok(Frame::data(b))))
    }

    /// One byte of `rest`, after the gap.
    fn trickle(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, StreamCut>>> {
        let sleep = self
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(TRICKLE_GAP)));
        if sleep.as_mut().poll(cx).is_pending() {
            return self.pending();
        }
        self.sleep = None;
        let b = self.rest.split_to(1);
        self.data(b)
    }
}

impl Body for FaultBody {
    type Data = Bytes;
    type Error = StreamCut;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, StreamCut>>> {
        let this = self.get_mut();
        if this.ending {
            // hyper drops its unwritten buffer on a body error: one `Pending` flushes it.
            if !this.flushed {
                cx.waker().wake_by_ref();
                return this.pending();
            }
            return match this.kind {
                Some(FaultKind::Stall) => Poll::Pending,
                Some(FaultKind::Reset) => {
                    // Time for the client to read what was sent: an RST can discard what
                    // its kernel holds unread, and the head must have arrived.
                    let sleep = this
                        .sleep
                        .get_or_insert_with(|| Box::pin(tokio::time::sleep(RESET_AFTER)));
                    if sleep.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    this.ctl.linger_zero();
                    Poll::Ready(Some(Err(StreamCut)))
                }
                _ => Poll::Ready(Some(Err(StreamCut))),
            };
        }
        if !this.rest.is_empty() {
            return this.trickle(cx);
        }
        loop {
            let frame = match Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Pending => return this.pending(),
                Poll::Ready(None) => {
                    if let Some(c) = &this.close {
                        c.mark_ended();
                    }
                    return Poll::Ready(None);
                }
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                Poll::Ready(Some(Ok(f))) => f,
            };
            let Ok(data) = frame.into_data() else {
                continue;
            };
            let n = this.frames;
            this.frames += 1;
            let out = match this.kind {
                Some(FaultKind::CutMidEvent) if n == FRAMES_BEFORE || this.inner.is_end_stream() => {
                    // Half of it now (at least one byte), the cut after.
                    let half = data.len().div_ceil(2);
                    this.ending = true;
                    this.flushed = false;
                    return Poll::Ready(Some(Ok(Frame::data(data.slice(..half)))));
                }
                Some(FaultKind::Malformed) if n == 1 => Bytes::from_static(
                    b"data: {\"id\":\"chatcmpl-sim-bad\",\"choices\":[{\"delta\":{\"content\":\"x\"\n\n",
                ),
                Some(FaultKind::NoDone) => strip_events(data, |e| e == b"data: [DONE]"),
                Some(FaultKind::NoUsage) => strip_events(data, |e| {
                    contains(e, b"\"usage\"") && contains(e, b"\"choices\":[]")
                }),
                Some(FaultKind::Stall | FaultKind::Reset)
                    if n == FRAMES_BEFORE || this.inner.is_end_stream() =>
                {
                    this.ending = true;
                    cx.waker().wake_by_ref();
                    return this.pending();
                }
                Some(FaultKind::Trickle) => {
                    this.rest = data;
                    return this.trickle(cx);
                }
                _ => data,
            };
            if out.is_empty() {
                if this.inner.is_end_stream()
                    && let Some(c) = &this.close
                {
                    c.mark_ended();
                }
                continue;
            }
            return this.data(out);
        }
    }

    fn is_end_stream(&self) -> bool {
        !self.ending && self.rest.is_empty() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        match self.kind {
            // A body cut short or never finished has no length to promise.
            Some(FaultKind::CutMidEvent | FaultKind::Stall | FaultKind::Reset) => {
                SizeHint::default()
            }
            _ => self.inner.size_hint(),
        }
    }
}

/// The faults that decide the response before it is made: an error status, a drop (the
/// connection shut with no byte sent; hyper's write of the returned response then fails),
/// or the slow head's wait (then None: the response goes on as usual).
pub(crate) async fn early(
    kind: Option<FaultKind>,
    ctl: &ConnCtl,
) -> Option<http::Response<SimBody>> {
    let error = |status: http::StatusCode, body: &'static [u8]| {
        let mut r = http::Response::new(SimBody::full(Bytes::from_static(body)));
        *r.status_mut() = status;
        r.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        r
    };
    match kind? {
        FaultKind::Http500 => Some(error(
            http::StatusCode::INTERNAL_SERVER_ERROR,
            br#"{"error":{"message":"simulated failure","type":"server_error","code":500}}"#,
        )),
        FaultKind::Http429 => {
            let mut r = error(
                http::StatusCode::TOO_MANY_REQUESTS,
                br#"{"error":{"message":"simulated rate limit","type":"rate_limit_error","code":429}}"#,
            );
            r.headers_mut().insert(
                http::header::RETRY_AFTER,
                http::HeaderValue::from_static("1"),
            );
            Some(r)
        }
        FaultKind::Drop => {
            ctl.drop_now();
            Some(error(http::StatusCode::OK, b""))
        }
        FaultKind::SlowHead => {
            tokio::time::sleep(SLOW_HEAD).await;
            None
        }
        _ => None,
    }
}

/// The response with its body under `kind` and/or the close-after-response notice (and
/// then the `Keep-Alive` header llama.cpp sends), unchanged when neither applies or when it
/// has one already.
pub(crate) fn apply(
    resp: http::Response<SimBody>,
    kind: Option<FaultKind>,
    ctl: &Arc<ConnCtl>,
    close_after: bool,
) -> http::Response<SimBody> {
    if (kind.is_none() && !close_after) || matches!(resp.body(), SimBody::Fault(_)) {
        return resp;
    }
    let mut resp =
        resp.map(|b| SimBody::Fault(Box::new(FaultBody::new(b, kind, ctl.clone(), close_after))));
    if close_after {
        resp.headers_mut().insert(
            http::header::HeaderName::from_static("keep-alive"),
            http::HeaderValue::from_static("timeout=5, max=100"),
        );
    }
    resp
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// The frame without the SSE events (separated by a blank line) that `drop` matches.
fn strip_events(data: Bytes, drop: impl Fn(&[u8]) -> bool) -> Bytes {
    let mut out = Vec::with_capacity(data.len());
    let mut kept_all = true;
    for ev in data
        .split_inclusive(|&b| b == b'\n')
        .collect::<Vec<_>>()
        .split(|l| *l == b"\n")
    {
        let text: Vec<u8> = ev.concat();
        if text.is_empty() {
            continue;
        }
        let body = text.strip_suffix(b"\n").unwrap_or(&text);
        if drop(body) {
            kept_all = false;
            continue;
        }
        out.extend_from_slice(&text);
        out.push(b'\n');
    }
    if kept_all {
        return data;
    }
    Bytes::from(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_names_every_kind_and_refuses_bad_input() {
        for k in FaultKind::ALL {
            assert_eq!(parse_fault(&format!("{}=5", k.name())), Ok((k, 5.0)));
        }
        assert!(parse_fault("stall").unwrap_err().contains("KIND=PERCENT"));
        assert!(parse_fault("boom=5").unwrap_err().contains("unknown fault"));
        assert!(
            parse_fault("stall=101")
                .unwrap_err()
                .contains("between 0 and 100")
        );
    }

    #[test]
    fn seed_zero_hits_every_fourth_at_25_percent() {
        let f = [(FaultKind::Stall, 25.0)];
        let hits: Vec<u64> = (1..=12)
            .filter(|&k| FaultChain::new(&f, 0, NO_ERRORS).pick(k).is_some())
            .collect();
        assert_eq!(hits, vec![4, 8, 12]);
        // Any seed: exactly a quarter of any 100 consecutive arrivals.
        let n = (1..=100)
            .filter(|&k| FaultChain::new(&f, 42, NO_ERRORS).pick(k).is_some())
            .count();
        assert_eq!(n, 25);
    }

    const NO_ERRORS: (f64, u64) = (0.0, 0);

    fn hits(
        faults: &[(FaultKind, f64)],
        seed: u64,
        error: (f64, u64),
        n: u64,
    ) -> Vec<(u64, FaultKind)> {
        let chain = FaultChain::new(faults, seed, error);
        (1..=n)
            .filter_map(|k| chain.pick(k).map(|f| (k, f)))
            .collect()
    }

    #[test]
    fn several_kinds_share_the_arrivals_out() {
        // By hand, seed 0: reset at 50 % takes k = 2, 4, 6, 8; stall's 25 % of all is half
        // of the four arrivals left (1, 3, 5, 7, numbered 1 to 4): the 2nd and 4th, 3 and 7.
        let f = [(FaultKind::Reset, 50.0), (FaultKind::Stall, 25.0)];
        assert_eq!(
            hits(&f, 0, NO_ERRORS, 8),
            vec![
                (2, FaultKind::Reset),
                (3, FaultKind::Stall),
                (4, FaultKind::Reset),
                (6, FaultKind::Reset),
                (7, FaultKind::Stall),
                (8, FaultKind::Reset),
            ]
        );
        // Equal percentages, seed 0 (they used to hit the same arrivals, the first winning):
        // each kind its own quarter of 400 arrivals; and with any seed.
        let f = [(FaultKind::Http500, 25.0), (FaultKind::Reset, 25.0)];
        for seed in [0, 7, 42] {
            let h = hits(&f, seed, NO_ERRORS, 400);
            for kind in [FaultKind::Http500, FaultKind::Reset] {
                let n = h.iter().filter(|x| x.1 == kind).count();
                assert_eq!(n, 100, "seed {seed} {kind:?}");
            }
        }
    }

    #[test]
    fn error_rate_takes_its_arrivals_first() {
        // --error-rate 50 at seed 0 (phase 0) takes the even arrivals; reset=50 then takes
        // every odd one, and nothing is left for a third kind.
        let f = [(FaultKind::Reset, 50.0), (FaultKind::Stall, 10.0)];
        let h = hits(&f, 0, (50.0, 0), 40);
        assert_eq!(h.len(), 20);
        assert!(
            h.iter().all(|&(k, f)| k % 2 == 1 && f == FaultKind::Reset),
            "{h:?}"
        );
        // --error-rate 10 and reset=10: ten of each per 100, never on one arrival.
        let f = [(FaultKind::Reset, 10.0)];
        let h = hits(&f, 0, (10.0, 0), 1000);
        assert_eq!(h.len(), 100);
        assert!(h.iter().all(|&(k, _)| !FaultPlan::hit(10.0, k)));
    }

    #[test]
    fn strip_drops_only_matching_events() {
        let b = Bytes::from_static(b"data: {\"a\":1}\n\ndata: [DONE]\n\n");
        let out = strip_events(b, |e| e == b"data: [DONE]");
        assert_eq!(&out[..], b"data: {\"a\":1}\n\n");
        let b = Bytes::from_static(b"data: [DONE]\n\n");
        assert!(strip_events(b, |e| e == b"data: [DONE]").is_empty());
    }
}
