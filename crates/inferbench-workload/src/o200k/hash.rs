//! The hash of the built-in vocabulary's lookup table. Shared, by `#[path]`, with build.rs,
//! which lays the table out: both sides must hash the same bytes to the same slot.

/// Slots in the open-addressing table: a power of two, about 2.6 times the 199,998 ranks,
/// so that probe runs stay short.
pub const SLOT_BITS: u32 = 19;

const K: u64 = 0xf135_7aea_2e62_a9c5;

/// A multiplicative hash (FxHash's step, 8 bytes at a time, the length folded in first);
/// the top `SLOT_BITS` bits index the table.
#[inline]
pub fn slot_of(bytes: &[u8]) -> usize {
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h.rotate_left(26) ^ w).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut b = [0u8; 8];
        b[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(26) ^ u64::from_le_bytes(b)).wrapping_mul(K);
    }
    (h >> (64 - SLOT_BITS)) as usize
}
