//! What a history object holds: a whole database image, or the pages one
//! commit (or a run of them, compacted) changed on top of an earlier
//! position (ADR 064).
//!
//! A whole image is a full page set: SQLite's file as it is, beginning with
//! `SQLite format 3\0`. Buckets written before ADR 064 hold only those, so
//! they restore as they did. A page set on a parent is our own small format:
//!
//! ```text
//! "WKPAGES1"          8 bytes, the magic
//! page size           u32, little-endian
//! database pages      u32: the database's length in pages after this set
//! count               u32: how many pages follow
//! page numbers        count × u32, ascending, each at most the length
//! pages               count × page size bytes, in the same order
//! ```
//!
//! The parent is in the object's key, so a listing shows the chain without
//! reading a body ([`crate::history_chain`]).

use std::collections::BTreeMap;

/// The first bytes of a page set on a parent.
pub const MAGIC: &[u8; 8] = b"WKPAGES1";
/// The first bytes of every SQLite database file.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";
const HEADER: usize = 8 + 4 + 4 + 4;

/// Why a history object's body could not be read as a page set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageSetError {
    /// Neither a database image nor a page set.
    #[error("not a database image or a page set (first bytes {0:02x?})")]
    UnknownFormat(Vec<u8>),
    /// Shorter or longer than its header says.
    #[error("a page set of {declared} bytes by its header is {actual} bytes long")]
    WrongLength {
        /// What the header adds up to.
        declared: usize,
        /// What the body holds.
        actual: usize,
    },
    /// A page size SQLite never uses, or one unlike the image it applies to.
    #[error("page size {found} where {expected} was expected")]
    PageSize {
        /// The page size found.
        found: u32,
        /// The page size of the image it applies to (0: a valid size).
        expected: u32,
    },
    /// Page numbers out of order, zero, or past the database's length.
    #[error("page {page} is out of order or past the database's {db_pages} pages")]
    BadPageNumber {
        /// The page number.
        page: u32,
        /// The database's length in pages.
        db_pages: u32,
    },
}

/// Pages of one database, by page number (from 1), and the database's
/// length in pages after them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageSet {
    page_size: u32,
    db_pages: u32,
    pages: BTreeMap<u32, Vec<u8>>,
}

/// A history object's body as what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// A whole database image.
    Image(Vec<u8>),
    /// Pages on top of the object's parent.
    Pages(PageSet),
}

fn valid_page_size(size: u32) -> bool {
    (512..=65_536).contains(&size) && size.is_power_of_two()
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(b)
}

/// The page size a SQLite image declares (header bytes 16–17; 1 means 65,536).
pub fn image_page_size(image: &[u8]) -> Option<u32> {
    if image.len() < 100 || &image[..16] != SQLITE_MAGIC {
        return None;
    }
    let raw = u32::from(u16::from_be_bytes([image[16], image[17]]));
    let size = if raw == 1 { 65_536 } else { raw };
    valid_page_size(size).then_some(size)
}

impl PageSet {
    /// An empty set for a database of `db_pages` pages of `page_size` bytes.
    pub fn new(page_size: u32, db_pages: u32) -> Self {
        Self {
            page_size,
            db_pages,
            pages: BTreeMap::new(),
        }
    }

    /// Sets page `number` (from 1) to `bytes`, which must be one page long.
    /// A later insert of the same page replaces the earlier one.
    pub fn insert(&mut self, number: u32, bytes: Vec<u8>) {
        debug_assert_eq!(bytes.len(), self.page_size as usize, "one page");
        self.pages.insert(number, bytes);
    }

    /// Sets the database's length in pages (a commit's new length).
    pub fn set_db_pages(&mut self, db_pages: u32) {
        self.db_pages = db_pages;
    }

    /// The page size.
    pub fn page_size(&self) -> u32 {
        self.page_size
    }

    /// The database's length in pages after this set.
    pub fn db_pages(&self) -> u32 {
        self.db_pages
    }

