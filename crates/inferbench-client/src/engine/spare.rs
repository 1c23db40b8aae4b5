//! Spare event vectors: a finished record's `events` buffer, handed back by whoever wrote
//! the record out, is the next request's.
//!
//! Why: a record's events vector is reserved at a token per event (20 events of 208 bytes
//! at 16 output tokens), above glibc's 1 KiB small-request limit. The record is dropped on
//! the writer thread, so the client's thread allocated a fresh one per request, and each
//! such large request first consolidated the fast bins the writer's frees of the client's
//! small chunks had filled (`malloc_consolidate`, 1 to 1.7 % of a scenario-1 profile). A vector
//! handed back keeps its capacity, so the client's thread makes no large request at all,
//! and it is cleared by the client's thread when taken, so the strings it still holds are
//! freed where the next ones are allocated (glibc's per-thread cache hands them straight
//! back). Together, the run's allocator samples fell from 5.3 to 6.1 % to 4.5 to 4.9 %
//! (docs/timing.md).
//!
//! Process-wide: the vectors are empty and interchangeable, so engines in one process
//! (tests run several) share them safely. Bounded in count and in each vector's capacity.

use std::sync::Mutex;

use inferbench_core::record::Event;

/// Vectors kept at most: a concurrency-64 run has at most a few hundred records between
/// the client and the writer. Each still holds its last record's strings until reused.
const KEEP: usize = 256;
/// A vector with room for more events than this (a long response, whose allocation is
/// small beside its duration) is freed, not kept: the spares hold at most 256 × 64 events
/// (3.4 MB of events, with their last strings).
const MAX_CAPACITY: usize = 64;

static SPARES: Spares = Spares::new();

/// An empty events vector with room for `n`: a spare when there is one.
pub fn events_with_capacity(n: usize) -> Vec<Event> {
    SPARES.take(n)
}

/// Hands a finished record's events vector back for the next request (after the record
/// has been written out), its events still in it.
pub fn recycle(events: Vec<Event>) {
    SPARES.give(events)
}

struct Spares(Mutex<Vec<Vec<Event>>>);

impl Spares {
    const fn new() -> Spares {
        Spares(Mutex::new(Vec::new()))
    }

    fn take(&self, n: usize) -> Vec<Event> {
        let spare = self.0.lock().ok().and_then(|mut s| s.pop());
        let mut v = spare.unwrap_or_default();
        // Cleared here, not by the giver: the strings are freed on the thread that
        // allocates the next ones, where glibc's per-thread cache hands them back.
        v.clear();
        v.reserve(n);
        v
    }

    fn give(&self, events: Vec<Event>) {
        if events.capacity() == 0 || events.capacity() > MAX_CAPACITY {
            return;
        }
        if let Ok(mut s) = self.0.lock()
            && s.len() < KEEP
        {
            s.push(events);
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.0.lock().map(|s| s.len()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events_with_room(room: usize) -> Vec<Event> {
        let mut events = Vec::with_capacity(room);
        events.push(Event {
            content: Some("x".into()),
            ..Default::default()
        });
        events
    }

    #[test]
    fn a_recycled_vector_comes_back_empty_with_its_room() {
        let spares = Spares::new();
        let events = events_with_room(37);
        let at = events.as_ptr();
        spares.give(events);
        assert_eq!(spares.len(), 1);
        let v = spares.take(20);
        assert!(v.is_empty());
        assert_eq!(v.as_ptr(), at, "the same buffer, not a new one");
        assert_eq!(v.capacity(), 37);
        assert_eq!(spares.len(), 0);
        // None left: a fresh one.
        assert!(spares.take(5).capacity() >= 5);
    }

    #[test]
    fn oversized_and_surplus_vectors_are_freed() {
        let spares = Spares::new();
        spares.give(events_with_room(MAX_CAPACITY + 1));
        spares.give(Vec::new());
        assert_eq!(spares.len(), 0);
        for _ in 0..KEEP + 3 {
            spares.give(events_with_room(8));
        }
        assert_eq!(spares.len(), KEEP);
    }
}
