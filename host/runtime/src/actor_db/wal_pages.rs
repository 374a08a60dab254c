//! The pages an actor's commits changed, read back from its WAL: what a
//! cluster node uploads after an event instead of the whole database
//! (ADR 064).
//!
//! While pages are tracked, SQLite never checkpoints on its own
//! (`wal_autocheckpoint=0`): every page written since the last upload is
//! then still a frame of the WAL, after the frame the last read stopped at.
//! The host checkpoints after an upload instead ([`ActorDb::checkpoint_if_long`]),
//! and the WAL starts again at its head with new salts. Frames are read up
//! to the last commit frame whose salts match the WAL's header: a frame
//! beyond it is part of no commit, or left from an earlier round of the file.
//! Should the salts differ from those the last read saw (a checkpoint the
//! host did not make), what changed is not known, and the caller uploads
//! the whole image.

use super::ActorDb;
use crate::sql_types::SqlError;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use wasmkeep_store::page_set::PageSet;

const WAL_HEADER: u64 = 32;
const FRAME_HEADER: u64 = 24;
/// The WAL's length in frames past which the host checkpoints it after an upload.
pub(crate) const CHECKPOINT_AFTER_FRAMES: u64 = 10_000;

/// Where the last read of the WAL stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cursor {
    /// Checkpointed whole: whatever the next header's salts, its frames are
    /// new; frames under `stale` salts (the round before) are not.
    Fresh { stale: Option<Salts> },
    /// After the commit that ends before `frame`, in the round of `salts`.
    At { salts: Salts, frame: u64 },
}

/// What changed since the last read.
#[derive(Debug)]
pub enum PageChange {
    /// Nothing was committed.
    Unchanged,
    /// These pages, and the database's length after them.
    Pages(PageSet),
    /// Not known (the WAL was checkpointed in between): upload the whole image.
    Unknown,
}

/// The state of tracking for one connection.
#[derive(Debug)]
pub(super) struct PageLog {
    wal: PathBuf,
    file: Option<File>,
    cursor: Cursor,
    data_version: u32,
    /// The WAL's page size, once its header was read.
    page_size: Option<u32>,
    /// What the frames are read into.
    buf: Vec<u8>,
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn internal(doing: &str, e: impl std::fmt::Display) -> SqlError {
    SqlError::Internal(format!("{doing} the actor's WAL: {e}"))
}

/// A WAL round's two salts: every frame of the round carries them.
type Salts = (u32, u32);

/// The WAL header's page size and salts, or none for a WAL not yet begun.
fn header(file: &File) -> Result<Option<(u32, Salts)>, SqlError> {
    let mut h = [0u8; WAL_HEADER as usize];
    match file.read_exact_at(&mut h, 0) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(internal("reading", e)),
    }
    let magic = be32(&h, 0);
    if magic & !1 != 0x377f_0682 {
        return Ok(None);
    }
    Ok(Some((be32(&h, 8), (be32(&h, 16), be32(&h, 20)))))
}

/// How many frames one read of the WAL takes: a one-row commit is one
/// frame, so two give it and the header of the frame after it (which says
/// where the commits end) in one system call.
const FRAMES_A_READ: u64 = 2;

