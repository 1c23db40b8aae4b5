//! Lays out the built-in `o200k_base` vocabulary (assets/o200k_base.tiktoken) as three tables
//! compiled into the binary, so that loading the tokenizer costs nothing at start-up (building
//! a hash map of 199,998 base64-decoded tokens took about 0.1 s a run):
//! - `o200k_bytes.bin`: every token's bytes, in rank order, back to back;
//! - `o200k_offsets.bin`: 199,999 little-endian u32, where rank r's bytes start (and end);
//! - `o200k_slots.bin`: 2^19 slots of 16 bytes, an open-addressing table (linear probing) by
//!   the bytes' hash (src/o200k/hash.rs): a token of up to 12 bytes is kept in the slot
//!   itself (bytes 0..12, zero-padded), so that a lookup touches one cache line, not three;
//!   bytes 12..16 are a little-endian u32, `rank + 1` in the low 24 bits and the length in
//!   the high 8 (13 for a longer token, whose bytes are then compared through the offsets);
//!   an empty slot is all zeros.

#[path = "src/o200k/hash.rs"]
mod hash;

use std::path::PathBuf;

fn main() {
    let src = "assets/o200k_base.tiktoken";
    println!("cargo:rerun-if-changed={src}");
    println!("cargo:rerun-if-changed=src/o200k/hash.rs");
    println!("cargo:rerun-if-changed=build.rs");
    let text = std::fs::read_to_string(src).expect("assets/o200k_base.tiktoken");
    let mut blob = Vec::new();
    let mut offsets: Vec<u32> = vec![0];
    let n_slots = 1usize << hash::SLOT_BITS;
    let mut slots = vec![[0u8; 16]; n_slots];
    let mask = n_slots - 1;
    for (line_no, line) in text.lines().enumerate() {
        let (b64, rank) = line.split_once(' ').expect("`base64 rank` lines");
        let rank: usize = rank.parse().expect("a rank");
        assert_eq!(rank, line_no, "ranks are the line numbers, from 0");
        let start = blob.len();
        decode_base64(b64, &mut blob);
        let token = &blob[start..];
        let mut slot = hash::slot_of(token);
        while slots[slot] != [0u8; 16] {
            slot = (slot + 1) & mask;
        }
        assert!(rank + 1 < 1 << 24, "rank fits 24 bits");
        let len_code = token.len().min(13);
        if len_code <= 12 {
            slots[slot][..token.len()].copy_from_slice(token);
        }
        let value = (rank as u32 + 1) | ((len_code as u32) << 24);
        slots[slot][12..].copy_from_slice(&value.to_le_bytes());
        offsets.push(u32::try_from(blob.len()).expect("blob under 4 GiB"));
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let le = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    std::fs::write(out.join("o200k_bytes.bin"), &blob).expect("write o200k_bytes.bin");
    std::fs::write(out.join("o200k_offsets.bin"), le(&offsets)).expect("write offsets");
    std::fs::write(out.join("o200k_slots.bin"), slots.concat()).expect("write slots");
}

/// Standard padded base64 (RFC 4648), appended to `out`.
fn decode_base64(s: &str, out: &mut Vec<u8>) {
    let val = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {s}"),
        }
    };
    let bytes = s.as_bytes();
    assert!(bytes.len().is_multiple_of(4), "base64 length: {s}");
    for quad in bytes.chunks(4) {
        let pad = quad.iter().rev().take_while(|&&c| c == b'=').count();
        let n = quad[..4 - pad]
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &c)| n | (val(c) << (18 - 6 * i)));
        let got = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&got[..3 - pad]);
    }
}
