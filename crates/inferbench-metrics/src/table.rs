//! A definition set's metric table: `(tag, header, unit)` rows, and results built from it.

use inferbench_core::summary::{ErrorGroup, MetricResult, MetricValue};

/// One table row: machine tag, human header, display unit.
pub type Row = (&'static str, &'static str, &'static str);

/// (header, unit) of `tag`; empty strings for a tag the table does not list.
pub(crate) fn describe(table: &[Row], tag: &str) -> (&'static str, &'static str) {
    table
        .iter()
        .find(|(t, _, _)| *t == tag)
        .map_or(("", ""), |(_, h, u)| (*h, *u))
}

/// A result of `tag` with the table's header and unit.
pub(crate) fn result(table: &[Row], tag: &str, value: MetricValue) -> MetricResult {
    let (header, unit) = describe(table, tag);
    MetricResult {
        tag: tag.to_string(),
        header: header.to_string(),
        unit: unit.to_string(),
        value,
    }
}

/// Counts one failed request into `groups`, grouped by (code, type, message) in order of
/// first appearance.
pub(crate) fn count_error(
    groups: &mut Vec<ErrorGroup>,
    code: Option<u16>,
    ty: String,
    msg: String,
) {
    match groups
        .iter_mut()
        .find(|g| g.code == code && g.error_type == ty && g.message == msg)
    {
        Some(g) => g.count += 1,
        None => groups.push(ErrorGroup {
            code,
            error_type: ty,
            message: msg,
            count: 1,
        }),
    }
}
