//! A PNG writer for 8-bit RGB pixels: the signature, `IHDR`, one `IDAT` (the rows, each
//! behind filter byte 0, deflated by `miniz_oxide` into a zlib stream) and `IEND`, every
//! chunk with its CRC-32. Enough for the random-noise images of `--image-source noise`.

/// Encodes `width` × `height` RGB pixels (`rgb.len() == width * height * 3`).
pub fn encode_rgb(width: u32, height: u32, rgb: &[u8]) -> Vec<u8> {
    debug_assert_eq!(rgb.len(), width as usize * height as usize * 3);
    let row = width as usize * 3;
    let mut raw = Vec::with_capacity((row + 1) * height as usize);
    for line in rgb.chunks(row.max(1)) {
        raw.push(0); // filter: none
        raw.extend_from_slice(line);
    }
    // Level 6, as AIPerf asks of Pillow (zlib's default).
    let idat = miniz_oxide::deflate::compress_to_vec_zlib(&raw, 6);
    let mut out = Vec::with_capacity(idat.len() + 64);
    out.extend_from_slice(b"\x89PNG\r\n\x1a\n");
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    // Bit depth 8, colour type 2 (RGB), deflate, adaptive filtering, no interlace.
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &idat);
    chunk(&mut out, b"IEND", &[]);
    out
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let mut crc = Crc32::new();
    crc.update(kind);
    crc.update(data);
    out.extend_from_slice(&crc.finish().to_be_bytes());
}

/// CRC-32 (ISO-HDLC, reflected polynomial 0xEDB88320), as PNG chunks carry it.
struct Crc32(u32);

impl Crc32 {
    fn new() -> Self {
        Crc32(0xFFFF_FFFF)
    }

    fn update(&mut self, data: &[u8]) {
        for &b in data {
            let mut c = (self.0 ^ u32::from(b)) & 0xFF;
            for _ in 0..8 {
                c = if c & 1 == 1 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            self.0 = (self.0 >> 8) ^ c;
        }
    }

    fn finish(self) -> u32 {
        self.0 ^ 0xFFFF_FFFF
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_of_the_standard_check_string() {
        let mut c = Crc32::new();
        c.update(b"123456789");
        assert_eq!(c.finish(), 0xCBF4_3926);
        // The IEND chunk's CRC every PNG ends with.
        let mut c = Crc32::new();
        c.update(b"IEND");
        assert_eq!(c.finish(), 0xAE42_6082);
    }

    /// A 2×2 image read back by hand: the header fields, and the pixel rows after inflating.
    #[test]
    fn two_by_two_png_by_hand() {
        let px = [
            255, 0, 0, 0, 255, 0, // red, green
            0, 0, 255, 255, 255, 255, // blue, white
        ];
        let png = encode_rgb(2, 2, &px);
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        // IHDR: length 13, type, width 2, height 2, depth 8, colour type 2, 0, 0, 0.
        assert_eq!(&png[8..12], &[0, 0, 0, 13]);
        assert_eq!(&png[12..16], b"IHDR");
        assert_eq!(&png[16..29], &[0, 0, 0, 2, 0, 0, 0, 2, 8, 2, 0, 0, 0]);
        let idat_len = u32::from_be_bytes(png[33..37].try_into().unwrap()) as usize;
        assert_eq!(&png[37..41], b"IDAT");
        let zlib = &png[41..41 + idat_len];
        let raw = miniz_oxide::inflate::decompress_to_vec_zlib(zlib).unwrap();
        assert_eq!(
            raw,
            vec![0, 255, 0, 0, 0, 255, 0, 0, 0, 0, 255, 255, 255, 255]
        );
        // Then the IDAT CRC and IEND (length 0, type, CRC): the last 12 bytes.
        let end = &png[png.len() - 12..];
        assert_eq!(
            end,
            &[0, 0, 0, 0, b'I', b'E', b'N', b'D', 0xAE, 0x42, 0x60, 0x82]
        );
        assert_eq!(41 + idat_len + 4 + 12, png.len());
    }
}
