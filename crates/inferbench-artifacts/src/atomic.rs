//! Write-then-rename, so that a summary file that exists is a complete one: readers (and a
//! run killed mid-export) never see half a file under the final name.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::block::BlockWriter;
use crate::{ArtifactError, Result};

/// A file being written under a temporary name (`.<name>.tmp` in the same directory, so that
/// the rename stays within one filesystem). [`AtomicFile::commit`] flushes, syncs and renames;
/// dropping it without committing removes the temporary file.
pub struct AtomicFile {
    tmp: PathBuf,
    dest: PathBuf,
    out: Option<BlockWriter<File>>,
    /// Set once the rename succeeded; until then Drop removes the temporary.
    committed: bool,
}

impl AtomicFile {
    pub fn create(dir: &Path, name: &str) -> Result<Self> {
        let dest = dir.join(name);
        let tmp = dir.join(format!(".{name}.tmp"));
        let file = File::create(&tmp).map_err(|e| ArtifactError::io(&tmp, e))?;
        Ok(AtomicFile {
            tmp,
            dest,
            out: Some(BlockWriter::new(file)),
            committed: false,
        })
    }

    /// The final path (for error messages: errors name the file the user will look for).
    pub fn path(&self) -> &Path {
        &self.dest
    }

    pub fn writer(&mut self) -> &mut impl Write {
        self.out.as_mut().expect("writer is present until commit")
    }

    pub fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        // Split borrows: this runs once per record, so no path clone on the happy path.
        let AtomicFile { out, dest, .. } = self;
        out.as_mut()
            .expect("writer is present until commit")
            .write_all(bytes)
            .map_err(|e| ArtifactError::io(dest, e))
    }

    /// Flush, fsync and rename to the final name. Returns the final path.
    pub fn commit(mut self) -> Result<PathBuf> {
        let out = self.out.take().expect("commit once");
        let file = out
            .into_inner()
            .map_err(|e| ArtifactError::io(&self.dest, e))?;
        file.sync_all()
            .map_err(|e| ArtifactError::io(&self.dest, e))?;
        drop(file);
        std::fs::rename(&self.tmp, &self.dest).map_err(|e| ArtifactError::io(&self.dest, e))?;
        self.committed = true;
        Ok(self.dest.clone())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.committed {
            // An error happened before the rename: leave no stray temporary behind.
            self.out = None;
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Write `bytes` to `dir/name` atomically.
pub(crate) fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf> {
    let mut f = AtomicFile::create(dir, name)?;
    f.write_all(bytes)?;
    f.commit()
}
