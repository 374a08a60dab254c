//! `storage.exec` and `storage.query` defined by hand over the bindings'
//! own: their text and parameters are read from the guest's memory into
//! buffers the thread keeps, not into a new `String` and `Vec` at every
//! call, which took about a tenth of an `exec` (issue 25, ADR 056). What
//! they do is [`HostState::exec_sql`] and [`HostState::query_sql`], which
//! the bindings' trait methods call too.

use crate::bindings::types;
use crate::imports::{HostState, from_wit_value};
use crate::sql_types::SqlValue;
use std::cell::RefCell;
use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, WasmList, WasmStr};

/// The instance the bindings define `storage` in (a component built against
/// an earlier 0.2 version is linked to it by semver). Its version is the
/// WIT package's: a test reads it from the crate's copy of `wit/`, since a
/// name the bindings did not define would make a new instance beside
/// theirs, not fail.
const STORAGE: &str = "wasmkeep:actor/storage@0.2.3";

/// A text buffer larger than this is given back after its call, not kept
/// by the thread.
const KEEP_TEXT_BYTES: usize = 16 << 10;
/// Nor a parameter buffer with room for more values than this.
const KEEP_VALUES: usize = 64;

thread_local! {
    static TEXT: RefCell<String> = const { RefCell::new(String::new()) };
    static VALUES: RefCell<Vec<SqlValue>> = const { RefCell::new(Vec::new()) };
}

/// Defines `exec` and `query` in the linker's `storage` over the bindings'.
///
/// # Errors
/// The linker refused a definition (one of another type under the name).
pub(crate) fn define(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut storage = linker.instance(STORAGE)?;
    storage.func_wrap(
        "exec",
        |store: StoreContextMut<'_, HostState>, (sql, params): (WasmStr, WasmList<types::SqlValue>)| {
            Ok((read_then(store, &sql, &params, HostState::exec_sql)??,))
        },
    )?;
    storage.func_wrap(
        "query",
        |store: StoreContextMut<'_, HostState>, (sql, params): (WasmStr, WasmList<types::SqlValue>)| {
            Ok((read_then(store, &sql, &params, HostState::query_sql)??,))
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

/// Reads the text and parameters into the thread's buffers and runs `f` on them.
fn read_then<R>(
    mut store: StoreContextMut<'_, HostState>,
    sql: &WasmStr,
    params: &WasmList<types::SqlValue>,
    f: impl FnOnce(&mut HostState, &str, &[SqlValue]) -> R,
) -> wasmtime::Result<R> {
    // Taken out of the thread's cells, so a call that fails part way (a text
    // that is not UTF-8 traps the guest) leaves them empty, never borrowed.
    let mut text = TEXT.take();
    let mut values = VALUES.take();
    text.push_str(&sql.to_str(&store)?);
    for v in params.iter(&mut store)? {
        values.push(from_wit_value(v?));
    }
    let r = f(store.data_mut(), &text, &values);
    text.clear();
    values.clear(); // the strings and blobs go now, not at the next call
    // Put back with `replace`: `LocalKey::set` takes a slower path.
    if text.capacity() <= KEEP_TEXT_BYTES {
        TEXT.with(|cell| cell.replace(text));
    }
    if values.capacity() <= KEEP_VALUES {
        VALUES.with(|cell| cell.replace(values));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    /// The instance shadowed is the one the bindings define: the WIT
    /// package's version (a bump of `wit/` without this constant fails here).
    #[test]
    fn the_storage_instance_is_the_wit_package_s() {
        let wit = include_str!("../wit/actor.wit");
        let version = wit
            .lines()
            .find_map(|l| l.trim().strip_prefix("package wasmkeep:actor@"))
            .and_then(|v| v.strip_suffix(';'))
            .expect("the WIT names its package");
        assert_eq!(super::STORAGE, format!("wasmkeep:actor/storage@{version}"));
    }
}
