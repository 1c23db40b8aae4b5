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
    rank_from(bytes, slot_of(bytes))
}

/// `rank(bytes)`, with `slot = slot_of(bytes)` already computed.
#[inline]
pub fn rank_from(bytes: &[u8], mut slot: usize) -> Option<u32> {
    loop {
        let entry = SLOTS.get(16 * slot..16 * slot + 16)?;
        let value = u32::from_le_bytes([entry[12], entry[13], entry[14], entry[15]]);
        if value == 0 {
            return None;
        }
        let rank = (value & 0x00ff_ffff) - 1;
        let len_code = (value >> 24) as usize;
        let found = if len_code <= 12 {
            len_code == bytes.len() && &entry[..len_code] == bytes
        } else {
            bytes.len() > 12 && token(rank) == Some(bytes)
        };
        if found {
            return Some(rank);
        }
        slot = (slot + 1) & MASK;
    }
}
