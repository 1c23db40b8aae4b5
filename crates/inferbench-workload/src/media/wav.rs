//! PCM WAV files: writing the 44-byte canonical header and little-endian samples, and
//! reading a WAV file's length (its `data` size over the `fmt ` byte rate).

/// A WAV file of `channels` interleaved channels at `rate` Hz, `bits` per sample (8, 16,
/// 24 or 32), from samples in [-1, 1] (interleaved). 8-bit samples are unsigned (offset
/// 128), the others signed, as WAV stores them; each is scaled by the largest positive
/// value of its width and truncated toward zero.
pub fn encode_pcm(rate: u32, bits: u16, channels: u16, samples: &[f64]) -> Vec<u8> {
    let width = usize::from(bits / 8);
    let data_len = samples.len() * width;
    let mut out = Vec::with_capacity(44 + data_len);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&((36 + data_len) as u32).to_le_bytes());
    out.extend_from_slice(b"WAVE");
    out.extend_from_slice(b"fmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&channels.to_le_bytes());
    out.extend_from_slice(&rate.to_le_bytes());
    let block = u32::from(channels) * u32::from(bits / 8);
    out.extend_from_slice(&(rate * block).to_le_bytes());
    out.extend_from_slice(&(block as u16).to_le_bytes());
    out.extend_from_slice(&bits.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&(data_len as u32).to_le_bytes());
    for &s in samples {
        let s = s.clamp(-1.0, 1.0);
        match bits {
            8 => out.push((s * 127.0) as i8 as u8 ^ 0x80),
            16 => out.extend_from_slice(&((s * 32767.0) as i16).to_le_bytes()),
            24 => out.extend_from_slice(&((s * 8_388_607.0) as i32).to_le_bytes()[..3]),
            _ => out.extend_from_slice(&((s * 2_147_483_647.0) as i32).to_le_bytes()),
        }
    }
    out
}

/// Seconds of audio in a WAV file: the `data` chunk's size over the `fmt ` chunk's byte
/// rate. None when the bytes are not a RIFF/WAVE file with both chunks.
pub fn duration_seconds(wav: &[u8]) -> Option<f64> {
    if wav.len() < 12 || &wav[..4] != b"RIFF" || &wav[8..12] != b"WAVE" {
        return None;
    }
    let mut at = 12;
    let mut byte_rate = None;
    while at + 8 <= wav.len() {
        let id = &wav[at..at + 4];
        let len = u32::from_le_bytes(wav[at + 4..at + 8].try_into().ok()?) as usize;
        let body = at + 8;
        if id == b"fmt " && body + 12 <= wav.len() {
            byte_rate = Some(u32::from_le_bytes(
                wav[body + 8..body + 12].try_into().ok()?,
            ));
        }
        if id == b"data" {
            let rate = byte_rate.filter(|r| *r > 0)?;
            // A streamed file may leave the size unset (0 or 0xFFFFFFFF): count what is there.
            let len = if len == 0 || body + len > wav.len() {
                wav.len() - body
            } else {
                len
            };
            return Some(len as f64 / f64::from(rate));
        }
        // Chunks are padded to an even size.
        at = body.checked_add(len + (len & 1))?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header of a two-sample 16-bit mono file at 16 kHz, byte by byte.
    #[test]
    fn header_by_hand() {
        let w = encode_pcm(16_000, 16, 1, &[0.5, -1.0]);
        let mut want = Vec::new();
        want.extend_from_slice(b"RIFF");
        want.extend_from_slice(&[40, 0, 0, 0]); // 36 + 4 data bytes
        want.extend_from_slice(b"WAVEfmt ");
        want.extend_from_slice(&[16, 0, 0, 0, 1, 0, 1, 0]); // fmt size, PCM, 1 channel
        want.extend_from_slice(&[0x80, 0x3E, 0, 0]); // 16000
        want.extend_from_slice(&[0x00, 0x7D, 0, 0]); // byte rate 32000
        want.extend_from_slice(&[2, 0, 16, 0]); // block align 2, 16 bits
        want.extend_from_slice(b"data");
        want.extend_from_slice(&[4, 0, 0, 0]);
        // 0.5 × 32767 = 16383.5 → 16383 = 0x3FFF; −1 × 32767 = −32767 = 0x8001.
        want.extend_from_slice(&[0xFF, 0x3F, 0x01, 0x80]);
        assert_eq!(w, want);
        assert_eq!(duration_seconds(&w), Some(4.0 / 32_000.0));
    }

    #[test]
    fn other_depths_and_stereo() {
        // 8-bit: 0 → 128, 1 → 127 + 128 = 255, −1 → −127 + 128 = 1.
        let w = encode_pcm(8_000, 8, 1, &[0.0, 1.0, -1.0]);
        assert_eq!(&w[44..], &[128, 255, 1]);
        assert_eq!(&w[34..36], &[8, 0]);
        // 24-bit: 1 → 0x7FFFFF, little-endian in three bytes.
        let w = encode_pcm(8_000, 24, 2, &[1.0, 0.0]);
        assert_eq!(&w[44..], &[0xFF, 0xFF, 0x7F, 0, 0, 0]);
        assert_eq!(&w[22..24], &[2, 0]); // channels
        assert_eq!(&w[32..34], &[6, 0]); // block align 2 × 3
        // 48000 byte/s, 6 bytes: 1/8000 s.
        assert_eq!(duration_seconds(&w), Some(6.0 / 48_000.0));
    }

    #[test]
    fn duration_skips_other_chunks_and_refuses_non_wav() {
        let mut w = encode_pcm(16_000, 16, 1, &[0.0; 8]);
        // Put a 3-byte LIST chunk (padded to 4) between fmt and data.
        let data = w.split_off(36);
        w.extend_from_slice(b"LIST");
        w.extend_from_slice(&[3, 0, 0, 0, b'a', b'b', b'c', 0]);
        w.extend_from_slice(&data);
        assert_eq!(duration_seconds(&w), Some(16.0 / 32_000.0));
        assert_eq!(duration_seconds(b"ID3\x03not a wav"), None);
        assert_eq!(duration_seconds(b"RIFF"), None);
    }

    proptest::proptest! {
        #[test]
        fn duration_never_panics_and_round_trips(
            junk in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
            rate in 1u32..200_000,
            bits in proptest::sample::select(vec![8u16, 16, 24, 32]),
            channels in 1u16..3,
            frames in 0usize..300,
        ) {
            let _ = duration_seconds(&junk);
            let w = encode_pcm(rate, bits, channels, &vec![0.25; frames * usize::from(channels)]);
            let bytes = frames * usize::from(channels) * usize::from(bits / 8);
            let want = bytes as f64 / f64::from(rate * u32::from(channels) * u32::from(bits / 8));
            proptest::prop_assert_eq!(duration_seconds(&w), Some(want));
        }
    }
}
