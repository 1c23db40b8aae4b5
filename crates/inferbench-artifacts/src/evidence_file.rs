//! Where a run's evidence is and how it is read: `inferbench_evidence.jsonl` as written, or
//! `inferbench_evidence.jsonl.zst` (`--evidence-compression zstd`), a sequence of complete
//! zstd frames, one per flush. Every reader goes through [`open_evidence`], so the
//! compressed file reads back as the plain one would, line for line.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use inferbench_core::evidence::{EVIDENCE_FILE, EVIDENCE_FILE_ZST};
use zstd::stream::raw::{Decoder, Operation};

/// The evidence file in `dir`: the plain one if present, else the compressed one.
pub fn evidence_file_in(dir: &Path) -> Option<PathBuf> {
    [EVIDENCE_FILE, EVIDENCE_FILE_ZST]
        .into_iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
}

/// Whether `dir` holds a run's evidence, plain or compressed.
pub fn has_evidence(dir: &Path) -> bool {
    evidence_file_in(dir).is_some()
}

/// Opens an evidence file for reading its JSON lines: a `.zst` one is decompressed as read.
pub fn open_evidence(path: &Path) -> io::Result<Box<dyn BufRead + Send>> {
    let f = File::open(path)?;
    if path.extension().is_some_and(|e| e == "zst") {
        Ok(Box::new(BufReader::with_capacity(
            1 << 16,
            FramesReader::new(f)?,
        )))
    } else {
        Ok(Box::new(BufReader::with_capacity(1 << 16, f)))
    }
}

/// Decompresses a stream of zstd frames. A file that ends inside a frame (a killed run, or
/// a copy cut short) reads back everything up to the cut, as a plain file cut there would:
/// all complete frames, and the cut frame's complete blocks; the line reader then drops a
/// cut last line. Corrupt data (not a truncation) is an error.
pub struct FramesReader<R> {
    inner: R,
    dec: Decoder<'static>,
    buf: Box<[u8]>,
    pos: usize,
    len: usize,
    eof: bool,
}

impl<R: Read> FramesReader<R> {
    pub fn new(inner: R) -> io::Result<Self> {
        Ok(FramesReader {
            inner,
            dec: Decoder::new()?,
            buf: vec![0; 1 << 16].into_boxed_slice(),
            pos: 0,
            len: 0,
            eof: false,
        })
    }
}

impl<R: Read> Read for FramesReader<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            if self.pos == self.len && !self.eof {
                self.pos = 0;
                self.len = match self.inner.read(&mut self.buf) {
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                self.eof = self.len == 0;
            }
            // At the end of the input the decoder is still asked once more (no input), to
            // hand out what it holds; whatever frame is unfinished then is the cut.
            let st = self
                .dec
                .run_on_buffers(&self.buf[self.pos..self.len], out)
                .map_err(|e| io::Error::new(e.kind(), format!("zstd: {e}")))?;
            self.pos += st.bytes_read;
            if st.bytes_written > 0 {
                return Ok(st.bytes_written);
            }
            if self.eof && self.pos == self.len {
                return Ok(0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(parts: &[&[u8]]) -> (Vec<u8>, Vec<usize>) {
        let mut out = Vec::new();
        let mut ends = Vec::new();
        for p in parts {
            out.extend(zstd::bulk::compress(p, 3).unwrap());
            ends.push(out.len());
        }
        (out, ends)
    }

    fn read_all(b: &[u8]) -> io::Result<Vec<u8>> {
        let mut v = Vec::new();
        FramesReader::new(b)?.read_to_end(&mut v)?;
        Ok(v)
    }

    #[test]
    fn concatenated_frames_read_back_whole() {
        let (z, _) = frames(&[b"a\n", b"bb\ncc\n", b"", b"d\n"]);
        assert_eq!(read_all(&z).unwrap(), b"a\nbb\ncc\nd\n");
    }

    #[test]
    fn a_cut_file_reads_back_every_complete_frame() {
        let big: Vec<u8> = (0..20_000u32)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        let (z, ends) = frames(&[b"one\n", b"two\n", &big]);
        // Cut anywhere inside the last frame: the first two frames come back whole, and
        // whatever comes of the third is a prefix of it.
        for cut in [ends[1] + 1, ends[1] + 7, ends[2] - 1] {
            let got = read_all(&z[..cut]).unwrap();
            assert!(got.starts_with(b"one\ntwo\n"), "cut at {cut}");
            assert!(big.starts_with(&got[8..]), "cut at {cut}");
        }
        // Cut exactly at a frame boundary.
        assert_eq!(read_all(&z[..ends[1]]).unwrap(), b"one\ntwo\n");
    }

    #[test]
    fn corrupt_data_is_an_error() {
        let (mut z, _) = frames(&[b"hello hello hello\n"]);
        z[0] ^= 0xff; // the magic number
        assert!(read_all(&z).is_err());
    }
}
