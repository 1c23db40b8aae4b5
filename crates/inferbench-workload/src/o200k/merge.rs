//! Byte-pair merging of one pre-split piece, as tiktoken does it: start from single bytes and
//! repeatedly merge the adjacent pair whose joined bytes have the lowest rank (the leftmost
//! on a tie) until no adjacent pair joins into a token. Pieces under 100 bytes rescan a flat
//! list (short pieces are the common case and the list stays in cache); longer ones keep the
//! candidate merges in a heap, so a long run of letters is not quadratic. Both give the same
//! merges.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::hot::Hot;

const NONE: u32 = u32::MAX;

/// Calls `emit` with the rank of each token of `piece` (non-empty), in order.
pub fn merge(piece: &[u8], hot: &mut Hot, emit: &mut impl FnMut(u32)) {
    if piece.len() < 100 {
        merge_small(piece, hot, emit);
    } else {
        merge_large(piece, hot, emit);
    }
}

fn merge_small(piece: &[u8], hot: &mut Hot, emit: &mut impl FnMut(u32)) {
    let mut rank_or_none = |bytes: &[u8]| hot.rank(bytes).unwrap_or(NONE);
    // (start of part, rank of the part joined with the next one); two sentinels at the end.
    let mut parts = [(0u32, NONE); 101];
    let n = piece.len();
    let mut len = n + 1;
    for (i, p) in parts.iter_mut().enumerate().take(n.saturating_sub(1)) {
        *p = (i as u32, rank_or_none(&piece[i..i + 2]));
    }
    parts[n - 1] = ((n - 1) as u32, NONE);
    parts[n] = (n as u32, NONE);
    // The rank of parts i and i + 1 joined, once i + 1 and i + 2 are one part.
    let mut joined = |parts: &[(u32, u32)], len: usize, i: usize| -> u32 {
        if i + 3 < len {
            rank_or_none(&piece[parts[i].0 as usize..parts[i + 3].0 as usize])
        } else {
            NONE
        }
    };
    loop {
        let mut min = (NONE, usize::MAX);
        for (i, &(_, r)) in parts[..len - 1].iter().enumerate() {
            if r < min.0 {
                min = (r, i);
            }
        }
        if min.0 == NONE {
            break;
        }
        let i = min.1;
        if i > 0 {
            parts[i - 1].1 = joined(&parts, len, i - 1);
        }
        parts[i].1 = joined(&parts, len, i);
        parts.copy_within(i + 2..len, i + 1);
        len -= 1;
    }
    for w in parts[..len].windows(2) {
        emit(
            hot.rank(&piece[w[0].0 as usize..w[1].0 as usize])
                .unwrap_or(NONE),
        );
    }
}

fn merge_large(piece: &[u8], hot: &mut Hot, emit: &mut impl FnMut(u32)) {
    let mut rank_or_none = |bytes: &[u8]| hot.rank(bytes).unwrap_or(NONE);
    let n = piece.len();
    // Parts as a linked list over their start offsets: end[s] is where the part starting at
    // s ends, prev[s] the start of the part before; pair[s] the rank of s's part joined with
    // the next (NONE when they do not join or s is no longer a part's start).
    let mut end: Vec<usize> = (1..=n).collect();
    let mut prev: Vec<usize> = (0..n).map(|s| s.wrapping_sub(1)).collect();
    let mut pair = vec![NONE; n];
    let mut heap = BinaryHeap::new();
    for s in 0..n - 1 {
        let r = rank_or_none(&piece[s..s + 2]);
        pair[s] = r;
        if r != NONE {
            heap.push(Reverse((r, s)));
        }
    }
    while let Some(Reverse((r, s))) = heap.pop() {
        if pair[s] != r {
            continue; // stale: s's pair changed since this entry was pushed
        }
        let right = end[s];
        let right_end = end[right];
        end[s] = right_end;
        pair[right] = NONE;
        if right_end < n {
            prev[right_end] = s;
        }
        pair[s] = if right_end < n {
            rank_or_none(&piece[s..end[right_end]])
        } else {
            NONE
        };
        if pair[s] != NONE {
            heap.push(Reverse((pair[s], s)));
        }
        if s > 0 {
            let p = prev[s];
            pair[p] = rank_or_none(&piece[p..right_end]);
            if pair[p] != NONE {
                heap.push(Reverse((pair[p], p)));
            }
        }
    }
    let mut s = 0;
    while s < n {
        emit(rank_or_none(&piece[s..end[s]]));
        s = end[s];
    }
}
