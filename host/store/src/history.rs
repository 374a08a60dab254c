//! An actor's history objects by their keys: where each stands on the
//! chain, what it holds, when it was written, and the parent a page set
//! applies to (ADR 064). A listing alone shows the whole chain.
//!
//! ```text
//! <gen>-<seq>.<seg|reset|snap>                         before ADR 064: a whole image, time from the listing
//! <gen>-<seq>-<ms>.<seg|reset|snap>                    a whole image written at <ms>
//! <gen>-<seq>-<ms>-<parent gen>-<parent seq>.pages     the pages changed on top of the parent
//! ```
//!
//! Every number is 16 hex digits, so keys sort as positions do.

use serde::{Deserialize, Serialize};

/// A position in an actor's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Pos {
    /// The holder's generation.
    pub generation: u64,
    /// The upload's number within the generation.
    pub seq: u64,
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:016x}-{:016x}", self.generation, self.seq)
    }
}

impl std::str::FromStr for Pos {
    type Err = ();

    /// Reads `<gen>-<seq>` in hex, as [`Pos`]'s `Display` writes it (a bookmark).
    fn from_str(s: &str) -> Result<Self, ()> {
        let (g, q) = s.split_once('-').ok_or(())?;
        if g.is_empty() || q.is_empty() || g.len() > 16 || q.len() > 16 {
            return Err(());
        }
        Ok(Pos {
            generation: u64::from_str_radix(g, 16).map_err(|_| ())?,
            seq: u64::from_str_radix(q, 16).map_err(|_| ())?,
        })
    }
}

/// What a history object holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// A whole database image at its position: after writes (before ADR
    /// 064 every upload), a restore, or a fork.
    Segment,
    /// The pages one commit, or a compacted run of commits, changed on top
    /// of its parent.
    Pages,
    /// An empty database: the actor was deleted here.
    Reset,
    /// A whole image of the state at a position that has another object
    /// too: it bounds the chain a restore replays.
    Snapshot,
}

impl Kind {
    /// The key's extension.
    pub fn ext(self) -> &'static str {
        match self {
            Kind::Segment => "seg",
            Kind::Pages => "pages",
            Kind::Reset => "reset",
            Kind::Snapshot => "snap",
        }
    }

    /// Whether the object is a whole image (a restore can begin at it).
    pub fn is_whole(self) -> bool {
        self != Kind::Pages
    }
}

/// A history object's key parsed back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryObject {
    /// Its key.
    pub key: String,
    /// Its position.
    pub pos: Pos,
    /// Its kind.
    pub kind: Kind,
    /// When it was written, by the writer's clock (from the key; from the
    /// listing for a key written before ADR 064, or 0 where none was given).
    pub at_ms: u64,
    /// The position a page set applies to (page sets only).
    pub parent: Option<Pos>,
}

fn hex(s: &str) -> Option<u64> {
    (s.len() == 16).then(|| u64::from_str_radix(s, 16).ok()).flatten()
}

/// Parses a history key under `prefix` (any of the forms in the module's
/// doc). A key of the oldest form gets `at_ms` 0; [`parse_listed`] takes the
/// listing's time for it.
pub fn parse_history_key(prefix: &str, key: &str) -> Option<HistoryObject> {
    let rest = key.strip_prefix(prefix)?;
    let (stem, ext) = rest.split_once('.')?;
    let kind = match ext {
        "seg" => Kind::Segment,
        "pages" => Kind::Pages,
        "reset" => Kind::Reset,
        "snap" => Kind::Snapshot,
        _ => return None,
    };
    let fields: Vec<&str> = stem.split('-').collect();
    let num = |i: usize| fields.get(i).and_then(|f| u64::from_str_radix(f, 16).ok());
    let (at_ms, parent) = match (kind, fields.len()) {
        (Kind::Pages, 5) => (
            hex(fields[2])?,
            Some(Pos {
                generation: hex(fields[3])?,
                seq: hex(fields[4])?,
            }),
        ),
        (Kind::Pages, _) => return None,
        (_, 2) => (0, None),
        (_, 3) => (hex(fields[2])?, None),
        _ => return None,
    };
    Some(HistoryObject {
        key: key.to_owned(),
        pos: Pos {
            generation: num(0)?,
            seq: num(1)?,
        },
        kind,
        at_ms,
        parent,
    })
}

