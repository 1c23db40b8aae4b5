//! The console summary, AIPerf style: saved as `profile_export_console.txt`
//! ([`render_console`], with every table AIPerf writes) and printed
//! ([`render_console_for_terminal`], without the rows a non-streaming run can only fill
//! with zeros).

use comfy_table::{CellAlignment, ContentArrangement, Table};
use inferbench_core::{MetricResult, MetricValue, Summary};

/// Light borders with a heavy header rule: close to the `rich` tables AIPerf prints.
const PRESET: &str = "││──┝━┿┥│    ┬┴┌┐└┘";

/// Rows of AIPerf's "LLM Metrics" table, in its order (from real 0.13.0 console output);
/// metrics not computed in a run are skipped.
pub const CONSOLE_ROWS: [&str; 26] = [
    "time_to_first_token",
    "time_to_second_token",
    "time_to_first_output_token",
    "request_latency",
    "decode_duration",
    "inter_token_latency",
    "output_token_throughput_per_user",
    "e2e_output_token_throughput",
    "output_sequence_length",
    "input_sequence_length",
    "output_token_throughput",
    "input_token_throughput",
    // The media metrics (display order 850, 860, 861: before request throughput's 900).
    "rtfx",
    "image_throughput",
    "image_latency",
    "request_throughput",
    "goodput",
    "good_request_fraction_ci_low",
    "good_request_fraction_ci_high",
    "completed_request_count",
    "request_error_rate",
    "request_count",
    "adj_request_latency",
    "adj_time_to_first_token",
    "adj_decode_duration",
    "adj_inter_token_latency",
];

const COLUMNS: [&str; 8] = ["Metric", "avg", "min", "max", "p99", "p90", "p50", "std"];

/// `1251.6155` → `1,251.62`; `None` or non-finite → `N/A`.
pub fn format_thousands(x: Option<f64>) -> String {
    let Some(x) = x.filter(|x| x.is_finite()) else {
        return "N/A".into();
    };
    let s = format!("{:.2}", x.abs());
    let (int, frac) = s.split_once('.').unwrap_or((&s, ""));
    let mut grouped = String::with_capacity(s.len() + s.len() / 3 + 1);
    // Like Python's f"{x:,.2f}": the sign follows the value, even when it rounds to zero.
    if x.is_sign_negative() {
        grouped.push('-');
    }
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    grouped.push('.');
    grouped.push_str(frac);
    grouped
}

fn row(m: &MetricResult) -> Vec<String> {
    let mut cells = vec![format!("{} ({})", m.header, m.unit)];
    match &m.value {
        MetricValue::Scalar { value } => {
            cells.push(format_thousands(Some(*value)));
            cells.extend(std::iter::repeat_n("N/A".to_string(), 6));
        }
        MetricValue::Distribution { stats } => {
            for c in &COLUMNS[1..] {
                cells.push(format_thousands(stats.get(c)));
            }
        }
    }
    cells
}

fn new_table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(PRESET)
        .force_no_tty()
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header.to_vec());
    t
}

fn titled(title: &str, table: &Table) -> String {
    let body = table.trim_fmt();
    let width = body.lines().next().map_or(0, |l| l.chars().count());
    let pad = width.saturating_sub(title.chars().count()) / 2;
    format!("{}{title}\n{body}\n", " ".repeat(pad))
}

/// The console text: an error summary table when there were errors, then the metrics table
/// titled `inferbench | LLM Metrics (<definitions>)`, then the time-weighted and schedule
/// tables. The file version: a non-streaming run keeps its all-zero Effective and Active
/// rows, as AIPerf 0.13 writes them.
pub fn render_console(summary: &Summary) -> String {
    render(summary, false)
}

/// [`render_console`] for the terminal. When the run has no streaming metrics (no TTFT:
/// every non-streaming run), the Effective and Active rows that are zero by construction
/// (token and prefill/decode rates) are left out, and a table left empty is not printed;
/// rows with a value, such as Effective Concurrency and Effective Latency, stay.
pub fn render_console_for_terminal(summary: &Summary) -> String {
    render(summary, true)
}

/// Rows of the HTTP trace timing table (`--show-trace-timing`): k6's phases in request
/// order, then the totals, the connection and the bytes and chunks.
pub const HTTP_TRACE_ROWS: [&str; 14] = [
    "http_req_blocked",
    "http_req_dns_lookup",
    "http_req_connecting",
    "http_req_sending",
    "http_req_waiting",
    "http_req_receiving",
    "http_req_duration",
    "http_req_connection_overhead",
    "http_req_total",
    "http_req_connection_reused",
    "http_req_data_sent",
    "http_req_data_received",
    "http_req_chunks_sent",
    "http_req_chunks_received",
];

