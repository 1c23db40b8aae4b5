//! The evidence file writer: append-only JSON Lines, on the hot path of a run.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use inferbench_core::evidence::{EVIDENCE_FILE, EVIDENCE_FILE_ZST, parse_evidence};
use inferbench_core::{Evidence, EvidenceEnd, EvidenceHeader, PhaseWindow, Record};
use serde::Serialize;

use crate::{ArtifactError, Result};

/// Flush once this much is buffered...
pub const FLUSH_BYTES: usize = 64 * 1024;
/// ...or once this long has passed since the last flush (checked on each write).
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(100);

/// Borrowing twin of [`inferbench_core::EvidenceLine`]: same tag and variant names, so the
/// bytes are identical, but a record is serialized in place (no clone, no `Value`).
#[derive(Serialize)]
#[serde(tag = "line", rename_all = "snake_case")]
enum LineRef<'a> {
    Header(&'a EvidenceHeader),
    /// Records are written by [`crate::evidence_line`]; this is its oracle in the tests.
    #[cfg(test)]
    Record(&'a Record),
    Phase(&'a PhaseWindow),
    End(&'a EvidenceEnd),
}

/// How the evidence file is stored (`--evidence-compression`).
pub use inferbench_core::plan::EvidenceCompression;

/// With zstd, a frame is closed once this much JSON is buffered...
pub const ZSTD_FRAME_BYTES: usize = 1 << 20;
/// ...or once this long has passed since the last frame (checked on each write).
pub const ZSTD_FRAME_INTERVAL: Duration = Duration::from_secs(1);
/// zstd's default level: about 3 ms per MiB of evidence on the writer thread.
const ZSTD_LEVEL: i32 = 3;

/// Appends lines to `inferbench_evidence.jsonl`. Once [`FLUSH_BYTES`] are buffered, what
/// ends on the file's last 64 KiB boundary is written (the rest, under 64 KiB, waits: see
/// `block.rs` for why); everything buffered reaches the OS at the first write at least
/// [`FLUSH_INTERVAL`] after the buffer was last empty, so a killed run loses at most the
/// last moments; phase and end lines are flushed at once. Flushing after every record would
/// cost a syscall per record.
///
/// Compressed (`inferbench_evidence.jsonl.zst`), each flush writes one complete zstd frame,
/// at most [`ZSTD_FRAME_INTERVAL`] or [`ZSTD_FRAME_BYTES`] apart (larger frames compress
/// better), so a killed run still reads back up to its last frame.
pub struct EvidenceWriter {
    path: PathBuf,
    file: File,
    buf: Vec<u8>,
    zstd: Option<zstd::bulk::Compressor<'static>>,
    flush_bytes: usize,
    flush_interval: Duration,
    /// When the buffer was last written out whole.
    last_flush: Instant,
    /// Bytes written to the file so far (uncompressed: the offset of `buf[0]`).
    offset: u64,
    records: u64,
}

impl EvidenceWriter {
    /// Create (truncate) `dir/inferbench_evidence.jsonl` and write the header line.
    pub fn create(dir: &Path, header: &EvidenceHeader) -> Result<Self> {
        Self::create_with(dir, header, EvidenceCompression::None)
    }

    /// As [`EvidenceWriter::create`], compressed or not: `inferbench_evidence.jsonl.zst`
    /// with [`EvidenceCompression::Zstd`].
    pub fn create_with(
        dir: &Path,
        header: &EvidenceHeader,
        compression: EvidenceCompression,
    ) -> Result<Self> {
        let zstd = compression == EvidenceCompression::Zstd;
        let path = dir.join(if zstd {
            EVIDENCE_FILE_ZST
        } else {
            EVIDENCE_FILE
        });
        let file = File::create(&path).map_err(|e| ArtifactError::io(&path, e))?;
        let zstd = if zstd {
            let mut c =
                zstd::bulk::Compressor::new(ZSTD_LEVEL).map_err(|e| ArtifactError::io(&path, e))?;
            // A checksum per frame, so that a damaged copy is an error, not wrong records.
            c.include_checksum(true)
                .map_err(|e| ArtifactError::io(&path, e))?;
            Some(c)
        } else {
            None
        };
        let (flush_bytes, flush_interval) = if zstd.is_some() {
            (ZSTD_FRAME_BYTES, ZSTD_FRAME_INTERVAL)
        } else {
            (FLUSH_BYTES, FLUSH_INTERVAL)
        };
        let mut w = EvidenceWriter {
            path,
            file,
            // Twice the threshold, so that the buffer never grows mid-run.
            buf: Vec::with_capacity(2 * flush_bytes),
            zstd,
            flush_bytes,
            flush_interval,
            last_flush: Instant::now(),
            offset: 0,
            records: 0,
        };
        w.line(&LineRef::Header(header))?;
        w.flush()?;
        Ok(w)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    pub fn write_record(&mut self, record: &Record) -> Result<()> {
        // By hand, not through `LineRef::Record`: the same bytes (tested) in about 60 % of
        // the time (`cargo bench -p inferbench-artifacts --bench lines`).
        crate::evidence_line::write_record_line(&mut self.buf, record);
        self.buf.push(b'\n');
        self.records += 1;
        self.maybe_flush()
    }

    /// Appends the record's line (without its newline) as [`EvidenceWriter::write_record`]
    /// writes it: `{"line":"record",...}`.
    pub fn render_record(out: &mut Vec<u8>, record: &Record) {
        crate::evidence_line::write_record_line(out, record);
    }

    pub fn write_phase(&mut self, window: &PhaseWindow) -> Result<()> {
        self.line(&LineRef::Phase(window))?;
        self.flush()
    }

    /// Push everything buffered to the OS (e.g. from a periodic tick when records are rare);
    /// compressed, as one complete frame.
    pub fn flush(&mut self) -> Result<()> {
        if !self.buf.is_empty() {
            let out = match &mut self.zstd {
                Some(c) => {
                    let frame = c
                        .compress(&self.buf)
                        .map_err(|e| ArtifactError::io(&self.path, e))?;
                    self.file.write_all(&frame)
                }
                None => self.file.write_all(&self.buf),
            };
            out.map_err(|e| ArtifactError::io(&self.path, e))?;
            self.offset += self.buf.len() as u64;
            self.buf.clear();
        }
        self.last_flush = Instant::now();
        Ok(())
    }

    /// Write the end line, flush and fsync. Returns the file's path.
    pub fn finish(mut self, end: EvidenceEnd) -> Result<PathBuf> {
        self.line(&LineRef::End(&end))?;
        self.flush()?;
        self.file
            .sync_all()
            .map_err(|e| ArtifactError::io(&self.path, e))?;
        Ok(self.path.clone())
    }

    fn line(&mut self, line: &LineRef<'_>) -> Result<()> {
        serde_json::to_writer(&mut self.buf, line)
            .map_err(|e| ArtifactError::json(&self.path, e))?;
        self.buf.push(b'\n');
        Ok(())
    }

    fn maybe_flush(&mut self) -> Result<()> {
        if self.last_flush.elapsed() >= self.flush_interval {
            self.flush()?;
        } else if self.buf.len() >= self.flush_bytes {
            if self.zstd.is_some() {
                // A frame must be whole; its compressed size aligns with nothing anyway.
                self.flush()?;
            } else {
                // At least 64 KiB buffered reach a boundary, so something always goes out.
                let n = crate::block::to_boundary(self.offset, self.buf.len());
                self.file
                    .write_all(&self.buf[..n])
                    .map_err(|e| ArtifactError::io(&self.path, e))?;
                self.offset += n as u64;
                self.buf.drain(..n);
            }
        }
        Ok(())
    }
}

/// Read an evidence file back (a cut last line, from a crash mid-write, is ignored).
pub fn read_evidence(path: &Path) -> Result<Evidence> {
    let mut text = String::new();
    crate::evidence_file::open_evidence(path)
        .and_then(|mut r| std::io::Read::read_to_string(&mut r, &mut text))
        .map_err(|e| ArtifactError::io(path, e))?;
    Ok(parse_evidence(&path.display().to_string(), &text)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_core::record::{ErrorKind, Event, Frame, RecordError};
    use inferbench_core::{EvidenceLine, StopReason};

    fn header() -> EvidenceHeader {
        EvidenceHeader {
            schema_version: 1,
            tool: "inferbench".into(),
            tool_version: "0.1.0".into(),
            anchor_unix_ns: 1_795_978_615_000_000_000,
            benchmark_id: "b1".into(),
            endpoint_type: "chat".into(),
            streaming: true,
            tokenizer: "builtin:o200k_base".into(),
            use_server_token_count: false,
            per_chunk_usage: false,
        }
    }

    fn record(id: u64) -> Record {
        Record {
            id,
            request_id: format!("req-{id}"),
            frames: vec![Frame { t_ns: 10, bytes: 5 }],
            events: vec![Event {
                t_ns: 10,
                content: Some("hi \"there\"\n".into()),
                ..Default::default()
            }],
            error: (id % 2 == 1).then(|| RecordError {
                kind: ErrorKind::Http,
                code: Some(500),
                error_type: "Internal Server Error".into(),
                message: "boom".into(),
            }),
            ..Default::default()
        }
    }

    /// A fresh directory and its path; the directory is removed when the guard drops.
    fn tmpdir(name: &str) -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::Builder::new()
            .prefix(&format!("ib-art-{name}-"))
            .tempdir()
            .unwrap();
        let p = d.path().to_path_buf();
        (d, p)
    }

    #[test]
    fn borrowed_lines_are_byte_identical_to_core_lines() {
        let r = record(1);
        let ours = serde_json::to_string(&LineRef::Record(&r)).unwrap();
        let core = serde_json::to_string(&EvidenceLine::Record(Box::new(r))).unwrap();
        assert_eq!(ours, core);
        let h = header();
        assert_eq!(
            serde_json::to_string(&LineRef::Header(&h)).unwrap(),
            serde_json::to_string(&EvidenceLine::Header(h.clone())).unwrap()
        );
    }

    #[test]
    fn round_trips_and_records_are_readable_before_finish() {
        let (_tmp, dir) = tmpdir("ev");
        let mut w = EvidenceWriter::create(&dir, &header()).unwrap();
        w.write_record(&record(0)).unwrap();
        w.write_record(&record(1)).unwrap();
        // Without finish: a killed run. After a flush (what the 100 ms rule guarantees),
        // everything written so far must parse, and the run reads as partial.
        w.flush().unwrap();
        let ev = read_evidence(&dir.join(EVIDENCE_FILE)).unwrap();
        assert_eq!(ev.records.len(), 2);
        assert!(ev.is_partial());

        let win = PhaseWindow {
            phase: inferbench_core::Phase::Profiling,
            start_ns: 0,
            sent_end_ns: 5,
            requests_end_ns: 20,
            scheduled: 2,
            completed: 2,
            errors: 1,
            cancelled: false,
        };
        w.write_phase(&win).unwrap();
        let path = w
            .finish(EvidenceEnd {
                stop_reason: StopReason::Completed,
                end_ns: 30,
                records: 2,
            })
            .unwrap();
        let ev = read_evidence(&path).unwrap();
        assert_eq!(ev.header, header());
        assert_eq!(ev.records, vec![record(0), record(1)]);
        assert_eq!(ev.phases, vec![win]);
        assert!(!ev.is_partial());
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with('\n'));
        assert_eq!(text.lines().count(), 5);
    }

    #[test]
    fn the_size_threshold_writes_up_to_a_boundary_without_waiting() {
        let (_tmp, dir) = tmpdir("ev-size");
        let path = dir.join(EVIDENCE_FILE);
        let mut w = EvidenceWriter::create(&dir, &header()).unwrap();
        let header_len = std::fs::metadata(&path).unwrap().len();
        let mut big = record(0);
        big.events[0].content = Some("x".repeat(FLUSH_BYTES));
        let mut line = Vec::new();
        EvidenceWriter::render_record(&mut line, &big);
        let line_len = line.len() as u64 + 1;
        w.write_record(&big).unwrap();
        // No explicit flush: the ≥ 64 KiB rule has written the file up to its first 64 KiB
        // boundary (the header line was flushed on its own), the line's tail is held back.
        assert!(header_len + line_len > 65_536 && header_len + line_len < 131_072);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 65_536);
        assert_eq!(read_evidence(&path).unwrap().records.len(), 0);
        // The next record completes the first on disk once the next boundary is crossed.
        w.write_record(&big).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 131_072);
        assert_eq!(read_evidence(&path).unwrap().records.len(), 1);
        // A flush writes the rest: the file is whole, line for line.
        w.flush().unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            header_len + 2 * line_len
        );
        assert_eq!(read_evidence(&path).unwrap().records.len(), 2);
        drop(w);
    }

    #[test]
    fn the_time_threshold_flushes_on_the_next_write() {
        let (_tmp, dir) = tmpdir("ev-time");
        let mut w = EvidenceWriter::create(&dir, &header()).unwrap();
        w.write_record(&record(0)).unwrap();
        std::thread::sleep(FLUSH_INTERVAL + Duration::from_millis(20));
        w.write_record(&record(2)).unwrap();
        let ev = read_evidence(&dir.join(EVIDENCE_FILE)).unwrap();
        assert_eq!(ev.records.len(), 2);
        drop(w);
    }

    #[test]
    fn errors_name_the_file() {
        let missing = Path::new("/nonexistent-dir-ib/x");
        let e = EvidenceWriter::create(missing, &header()).err().unwrap();
        assert!(
            e.to_string()
                .contains("/nonexistent-dir-ib/x/inferbench_evidence.jsonl")
        );
        let e = read_evidence(&missing.join("e.jsonl")).unwrap_err();
        assert!(e.to_string().contains("e.jsonl"));
    }
}
