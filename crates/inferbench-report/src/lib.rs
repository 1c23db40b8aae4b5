//! Charts of inferbench runs. `data` holds the chart data as pure functions of small
//! series (bucket boundaries, rolling percentiles, CDFs, the Pareto front, lag over time),
//! each tested by hand; `svg` draws them as self-contained SVG (no fonts, no system
//! libraries, no network: text is left to the viewer's default sans-serif font).
//! `server_series` turns the raw scrape file into server-metric series; `html` builds the
//! self-contained HTML report. `swim_lane*` and `turn_messages` are `analyze swim-lane` and
//! `analyze turn-messages` (AIPerf's post-run views).
//!
//! Library code only: it returns strings and numbers, it never prints. (`html` reads the run
//! directories through the run library.)

pub mod charts;
pub mod data;
pub mod html;
mod jsonl;
pub mod plot_spec;
pub mod png;
pub mod server_series;
pub mod speed_bench;
pub mod svg;
pub mod swim_lane;
pub mod swim_lane_draw;
pub mod swim_lane_layout;
pub mod turn_messages;
