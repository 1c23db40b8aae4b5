//! Gzip files (RFC 1952) read whole: the header, a raw-deflate stream inflated by
//! `miniz_oxide`, then the CRC-32 and length checked, member after member. TraceLab ships
//! its corpus gzipped (`*.jsonl.gz`).

use miniz_oxide::inflate::TINFLStatus;
use miniz_oxide::inflate::core::inflate_flags::{
    TINFL_FLAG_HAS_MORE_INPUT, TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
};
use miniz_oxide::inflate::core::{DecompressorOxide, decompress};

/// Largest decompressed size accepted (a guard against a gzip bomb).
const MAX_OUT: usize = 4 << 30;

/// Whether `bytes` start with the gzip magic number.
pub(crate) fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// The decompressed bytes of every member of a gzip file, or what is wrong with it.
pub(crate) fn gunzip(mut bytes: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut members = 0;
    while !bytes.is_empty() {
        // Trailing zero padding after the last member is tolerated (as gzip does).
        if members > 0 && bytes.iter().all(|&b| b == 0) {
            break;
        }
        let body = header_len(bytes)?;
        let start = out.len();
        let used = inflate(&bytes[body..], &mut out)?;
        let trailer = body + used;
        let t = bytes
            .get(trailer..trailer + 8)
            .ok_or("gzip: the file ends before the member's CRC and length")?;
        let crc = u32::from_le_bytes([t[0], t[1], t[2], t[3]]);
        let len = u32::from_le_bytes([t[4], t[5], t[6], t[7]]);
        if crc32(&out[start..]) != crc {
            return Err("gzip: CRC-32 mismatch (the file is corrupt)".into());
        }
        if (out.len() - start) as u32 != len {
            return Err("gzip: length mismatch (the file is corrupt)".into());
        }
        bytes = &bytes[trailer + 8..];
        members += 1;
    }
    if members == 0 {
        return Err("gzip: empty file".into());
    }
    Ok(out)
}

/// Length of a member's header: magic, method 8 (deflate), flags and their optional fields.
fn header_len(b: &[u8]) -> Result<usize, String> {
    if b.len() < 10 || !is_gzip(b) {
        return Err("gzip: not a gzip member (bad magic number)".into());
    }
    if b[2] != 8 {
        return Err(format!("gzip: compression method {} is not deflate", b[2]));
    }
    let flags = b[3];
    let mut i = 10;
    let short = || "gzip: the header is cut short".to_string();
    if flags & 0x04 != 0 {
        let x = b.get(i..i + 2).ok_or_else(short)?;
        i += 2 + u16::from_le_bytes([x[0], x[1]]) as usize;
    }
    for bit in [0x08, 0x10] {
        if flags & bit != 0 {
            let end = b.get(i..).and_then(|r| r.iter().position(|&c| c == 0));
            i += end.ok_or_else(short)? + 1;
        }
    }
    if flags & 0x02 != 0 {
        i += 2;
    }
    if i > b.len() {
        return Err(short());
    }
    Ok(i)
}

/// Inflates one raw-deflate stream from `input` onto `out`; returns the input bytes used.
fn inflate(input: &[u8], out: &mut Vec<u8>) -> Result<usize, String> {
    let mut d = DecompressorOxide::new();
    let base = out.len();
    let mut pos_in = 0;
    out.resize(base + (input.len() * 2).max(64 * 1024), 0);
    let mut pos_out = base;
    loop {
        let flags = TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF | TINFL_FLAG_HAS_MORE_INPUT;
        let (status, read, written) = decompress(&mut d, &input[pos_in..], out, pos_out, flags);
        pos_in += read;
        pos_out += written;
        match status {
            TINFLStatus::Done => {
                out.truncate(pos_out);
                return Ok(pos_in);
            }
            TINFLStatus::HasMoreOutput => {
                if out.len() >= MAX_OUT {
                    return Err("gzip: more than 4 GiB decompressed".into());
                }
                let grow = out.len().min(MAX_OUT - out.len());
                out.resize(out.len() + grow, 0);
            }
            TINFLStatus::NeedsMoreInput => {
                return Err("gzip: the compressed stream is cut short".into());
            }
            other => return Err(format!("gzip: corrupt deflate stream ({other:?})")),
        }
    }
}

/// CRC-32 (IEEE 802.3, reflected, as gzip uses).
fn crc32(data: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (n, e) in t.iter_mut().enumerate() {
            let mut c = n as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *e = c;
        }
        t
    });
    let mut c = 0xFFFF_FFFFu32;
    for &b in data {
        c = table[((c ^ b as u32) & 0xFF) as usize] ^ (c >> 8);
    }
    c ^ 0xFFFF_FFFF
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gzip member written by hand: header (no flags), a stored (uncompressed) deflate
    /// block of `data`, then its CRC-32 and length.
    pub(crate) fn stored_member(data: &[u8]) -> Vec<u8> {
        let mut v = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
        v.push(1); // BFINAL=1, BTYPE=00 (stored)
        let n = data.len() as u16;
        v.extend(n.to_le_bytes());
        v.extend((!n).to_le_bytes());
        v.extend(data);
        v.extend(crc32(data).to_le_bytes());
        v.extend((data.len() as u32).to_le_bytes());
        v
    }

    #[test]
    fn crc32_of_the_standard_check_string() {
        // The CRC-32 check value of "123456789" is 0xCBF43926.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn stored_and_compressed_members_read_back() {
        let mut two = stored_member(b"hello ");
        two.extend(stored_member(b"world\n"));
        assert_eq!(gunzip(&two).unwrap(), b"hello world\n");
        // A compressed member made with miniz_oxide's deflater.
        let text = b"{\"a\":1}\n".repeat(1000);
        let raw = miniz_oxide::deflate::compress_to_vec(&text, 6);
        let mut m = vec![0x1f, 0x8b, 8, 0x08, 0, 0, 0, 0, 0, 3];
        m.extend(b"f.jsonl\0");
        m.extend(raw);
        m.extend(crc32(&text).to_le_bytes());
        m.extend((text.len() as u32).to_le_bytes());
        assert_eq!(gunzip(&m).unwrap(), text);
    }

    #[test]
    fn corrupt_files_are_errors_not_panics() {
        let good = stored_member(b"abc");
        let mut bad_crc = good.clone();
        let n = bad_crc.len();
        bad_crc[n - 5] ^= 1;
        assert!(gunzip(&bad_crc).unwrap_err().contains("CRC"));
        assert!(gunzip(&good[..good.len() - 3]).is_err());
        assert!(gunzip(&[0x1f, 0x8b]).is_err());
        assert!(gunzip(b"plain").is_err());
        for cut in 0..good.len() {
            let _ = gunzip(&good[..cut]);
        }
    }
}
