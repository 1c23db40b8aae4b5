use super::*;
use serde_json::json;

fn config() -> Value {
    json!({
        "visualization": {
            "multi_run_defaults": ["pareto", "ttft"],
            "multi_run_plots": {
                "pareto": {"type": "pareto", "x": {"metric": "request_latency", "stat": "avg"},
                           "y": {"metric": "output_token_throughput", "stat": "avg"},
                           "labels": ["concurrency"], "groups": ["model"], "title": "P"},
                "ttft": {"type": "scatter_line", "x": {"metric": "time_to_first_token", "stat": "p99"},
                         "y": {"metric": "request_throughput", "stat": "avg"}},
                "unused": {"type": "latency_throughput_uncertainty",
                           "x": {"metric": "request_latency"}, "y": {"metric": "x_per_gpu"}}
            },
            "single_run_defaults": ["per_request", "slices"],
            "single_run_plots": {
                "per_request": {"type": "scatter", "x": "request_number", "y": "time_to_first_token"},
                "slices": {"type": "timeslice", "x": "Timeslice", "y": "Time to First Token",
                           "stat": "avg", "source": "timeslices"}
            }
        },
        "settings": {}
    })
}

#[test]
fn the_defaults_select_the_plots_drawn() {
    let c = PlotConfig::parse("plot", &config()).unwrap();
    let names: Vec<&str> = c.multi_run.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["pareto", "ttft"]);
    assert_eq!(c.multi_run[0].kind, Kind::Pareto);
    assert_eq!(c.multi_run[0].groups, ["model"]);
    assert_eq!(c.multi_run[1].x.stat.as_deref(), Some("p99"));
    let names: Vec<&str> = c.single_run.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["per_request", "slices"]);
    assert_eq!(c.single_run[1].y.stat.as_deref(), Some("avg"));
}

#[test]
fn bad_plot_configs_name_the_field() {
    let mut c = config();
    c["visualization"]["multi_run_defaults"] = json!(["nope"]);
    let e = PlotConfig::parse("plot", &c).unwrap_err();
    assert!(
        e.starts_with("plot.visualization.multi_run_defaults[0]: \"nope\": no such plot"),
        "{e}"
    );
    let mut c = config();
    c["visualization"]["single_run_plots"]["slices"]["type"] = json!("histogram");
    let e = PlotConfig::parse("plot", &c).unwrap_err();
    assert!(
        e.starts_with("plot.visualization.single_run_plots.slices.type \"histogram\": not built"),
        "{e}"
    );
    let mut c = config();
    c["visualization"]["multi_run_plots"]["ttft"]["x"] = json!({"stat": "avg"});
    let e = PlotConfig::parse("plot", &c).unwrap_err();
    assert_eq!(
        e,
        "plot.visualization.multi_run_plots.ttft.x.metric: missing"
    );
    let e = PlotConfig::parse("plot", &json!({"visualisation": {}})).unwrap_err();
    assert!(e.starts_with("plot.visualisation: not a part"), "{e}");
}

fn summary(model: &str, lat: f64, tput: f64) -> Value {
    json!({
        "request_latency": {"avg": lat},
        "output_token_throughput": {"avg": tput},
        "input_config": {"models": {"items": [{"name": model}]},
                         "phases": [{"kind": "warmup", "concurrency": 8},
                                    {"kind": "profiling", "concurrency": lat}]}
    })
}

#[test]
fn a_pareto_chart_keeps_the_runs_no_other_beats_on_both_axes() {
    let c = PlotConfig::parse("plot", &config()).unwrap();
    // Latency is better low, throughput high. (10, 100) beats (20, 90); (30, 300) is
    // slower but has more throughput: the front is (10, 100), (30, 300).
    let runs = [
        summary("m", 20.0, 90.0),
        summary("m", 10.0, 100.0),
        summary("m", 30.0, 300.0),
    ];
    let chart = multi_run_chart(&c.multi_run[0], &runs).unwrap();
    assert_eq!(chart.title, "P");
    assert_eq!(chart.series.len(), 2);
    assert_eq!(chart.series[0].name, "m");
    assert_eq!(
        chart.series[0].points,
        [(10.0, 100.0), (20.0, 90.0), (30.0, 300.0)]
    );
    assert_eq!(chart.series[1].points, [(10.0, 100.0), (30.0, 300.0)]);
    assert_eq!(chart.x_label, "request_latency (avg)");
}

#[test]
fn groups_split_the_runs_into_series_and_a_missing_metric_skips_the_chart() {
    let c = PlotConfig::parse("plot", &config()).unwrap();
    let runs = [summary("a", 1.0, 2.0), summary("b", 3.0, 4.0)];
    let chart = multi_run_chart(&c.multi_run[0], &runs).unwrap();
    let names: Vec<&str> = chart.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a", "a: Pareto front", "b", "b: Pareto front"]);
    // A phase field groups by the profiling phase's value, not the warmup's.
    let mut by_conc = c.multi_run[0].clone();
    by_conc.groups = vec!["concurrency".into()];
    let chart = multi_run_chart(&by_conc, &runs).unwrap();
    assert_eq!(chart.series[0].name, "1.0");
    // No run has time_to_first_token p99: nothing to draw.
    assert!(multi_run_chart(&c.multi_run[1], &runs).is_none());
}

#[test]
fn a_scatter_numbers_the_requests_in_start_order() {
    let c = PlotConfig::parse("plot", &config()).unwrap();
    let rec = |start: u64, ttft: f64| {
        json!({"metadata": {"request_start_ns": start},
               "metrics": {"time_to_first_token": {"value": ttft, "unit": "ms"}}})
    };
    let recs = [
        rec(30, 3.0),
        rec(10, 1.0),
        rec(20, 2.0),
        json!({"metadata": {"request_start_ns": 5}, "metrics": {}}),
    ];
    let chart = single_run_chart(&c.single_run[0], &recs, None).unwrap();
    // The record without TTFT is request 0; the others are 1, 2, 3 by start.
    assert_eq!(chart.series[0].points, [(1.0, 1.0), (2.0, 2.0), (3.0, 3.0)]);
}

#[test]
fn a_timeslice_chart_reads_the_stat_of_the_display_name_per_slice() {
    let c = PlotConfig::parse("plot", &config()).unwrap();
    let csv = "Timeslice,Start_NS,End_NS,Metric,Unit,Stat,Value\n\
               0,0,10,Time to First Token,ms,avg,5.5\n\
               0,0,10,Time to First Token,ms,p99,9\n\
               0,0,10,Request Latency,ms,avg,50\n\
               1,10,20,Time to First Token,ms,avg,6.25\n";
    let chart = single_run_chart(&c.single_run[1], &[], Some(csv)).unwrap();
    assert_eq!(chart.series[0].points, [(0.0, 5.5), (1.0, 6.25)]);
    // Without the timeslice file there is nothing to draw.
    assert!(single_run_chart(&c.single_run[1], &[], None).is_none());
}