    /// How many pages the set holds.
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    /// Whether the set holds no page (the length alone may still change).
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// The set as bytes (the format in the module's doc). Pages past the
    /// database's length are left out: the length cut them off.
    pub fn encode(&self) -> Vec<u8> {
        let kept: Vec<(&u32, &Vec<u8>)> = self.pages.range(1..=self.db_pages).collect();
        let mut out = Vec::with_capacity(HEADER + kept.len() * (4 + self.page_size as usize));
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.page_size.to_le_bytes());
        out.extend_from_slice(&self.db_pages.to_le_bytes());
        let count = u32::try_from(kept.len()).unwrap_or(u32::MAX);
        out.extend_from_slice(&count.to_le_bytes());
        for (n, _) in &kept {
            out.extend_from_slice(&n.to_le_bytes());
        }
        for (_, page) in &kept {
            out.extend_from_slice(page);
        }
        out
    }

    /// Reads a page set written by [`PageSet::encode`].
    ///
    /// # Errors
    /// The bytes are not a page set, or not a whole one.
    pub fn decode(bytes: &[u8]) -> Result<Self, PageSetError> {
        if bytes.len() < HEADER || &bytes[..8] != MAGIC {
            return Err(PageSetError::UnknownFormat(bytes.iter().take(16).copied().collect()));
        }
        let page_size = u32_at(bytes, 8);
        if !valid_page_size(page_size) {
            return Err(PageSetError::PageSize {
                found: page_size,
                expected: 0,
            });
        }
        let db_pages = u32_at(bytes, 12);
        let count = u32_at(bytes, 16) as usize;
        let declared = count
            .checked_mul(4 + page_size as usize)
            .and_then(|b| b.checked_add(HEADER))
            .unwrap_or(usize::MAX);
        if declared != bytes.len() {
            return Err(PageSetError::WrongLength {
                declared,
                actual: bytes.len(),
            });
        }
        let mut pages = BTreeMap::new();
        let data = HEADER + count * 4;
        let mut last = 0u32;
        for i in 0..count {
            let number = u32_at(bytes, HEADER + i * 4);
            if number <= last || number > db_pages {
                return Err(PageSetError::BadPageNumber { page: number, db_pages });
            }
            last = number;
            let at = data + i * page_size as usize;
            pages.insert(number, bytes[at..at + page_size as usize].to_vec());
        }
        Ok(Self {
            page_size,
            db_pages,
            pages,
        })
    }

    /// Puts `newer` on top of this set: its pages replace these, and its
    /// length is the length. Applying the result to the state under this
    /// set gives the state after `newer` (compaction, ADR 064).
    ///
    /// # Errors
    /// The two sets have different page sizes.
    pub fn merge(&mut self, newer: PageSet) -> Result<(), PageSetError> {
        if newer.page_size != self.page_size {
            return Err(PageSetError::PageSize {
                found: newer.page_size,
                expected: self.page_size,
            });
        }
        self.db_pages = newer.db_pages;
        self.pages.extend(newer.pages);
        let cut = self.db_pages;
        self.pages.retain(|n, _| *n <= cut);
        Ok(())
    }

    /// Writes this set's pages into `image` and gives it the set's length.
    ///
    /// # Errors
    /// The image's page size differs from the set's.
    pub fn apply(&self, image: &mut Vec<u8>) -> Result<(), PageSetError> {
        if let Some(size) = image_page_size(image)
            && size != self.page_size
        {
            return Err(PageSetError::PageSize {
                found: self.page_size,
                expected: size,
            });
        }
        let size = self.page_size as usize;
        image.resize(self.db_pages as usize * size, 0);
        for (n, page) in self.pages.range(1..=self.db_pages) {
            let at = (*n as usize - 1) * size;
            image[at..at + size].copy_from_slice(page);
        }
        Ok(())
    }
}

impl PageSet {
    /// The pages of `to` that differ from `from` (both whole images of one
    /// page size), with `to`'s length: applied to `from`, it gives `to`.
    /// `None` when either is not a database image, or their page sizes differ.
    pub fn diff(from: &[u8], to: &[u8]) -> Option<PageSet> {
        let size = image_page_size(to)?;
        if image_page_size(from)? != size {
            return None;
        }
        let page = size as usize;
        let db_pages = u32::try_from(to.len() / page).ok()?;
        let mut set = PageSet::new(size, db_pages);
        for (i, chunk) in to.chunks(page).enumerate() {
            let at = i * page;
            if from.get(at..at + page) != Some(chunk) {
                set.insert(u32::try_from(i + 1).ok()?, chunk.to_vec());
            }
        }
        Some(set)
    }

    /// Its encoded length in bytes.
    pub fn encoded_len(&self) -> usize {
        HEADER + self.pages.len() * (4 + self.page_size as usize)
    }
}

