//! Buffered writing whose writes end on 64 KiB boundaries of the file.
//!
//! Buffered writes that start and end mid-stretch cost the kernel much more than aligned
//! ones: on a machine like CI's (Linux 6.18, ext4) `dd` of 400 MB took 0.11 s of system time
//! in 64 KiB writes and 0.18 to 0.36 s in 65,000-byte writes (docs/timing.md). The likely
//! reason is the page cache's large folios (ext4 has them since Linux 6.16): an aligned
//! stretch is taken whole, a straddling write page by page, with a folio lookup and block
//! preparation for each 4 KiB, as the profiles show. A run's two large files (the evidence
//! and `profile_export.jsonl`, about 4 KB a request) are written a line at a time, so a
//! buffer flushed whenever it is full writes at ever-shifting offsets. These writers send
//! only the part of the buffer that ends on a boundary and keep the rest (under 64 KiB) for
//! the next write; an explicit flush still writes everything.

use std::io::{self, Write};

/// The alignment of the writes: aligned 64 KiB writes measured as fast as 256 KiB ones.
pub(crate) const BLOCK: u64 = 64 * 1024;

/// How many of `len` buffered bytes to write, at file offset `offset`, so that the write
/// ends on the last [`BLOCK`] boundary it reaches: 0 when it reaches none.
pub(crate) fn to_boundary(offset: u64, len: usize) -> usize {
    let end = offset + len as u64;
    // At most `len`: the boundary is at or below `end`.
    (end - end % BLOCK).saturating_sub(offset) as usize
}

/// Gathers this much before writing: four blocks, so that the part held back is small.
const CAPACITY: usize = 4 * BLOCK as usize;

/// A `BufWriter` for a file written from its start, whose writes (before an explicit
/// flush) end on [`BLOCK`] boundaries.
pub(crate) struct BlockWriter<W: Write> {
    inner: W,
    buf: Vec<u8>,
    /// Bytes already handed to `inner`: the file offset of `buf[0]`.
    offset: u64,
}

impl<W: Write> BlockWriter<W> {
    pub(crate) fn new(inner: W) -> Self {
        BlockWriter {
            inner,
            buf: Vec::with_capacity(CAPACITY + BLOCK as usize),
            offset: 0,
        }
    }

    /// Everything written, then the inner writer.
    pub(crate) fn into_inner(mut self) -> io::Result<W> {
        self.flush()?;
        Ok(self.inner)
    }

    fn write_buffered(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            self.inner.write_all(&self.buf)?;
            self.offset += self.buf.len() as u64;
            self.buf.clear();
        }
        Ok(())
    }
}

impl<W: Write> Write for BlockWriter<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.write_all(data)?;
        Ok(data.len())
    }

    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        if data.len() >= CAPACITY {
            // A whole file at once (`write_atomic`): no copy through the buffer.
            self.write_buffered()?;
            self.inner.write_all(data)?;
            self.offset += data.len() as u64;
            return Ok(());
        }
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CAPACITY {
            let n = to_boundary(self.offset, self.buf.len());
            self.inner.write_all(&self.buf[..n])?;
            self.offset += n as u64;
            self.buf.drain(..n);
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write_buffered()?;
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records each write's offset and length.
    #[derive(Default)]
    struct Spy {
        bytes: Vec<u8>,
        writes: Vec<(u64, usize)>,
    }

    impl Write for Spy {
        fn write(&mut self, data: &[u8]) -> io::Result<usize> {
            self.writes.push((self.bytes.len() as u64, data.len()));
            self.bytes.extend_from_slice(data);
            Ok(data.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_write_ends_on_the_last_boundary_reached() {
        // Offset 0: 65,536 bytes reach the first boundary, 65,535 none.
        assert_eq!(to_boundary(0, 65_536), 65_536);
        assert_eq!(to_boundary(0, 65_535), 0);
        assert_eq!(to_boundary(0, 200_000), 196_608);
        // Offset 100: the boundary at 65,536 is 65,436 bytes away; the one at 131,072
        // needs 130,972.
        assert_eq!(to_boundary(100, 65_435), 0);
        assert_eq!(to_boundary(100, 65_436), 65_436);
        assert_eq!(to_boundary(100, 130_971), 65_436);
        assert_eq!(to_boundary(100, 130_972), 130_972);
        assert_eq!(to_boundary(65_536, 0), 0);
    }

    #[test]
    fn lines_go_out_in_aligned_writes_and_a_flush_sends_the_rest() {
        let mut w = BlockWriter::new(Spy::default());
        let mut expect = Vec::new();
        for i in 0..20_000u32 {
            let line = format!(
                "{{\"i\":{i},\"pad\":\"{}\"}}\n",
                "x".repeat((i % 97) as usize)
            );
            w.write_all(line.as_bytes()).unwrap();
            expect.extend_from_slice(line.as_bytes());
        }
        let before_flush = w.inner.writes.clone();
        assert!(before_flush.len() >= 5, "{before_flush:?}");
        for &(offset, len) in &before_flush {
            assert_eq!((offset + len as u64) % BLOCK, 0, "{offset} + {len}");
        }
        // What is held back is less than a block.
        assert!(w.buf.len() < BLOCK as usize);
        let spy = w.into_inner().unwrap();
        assert_eq!(spy.bytes, expect);
    }

    #[test]
    fn a_large_write_goes_straight_through_after_the_buffer() {
        let mut w = BlockWriter::new(Spy::default());
        w.write_all(b"head\n").unwrap();
        let big = vec![b'y'; CAPACITY + 7];
        w.write_all(&big).unwrap();
        w.write_all(b"tail\n").unwrap();
        let spy = w.into_inner().unwrap();
        assert_eq!(
            spy.writes,
            vec![(0, 5), (5, CAPACITY + 7), (CAPACITY as u64 + 12, 5)]
        );
        let mut expect = b"head\n".to_vec();
        expect.extend_from_slice(&big);
        expect.extend_from_slice(b"tail\n");
        assert_eq!(spy.bytes, expect);
    }
}