/// AIPerf's "HTTP Trace Timing" console table (`--show-trace-timing`), titled
/// `inferbench | HTTP Trace Timing`: the `http_req_*` metrics of the summary. None when the
/// summary has none (no request was sent over HTTP).
pub fn render_http_trace_timing(summary: &Summary) -> Option<String> {
    let mut t = new_table(&COLUMNS);
    let mut any = false;
    for tag in HTTP_TRACE_ROWS {
        if let Some(m) = summary.get(tag) {
            t.add_row(row(m));
            any = true;
        }
    }
    if !any {
        return None;
    }
    for i in 1..COLUMNS.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    Some(titled("inferbench | HTTP Trace Timing", &t))
}

/// Whether every shown value of a metric is zero.
fn all_zero(m: &MetricResult) -> bool {
    match &m.value {
        MetricValue::Scalar { value } => *value == 0.0,
        MetricValue::Distribution { stats } => COLUMNS[1..]
            .iter()
            .all(|c| stats.get(c).is_none_or(|v| v == 0.0)),
    }
}

fn render(summary: &Summary, terminal: bool) -> String {
    // Without streaming metrics, the time-weighted token rates have nothing to weigh.
    let drop_zero_rows = terminal && summary.get("time_to_first_token").is_none();
    let mut out = String::from("\n");
    if !summary.error_summary.is_empty() {
        let mut t = new_table(&["Code", "Type", "Message", "Count"]);
        // Long server messages wrap instead of making the table as wide as the message.
        t.set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(140);
        for g in &summary.error_summary {
            t.add_row(vec![
                g.code.map_or("N/A".to_string(), |c| c.to_string()),
                g.error_type.clone(),
                g.message.clone(),
                g.count.to_string(),
            ]);
        }
        for i in [0, 1, 3] {
            if let Some(c) = t.column_mut(i) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
        out.push_str(&titled("inferbench | Error Summary", &t));
        out.push('\n');
    }
    let mut t = new_table(&COLUMNS);
    // inferbench's expected-answer scores follow AIPerf's rows, in the same table.
    for tag in CONSOLE_ROWS.iter().chain(CORRECTNESS_ROWS.iter()) {
        if let Some(m) = summary.get(tag) {
            t.add_row(row(m));
        }
    }
    for i in 0..COLUMNS.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let title = format!("inferbench | LLM Metrics ({})", summary.definitions);
    out.push_str(&titled(&title, &t));
    // AIPerf's time-weighted tables, then the client's own schedule evidence, when the
    // summary carries them.
    for (title, rows, time_weighted) in [
        (
            "inferbench | LLM Metrics: Effective (time-weighted)",
            &EFFECTIVE_ROWS[..],
            true,
        ),
        (
            "inferbench | LLM Metrics: Active (time-weighted)",
            &ACTIVE_ROWS[..],
            true,
        ),
        (
            "inferbench | Schedule (did the client send the planned load?)",
            &SCHEDULE_ROWS[..],
            false,
        ),
        (
            "inferbench | Server and GPUs (their own counters; histogram estimates are not client percentiles)",
            &TELEMETRY_ROWS[..],
            false,
        ),
    ] {
        let mut t = new_table(&COLUMNS);
        let mut any = false;
        for tag in rows {
            if let Some(m) = summary.get(tag) {
                if drop_zero_rows && time_weighted && all_zero(m) {
                    continue;
                }
                t.add_row(row(m));
                any = true;
            }
        }
        if any {
            for i in 0..COLUMNS.len() {
                if let Some(c) = t.column_mut(i) {
                    c.set_cell_alignment(CellAlignment::Right);
                }
            }
            out.push('\n');
            out.push_str(&titled(title, &t));
        }
    }
    out
}

/// Rows of the run's correctness against its expected answers (inferbench's own metrics,
/// in percent; `docs/correctness.md`), shown under the speed metrics.
pub const CORRECTNESS_ROWS: [&str; 4] = [
    "answer_accuracy",
    "answer_accuracy_ci_low",
    "answer_accuracy_ci_high",
    "degenerate_output_fraction",
];

/// Rows of the server's own metrics and the GPUs' telemetry over the profiling window
/// (inferbench's; docs/telemetry.md), in their own table, never among the client's.
pub const TELEMETRY_ROWS: [&str; 18] = [
    "server_output_token_throughput",
    "server_prompt_token_throughput",
    "server_running_requests",
    "server_waiting_requests",
    "server_waiting_requests_max",
    "server_kv_cache_usage",
    "server_ttft_mean",
    "server_ttft_p99_estimate",
    "server_itl_mean",
    "server_itl_p99_estimate",
    "server_e2e_mean",
    "server_e2e_p99_estimate",
    "server_counter_resets",
    "client_minus_server_ttft",
    "gpu_power",
    "gpu_energy",
    "energy_per_output_token",
    "aiperf_server_metric_differences",
];

/// AIPerf's "Effective" table rows, in its order.
const EFFECTIVE_ROWS: [&str; 10] = [
    "effective_concurrency",
    "effective_decode_throughput",
    "effective_prefill_throughput",
    "effective_decode_concurrency",
    "effective_prefill_concurrency",
    "effective_total_throughput",
    "effective_decode_throughput_per_user",
    "effective_prefill_throughput_per_user",
    "tokens_in_flight",
    "effective_latency",
];

/// AIPerf's "Active" table rows, in its order.
const ACTIVE_ROWS: [&str; 5] = [
    "active_decode_throughput",
    "active_prefill_throughput",
    "active_decode_throughput_per_user",
    "active_prefill_throughput_per_user",
    "active_total_throughput",
];

/// Rows of the schedule table, in order (inferbench's own metrics).
const SCHEDULE_ROWS: [&str; 8] = [
    "schedule_lag",
    "target_request_rate",
    "scheduled_request_rate",
    "achieved_request_rate",
    "time_to_first_token_from_planned",
    "request_latency_from_planned",
    "in_flight_requests",
    "schedule_kept",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(format_thousands(Some(1251.6155)), "1,251.62");
        assert_eq!(format_thousands(Some(5600.60569820833)), "5,600.61");
        assert_eq!(format_thousands(Some(999.999)), "1,000.00");
        assert_eq!(format_thousands(Some(22.371)), "22.37");
        assert_eq!(format_thousands(Some(1234567.0)), "1,234,567.00");
        assert_eq!(format_thousands(Some(-1234.5)), "-1,234.50");
        assert_eq!(format_thousands(Some(0.0)), "0.00");
        assert_eq!(format_thousands(None), "N/A");
        assert_eq!(format_thousands(Some(f64::NAN)), "N/A");
    }

    fn dist(tag: &str, header: &str, v: f64) -> MetricResult {
        let stats = inferbench_core::summary::Stats {
            avg: Some(v),
            min: Some(v),
            max: Some(v),
            p99: Some(v),
            p90: Some(v),
            p50: Some(v),
            std: Some(0.0),
            count: 1,
            ..Default::default()
        };
        MetricResult {
            tag: tag.into(),
            header: header.into(),
            unit: "x".into(),
            value: MetricValue::Distribution { stats },
        }
    }

    /// A non-streaming run as AIPerf's S5 fixture: a non-zero effective concurrency, a
    /// zero effective decode throughput, an all-zero Active table.
    fn non_streaming() -> Summary {
        Summary {
            definitions: "aiperf-0.13".into(),
            metrics: vec![
                dist("request_latency", "Request Latency", 98.9),
                dist("effective_concurrency", "Effective Concurrency", 3.87),
                dist(
                    "effective_decode_throughput",
                    "Effective Decode Throughput",
                    0.0,
                ),
                dist("active_decode_throughput", "Active Decode Throughput", 0.0),
            ],
            error_summary: Vec::new(),
        }
    }

    #[test]
    fn the_file_keeps_aiperfs_zero_tables_the_terminal_does_not() {
        let s = non_streaming();
        let file = render_console(&s);
        assert!(file.contains("Effective Decode Throughput"), "{file}");
        assert!(file.contains("LLM Metrics: Active"), "{file}");
        let term = render_console_for_terminal(&s);
        assert!(term.contains("Effective Concurrency"), "{term}");
        assert!(term.contains("3.87"), "{term}");
        assert!(!term.contains("Effective Decode Throughput"), "{term}");
        assert!(!term.contains("LLM Metrics: Active"), "{term}");
        // A streaming run (it has a TTFT) prints every row, zero or not.
        let mut s = non_streaming();
        s.metrics
            .push(dist("time_to_first_token", "Time to First Token", 20.0));
        assert_eq!(render_console_for_terminal(&s), render_console(&s));
    }

    #[test]
    fn answer_accuracy_follows_the_speed_metrics_in_their_table() {
        let mut s = non_streaming();
        s.metrics.push(MetricResult {
            tag: "answer_accuracy".into(),
            header: "Answer accuracy".into(),
            unit: "%".into(),
            value: MetricValue::Scalar { value: 92.0 },
        });
        let out = render_console(&s);
        let acc = out.find("Answer accuracy (%)").expect("the accuracy row");
        let latency = out.find("Request Latency").unwrap();
        let effective = out.find("LLM Metrics: Effective").unwrap();
        assert!(latency < acc && acc < effective, "{out}");
        assert!(out.contains("92.00"), "{out}");
    }

    #[test]
    fn the_http_trace_timing_table_lists_the_http_metrics_in_k6_order() {
        let s = non_streaming();
        assert_eq!(render_http_trace_timing(&s), None);
        let mut s = non_streaming();
        s.metrics
            .push(dist("http_req_waiting", "HTTP Waiting (TTFB)", 20.5));
        s.metrics
            .push(dist("http_req_blocked", "HTTP Blocked", 0.01));
        let t = render_http_trace_timing(&s).unwrap();
        assert!(t.contains("inferbench | HTTP Trace Timing"), "{t}");
        let blocked = t.find("HTTP Blocked").unwrap();
        let waiting = t.find("HTTP Waiting (TTFB)").unwrap();
        assert!(blocked < waiting, "{t}");
        assert!(t.contains("20.50") && !t.contains("Request Latency"), "{t}");
    }
}