impl Body {
    /// Reads a history object's body: a database image or a page set.
    ///
    /// # Errors
    /// Neither, or a page set that is not whole.
    pub fn decode(bytes: Vec<u8>) -> Result<Self, PageSetError> {
        if bytes.starts_with(MAGIC) {
            return PageSet::decode(&bytes).map(Body::Pages);
        }
        // An empty file is an empty database to SQLite, as a legacy image of
        // nothing was; anything else must be a database image.
        if bytes.is_empty() || bytes.starts_with(SQLITE_MAGIC) {
            return Ok(Body::Image(bytes));
        }
        Err(PageSetError::UnknownFormat(bytes.iter().take(16).copied().collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(pages: &[u8], size: u32) -> Vec<u8> {
        let mut img = Vec::new();
        for (i, fill) in pages.iter().enumerate() {
            let mut page = vec![*fill; size as usize];
            if i == 0 {
                page[..16].copy_from_slice(SQLITE_MAGIC);
                page[16..18].copy_from_slice(&u16::try_from(size).unwrap_or(1).to_be_bytes());
            }
            img.extend_from_slice(&page);
        }
        img
    }

    #[test]
    fn a_page_set_reads_back_and_applies_over_an_image() {
        let mut img = image(&[1, 2, 3], 512);
        let mut set = PageSet::new(512, 4);
        set.insert(2, vec![9; 512]);
        set.insert(4, vec![7; 512]);
        let back = PageSet::decode(&set.encode()).expect("decodes");
        assert_eq!(back, set);
        back.apply(&mut img).expect("applies");
        assert_eq!(img.len(), 4 * 512);
        assert!(img[512..1024].iter().all(|b| *b == 9));
        assert!(img[1024..1536].iter().all(|b| *b == 3), "page 3 unchanged");
        assert!(img[1536..].iter().all(|b| *b == 7));
    }

    #[test]
    fn a_shorter_length_cuts_the_image_and_its_pages() {
        let mut img = image(&[1, 2, 3], 512);
        let mut set = PageSet::new(512, 2);
        set.insert(2, vec![5; 512]);
        set.apply(&mut img).expect("applies");
        assert_eq!(img.len(), 1024);
        let mut merged = PageSet::new(512, 3);
        merged.insert(3, vec![1; 512]);
        merged.merge(set).expect("same page size");
        assert_eq!(merged.len(), 1, "page 3 is past the new length");
        assert_eq!(merged.db_pages(), 2);
    }

    #[test]
    fn a_merge_then_apply_equals_applying_each_in_turn() {
        let base = image(&[1, 2, 3, 4], 512);
        let mut a = PageSet::new(512, 5);
        a.insert(2, vec![8; 512]);
        a.insert(5, vec![8; 512]);
        let mut b = PageSet::new(512, 5);
        b.insert(2, vec![6; 512]);
        b.insert(3, vec![6; 512]);
        let mut one_by_one = base.clone();
        a.apply(&mut one_by_one).expect("a");
        b.apply(&mut one_by_one).expect("b");
        let mut merged = a.clone();
        merged.merge(b).expect("merge");
        let mut at_once = base;
        merged.apply(&mut at_once).expect("merged");
        assert_eq!(one_by_one, at_once);
    }

    #[test]
    fn a_diff_applied_to_its_from_gives_its_to() {
        let from = image(&[1, 2, 3, 4], 512);
        let to = image(&[1, 9, 3], 512);
        let d = PageSet::diff(&from, &to).expect("two images");
        assert_eq!(d.len(), 1, "only page 2 differs");
        let mut applied = from.clone();
        d.apply(&mut applied).expect("applies");
        assert_eq!(applied, to);
        let longer = image(&[1, 2, 3, 4, 5], 512);
        let mut applied = from;
        PageSet::diff(&applied, &longer)
            .expect("two images")
            .apply(&mut applied)
            .expect("applies");
        assert_eq!(applied, longer);
        assert!(PageSet::diff(b"not a database", &longer).is_none());
    }

    #[test]
    fn bodies_are_told_apart_and_broken_ones_refused() {
        assert!(matches!(Body::decode(image(&[1], 512)), Ok(Body::Image(_))));
        assert!(matches!(Body::decode(Vec::new()), Ok(Body::Image(_))));
        let set = PageSet::new(512, 1).encode();
        assert!(matches!(Body::decode(set.clone()), Ok(Body::Pages(_))));
        let mut short = PageSet::new(512, 1);
        short.insert(1, vec![0; 512]);
        let mut bytes = short.encode();
        bytes.pop();
        assert!(matches!(Body::decode(bytes), Err(PageSetError::WrongLength { .. })));
        assert!(matches!(
            Body::decode(b"hello".to_vec()),
            Err(PageSetError::UnknownFormat(_))
        ));
        let mut wrong = PageSet::new(512, 1);
        wrong.insert(1, vec![0; 512]);
        let mut img = image(&[1], 1024);
        assert!(matches!(wrong.apply(&mut img), Err(PageSetError::PageSize { .. })));
    }
}
