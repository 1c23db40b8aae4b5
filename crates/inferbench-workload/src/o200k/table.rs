//! The vocabulary's tables, laid out by build.rs and compiled in (see there for the format).

use super::hash::{SLOT_BITS, slot_of};

static BYTES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_bytes.bin"));
static OFFSETS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_offsets.bin"));
static SLOTS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_slots.bin"));

/// Number of ordinary ranks (0..=199,997).
pub const RANKS: u32 = 199_998;

const MASK: usize = (1 << SLOT_BITS) - 1;

#[inline]
fn u32_at(table: &[u8], i: usize) -> u32 {
    table
        .get(4 * i..)
        .and_then(|t| t.first_chunk::<4>())
        .map_or(0, |b| u32::from_le_bytes(*b))
}

/// The bytes of ordinary rank `rank`.
#[inline]
pub fn token(rank: u32) -> Option<&'static [u8]> {
    if rank >= RANKS {
        return None;
    }
    let start = u32_at(OFFSETS, rank as usize) as usize;
    let end = u32_at(OFFSETS, rank as usize + 1) as usize;
    BYTES.get(start..end)
}

/// The rank whose bytes are exactly `bytes`.
#[inline]
pub fn rank(bytes: &[u8]) -> Option<u32> {
    let mut slot = slot_of(bytes);
    loop {
        let v = u32_at(SLOTS, slot);
        if v == 0 {
            return None;
        }
        if token(v - 1) == Some(bytes) {
            return Some(v - 1);
        }
        slot = (slot + 1) & MASK;
    }
}
