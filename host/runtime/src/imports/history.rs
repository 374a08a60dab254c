//! The guests' history calls (WIT 0.2.4, ADR 064): what a bookmark the
//! guest passes must be, and the refusals `restore-on-next-session`
//! answers at once.

use crate::replica::Pos;
use crate::sql_types::SqlError;

/// Where the host keeps no history for the actor.
pub(crate) const NO_HISTORY: &str = "no history is kept for this actor (this node was started without \
                                     history: `serve --no-history`, or a host without one): there is no state to \
                                     restore";

/// Where the storage keeps history but names no current state (a single
/// node's history does not answer the guests' bookmark calls yet).
pub(crate) const NO_CURRENT_STATE: &str = "this node's history names no current state of the actor to undo to \
                                           (a single node does not answer the bookmark calls yet): nothing is \
                                           restored";

/// After `delete-self` in this event: the end of the event deletes the actor.
pub(crate) const DELETE_REQUESTED: &str =
    "the actor is deleted when this event ends (delete-self): there is nothing to restore after it";

/// The longest piece of a refused bookmark a message repeats.
const SHOWN: usize = 64;

/// Reads a bookmark as `current-bookmark` writes it (a position,
/// `<generation>-<seq>` in hex).
///
/// # Errors
/// `not-allowed`: it is not a bookmark.
pub(crate) fn parse_bookmark(bookmark: &str) -> Result<Pos, SqlError> {
    bookmark.parse::<Pos>().map_err(|()| {
        let shown: String = bookmark.chars().take(SHOWN).collect();
        let more = if shown.len() < bookmark.len() { "…" } else { "" };
        SqlError::NotAllowed(format!(
            "not a bookmark: {shown:?}{more} (a bookmark is <generation>-<seq>, sixteen hex digits each, as \
             current-bookmark and bookmark-for-time answer it)"
        ))
    })
}

/// Refuses a target that sorts after the current state: no state of the
/// actor stands there yet.
///
/// # Errors
/// `not-allowed`, naming both.
pub(crate) fn not_after(to: Pos, current: &str) -> Result<(), SqlError> {
    match current.parse::<Pos>() {
        Ok(now) if to > now => Err(SqlError::NotAllowed(format!(
            "no such state: the bookmark {to} sorts after the actor's current state {now}"
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bookmarks_parse_and_refuse() {
        let p = parse_bookmark("0000000000000001-000000000000000a").expect("a bookmark");
        assert_eq!(p.to_string(), "0000000000000001-000000000000000a");
        for bad in ["", "nope", "1", "x-1", "1-", "00000000000000001-0"] {
            match parse_bookmark(bad) {
                Err(SqlError::NotAllowed(m)) => assert!(m.starts_with("not a bookmark"), "{m}"),
                other => panic!("{bad:?}: {other:?}"),
            }
        }
        let long = "z".repeat(1000);
        let Err(SqlError::NotAllowed(m)) = parse_bookmark(&long) else {
            panic!("refused")
        };
        assert!(m.len() < 300, "a long bookmark is cut in the message: {m}");
    }

    fn pos(s: &str) -> Pos {
        s.parse().expect("a position")
    }

    #[test]
    fn a_target_after_the_current_state_is_refused() {
        let now = "0000000000000002-0000000000000003";
        assert!(not_after(pos("0000000000000002-0000000000000003"), now).is_ok());
        assert!(not_after(pos("0000000000000001-00000000000000ff"), now).is_ok());
        assert!(matches!(
            not_after(pos("0000000000000002-0000000000000004"), now),
            Err(SqlError::NotAllowed(_))
        ));
    }
}