/// As [`parse_history_key`], with the listing's time for a key that carries none.
pub fn parse_listed(prefix: &str, key: &str, last_modified: u64) -> Option<HistoryObject> {
    let mut o = parse_history_key(prefix, key)?;
    if o.kind != Kind::Pages && key[prefix.len()..].split('-').count() == 2 {
        o.at_ms = last_modified;
    }
    Some(o)
}

/// The key of a whole object (`seg`, `reset`, `snap`) at `pos`, written at `at_ms`.
pub fn whole_key(prefix: &str, pos: Pos, at_ms: u64, kind: Kind) -> String {
    debug_assert!(kind.is_whole(), "a page set has a parent");
    format!("{prefix}{pos}-{at_ms:016x}.{}", kind.ext())
}

/// The key of a page set at `pos` on `parent`, written at `at_ms`.
pub fn pages_key(prefix: &str, pos: Pos, at_ms: u64, parent: Pos) -> String {
    format!("{prefix}{pos}-{at_ms:016x}-{parent}.pages")
}

/// Sorts objects by position, and at one position the snapshot first (the
/// order a listing is read in).
pub fn sort(objects: &mut [HistoryObject]) {
    objects.sort_by(|a, b| {
        (a.pos, a.kind != Kind::Snapshot, a.parent, &a.key).cmp(&(b.pos, b.kind != Kind::Snapshot, b.parent, &b.key))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_form_reads_back() {
        let p = "state/t/a/history/c/x/";
        let pos = Pos { generation: 3, seq: 9 };
        let parent = Pos { generation: 2, seq: 1 };
        let whole = whole_key(p, pos, 77, Kind::Segment);
        let o = parse_history_key(p, &whole).expect("whole");
        assert_eq!((o.pos, o.kind, o.at_ms, o.parent), (pos, Kind::Segment, 77, None));
        let pages = pages_key(p, pos, 78, parent);
        let o = parse_history_key(p, &pages).expect("pages");
        assert_eq!((o.pos, o.kind, o.at_ms, o.parent), (pos, Kind::Pages, 78, Some(parent)));
        let legacy = format!("{p}{pos}.reset");
        let o = parse_listed(p, &legacy, 55).expect("legacy");
        assert_eq!((o.kind, o.at_ms), (Kind::Reset, 55));
        assert_eq!(parse_listed(p, &whole, 55).map(|o| o.at_ms), Some(77));
        assert!(
            parse_history_key(p, &format!("{p}{pos}.pages")).is_none(),
            "a page set names its parent"
        );
        assert!(parse_history_key(p, &format!("{p}{pos}.txt")).is_none());
        assert_eq!(pos.to_string().parse::<Pos>(), Ok(pos));
        assert!("x-1".parse::<Pos>().is_err());
    }

    #[test]
    fn keys_sort_as_positions() {
        let p = "h/";
        let a = whole_key(
            p,
            Pos {
                generation: 1,
                seq: 0xf,
            },
            5,
            Kind::Segment,
        );
        let b = pages_key(
            p,
            Pos {
                generation: 1,
                seq: 0x10,
            },
            4,
            Pos {
                generation: 1,
                seq: 0xf,
            },
        );
        let c = whole_key(p, Pos { generation: 2, seq: 0 }, 1, Kind::Segment);
        let mut keys = vec![c.clone(), b.clone(), a.clone()];
        keys.sort();
        assert_eq!(keys, vec![a, b, c]);
    }
}
