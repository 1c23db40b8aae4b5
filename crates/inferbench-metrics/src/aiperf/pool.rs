//! The fold's metric columns: one per row of the set's table ([`METRICS`]), found by the
//! row's position. Every record adds about 33 values; finding each value's column by its
//! position instead of hashing its tag (and looking its unit up the same way) was the
//! largest part of the fold's cost on the writer thread (docs/timing.md).

use super::table::{METRICS, const_starts_with};
use crate::column::Column;

/// The position of `tag` in [`METRICS`]. Evaluated at compile time for the fixed tags, where
/// a tag missing from the table fails the build.
pub(super) const fn slot_of(tag: &str) -> usize {
    let mut i = 0;
    while i < METRICS.len() {
        if str_eq(METRICS[i].0, tag) {
            return i;
        }
        i += 1;
    }
    panic!("a tag of the fold is not a row of aiperf::table::METRICS")
}

const fn str_eq(a: &str, b: &str) -> bool {
    a.len() == b.len() && const_starts_with(a, b)
}

/// The columns, most of them empty for a given run.
#[derive(Default)]
pub(super) struct Pool {
    cols: Vec<Column>,
}

impl Pool {
    /// The column of a slot, created with the others on first use.
    pub(super) fn at(&mut self, slot: usize) -> &mut Column {
        if self.cols.is_empty() {
            self.cols.resize_with(METRICS.len(), Column::new);
        }
        &mut self.cols[slot]
    }

    /// The column of a slot, when it holds values.
    pub(super) fn col(&self, slot: usize) -> Option<&Column> {
        self.cols.get(slot).filter(|c| !c.is_empty())
    }

    /// The column of `tag`, when it holds values.
    pub(super) fn get(&self, tag: &str) -> Option<&Column> {
        self.col(find(tag)?)
    }

    /// Takes the column of `tag` out (empty when it had none).
    pub(super) fn take(&mut self, tag: &str) -> Column {
        find(tag)
            .and_then(|slot| self.cols.get_mut(slot))
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Frees every column but `tag`'s.
    pub(super) fn keep_only(&mut self, tag: &str) {
        let keep = self.take(tag);
        self.cols.clear();
        if let (Some(slot), false) = (find(tag), keep.is_empty()) {
            *self.at(slot) = keep;
        }
    }
}

/// The slot of a tag known only at run time (the end of the run's lookups).
fn find(tag: &str) -> Option<usize> {
    METRICS.iter().position(|(t, _, _)| *t == tag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_table_positions_and_columns_are_found_by_tag() {
        const TTFT: usize = slot_of("time_to_first_token");
        assert_eq!(METRICS[TTFT].0, "time_to_first_token");
        let mut p = Pool::default();
        assert!(p.get("time_to_first_token").is_none(), "no values yet");
        p.at(TTFT).push(5.0);
        p.at(slot_of("request_latency")).push(7.0);
        assert_eq!(p.get("time_to_first_token").unwrap().to_vec(), vec![5.0]);
        assert!(p.get("no_such_metric").is_none());
        p.keep_only("request_latency");
        assert!(p.get("time_to_first_token").is_none(), "freed");
        assert_eq!(p.take("request_latency").to_vec(), vec![7.0]);
        assert!(p.get("request_latency").is_none(), "taken");
    }
}