/// Reads `buf.len()` bytes at `at`, or fewer at the end of the file.
fn read_up_to(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], at + got as u64) {
            Ok(0) => break,
            // A regular file reads short only at its end (and only SQLite,
            // on this thread, writes the WAL): no second call to learn it.
            Ok(n) if got + n < buf.len() => {
                got += n;
                break;
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Reads the commits from frame `from` on: their pages, the frame after
/// the last commit, and the database's length then.
fn read_commits(
    file: &File,
    buf: &mut Vec<u8>,
    page_size: u32,
    salts: Salts,
    from: u64,
) -> Result<Option<(PageSet, u64)>, SqlError> {
    let frame_len = FRAME_HEADER + u64::from(page_size);
    // The buffer is the log's own, kept between events: no allocation per read.
    buf.resize((frame_len * FRAMES_A_READ) as usize, 0);
    let mut committed = PageSet::new(page_size, 0);
    let mut pending: Vec<(u32, Vec<u8>)> = Vec::new();
    let mut end = None;
    let mut frame = from;
    'reading: loop {
        let got = read_up_to(file, buf, WAL_HEADER + frame * frame_len).map_err(|e| internal("reading", e))?;
        let whole = got as u64 / frame_len;
        for i in 0..whole {
            let f = &buf[(i * frame_len) as usize..((i + 1) * frame_len) as usize];
            if (be32(f, 8), be32(f, 12)) != salts {
                break 'reading;
            }
            pending.push((be32(f, 0), f[FRAME_HEADER as usize..].to_vec()));
            frame += 1;
            let commit_pages = be32(f, 4);
            if commit_pages != 0 {
                for (n, page) in pending.drain(..) {
                    committed.insert(n, page);
                }
                committed.set_db_pages(commit_pages);
                end = Some(frame);
            }
        }
        if whole < FRAMES_A_READ {
            break;
        }
    }
    Ok(end.map(|e| (committed, e)))
}

impl PageLog {
    fn open(&mut self) -> Result<bool, SqlError> {
        if self.file.is_none() {
            match File::open(&self.wal) {
                Ok(f) => self.file = Some(f),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
                Err(e) => return Err(internal("opening", e)),
            }
        }
        Ok(true)
    }

    fn changes(&mut self, data_version: u32) -> Result<PageChange, SqlError> {
        // SQLite's own counter moves with every commit: when it did not, the WAL is not read.
        if data_version == self.data_version {
            return Ok(PageChange::Unchanged);
        }
        let cursor = self.cursor;
        let page_size = self.page_size;
        if !self.open()? {
            return Ok(PageChange::Unchanged);
        }
        let (Some(file), buf) = (self.file.as_ref(), &mut self.buf) else {
            return Ok(PageChange::Unchanged);
        };
        // Where the last read stopped, in the same round of the file: the
        // frames there, without reading the header again.
        if let (Cursor::At { salts, frame }, Some(size)) = (cursor, page_size)
            && let Some((set, end)) = read_commits(file, buf, size, salts, frame)?
        {
            self.data_version = data_version;
            self.cursor = Cursor::At { salts, frame: end };
            return Ok(PageChange::Pages(set));
        }
        let Some((page_size, salts)) = header(file)? else {
            return Ok(PageChange::Unchanged);
        };
        let (from, known) = match cursor {
            Cursor::Fresh { stale } if stale == Some(salts) => {
                self.data_version = data_version;
                return Ok(PageChange::Unchanged);
            }
            Cursor::Fresh { .. } => (0, true),
            Cursor::At { salts: s, frame } if s == salts => (frame, true),
            // Checkpointed by somebody else: the pages before are in the database file.
            Cursor::At { .. } => (0, false),
        };
        let read = read_commits(file, buf, page_size, salts, from)?;
        self.data_version = data_version;
        self.page_size = Some(page_size);
        Ok(match read {
            None if known => PageChange::Unchanged,
            None => PageChange::Unknown,
            Some((set, end)) => {
                self.cursor = Cursor::At { salts, frame: end };
                if known {
                    PageChange::Pages(set)
                } else {
                    PageChange::Unknown
                }
            }
        })
    }
}

impl ActorDb {
    /// Starts tracking the pages commits change (a cluster node's actor,
    /// ADR 064): SQLite's own checkpoints stop, and the WAL is checkpointed
    /// whole now, so what follows is all new.
    ///
    /// # Errors
    /// `internal` if SQLite refused the checkpoint or the setting.
    pub fn track_pages(&self) -> Result<(), SqlError> {
        let Some(db) = self.path() else {
            return Err(SqlError::Internal(
                "an actor database without a file tracks no pages".into(),
            ));
        };
        self.conn
            .execute_batch("PRAGMA wal_autocheckpoint=0; PRAGMA wal_checkpoint(TRUNCATE);")
            .map_err(|e| internal("checkpointing", e))?;
        let mut wal = db.into_os_string();
        wal.push("-wal");
        *self.page_log.borrow_mut() = Some(PageLog {
            wal: PathBuf::from(wal),
            file: None,
            cursor: Cursor::Fresh { stale: None },
            data_version: self.data_version(),
            page_size: None,
            buf: Vec::new(),
        });
        Ok(())
    }

    /// The pages the commits since the last call changed.
    ///
    /// # Errors
    /// `internal` if the WAL could not be read; pages not tracked
    /// ([`ActorDb::track_pages`]) read as [`PageChange::Unknown`].
    pub fn changed_pages(&self) -> Result<PageChange, SqlError> {
        let version = self.data_version();
        match self.page_log.borrow_mut().as_mut() {
            None => Ok(PageChange::Unknown),
            Some(log) => log.changes(version),
        }
    }

    /// After an upload: checkpoints the WAL once it holds more than
    /// [`CHECKPOINT_AFTER_FRAMES`] frames, so that it starts again at its
    /// head. Every frame was uploaded, so nothing is lost to the tracking.
    ///
    /// # Errors
    /// `internal` if SQLite failed to checkpoint.
    pub fn checkpoint_if_long(&self) -> Result<(), SqlError> {
        let mut log = self.page_log.borrow_mut();
        let Some(log) = log.as_mut() else { return Ok(()) };
        let Cursor::At { salts, frame } = log.cursor else {
            return Ok(());
        };
        if frame < CHECKPOINT_AFTER_FRAMES {
            return Ok(());
        }
        self.conn
            .execute_batch("PRAGMA wal_checkpoint(RESTART);")
            .map_err(|e| internal("checkpointing", e))?;
        log.cursor = Cursor::Fresh { stale: Some(salts) };
        Ok(())
    }
}
