//! A per-thread memo in front of the vocabulary table. The table is 8 MiB and a lookup lands
//! on a random line of it, which in a run (the writer thread counting each response between
//! serialising records) is a cache miss nearly every time: a profile put those misses at
//! 2 % of a streaming run's CPU. Text repeats its pieces, so the last answer for each of
//! 8,192 hash buckets, kept in 192 KiB, answers most lookups from the core's own cache.
//! Answers are exact: an entry is used only when its bytes equal the piece.

use super::hash::slot_of;
use super::table;

const BITS: u32 = 13;
/// Pieces longer than this are looked up in the table directly.
const MAX_LEN: usize = 16;
const NONE: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Entry {
    /// 0 for an empty entry (pieces are never empty).
    len: u8,
    bytes: [u8; MAX_LEN],
    /// The rank, or NONE when the bytes are no token.
    rank: u32,
}

pub struct Hot {
    entries: Box<[Entry]>,
}

impl Hot {
    pub fn new() -> Hot {
        let empty = Entry {
            len: 0,
            bytes: [0; MAX_LEN],
            rank: NONE,
        };
        Hot {
            entries: vec![empty; 1 << BITS].into_boxed_slice(),
        }
    }

    /// `table::rank(bytes)`.
    #[inline]
    pub fn rank(&mut self, bytes: &[u8]) -> Option<u32> {
        let len = bytes.len();
        if len == 0 || len > MAX_LEN {
            return table::rank(bytes);
        }
        let slot = slot_of(bytes);
        let e = &mut self.entries[slot & ((1 << BITS) - 1)];
        if usize::from(e.len) == len && &e.bytes[..len] == bytes {
            return (e.rank != NONE).then_some(e.rank);
        }
        let rank = table::rank_from(bytes, slot);
        e.len = len as u8;
        e.bytes[..len].copy_from_slice(bytes);
        e.rank = rank.unwrap_or(NONE);
        rank
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_as_the_table_does_on_hits_misses_and_collisions() {
        // Many more distinct pieces than entries, so buckets are shared and overwritten,
        // each asked twice (the second time usually from the memo), tokens and non-tokens,
        // of every length around the inline limit.
        let mut hot = Hot::new();
        let mut pieces: Vec<Vec<u8>> = (0..6000u32)
            .filter_map(table::token)
            .map(<[u8]>::to_vec)
            .collect();
        pieces.extend((0..3000u32).map(|i| format!("zq{i}xj").into_bytes()));
        pieces.extend((10..20).map(|n| vec![b'a'; n]));
        pieces.extend((1..20).map(|n| " the".repeat(n).into_bytes()));
        for round in 0..2 {
            for p in &pieces {
                assert_eq!(hot.rank(p), table::rank(p), "round {round}: {p:?}");
            }
        }
        assert_eq!(hot.rank(b""), None);
    }
}
