//! The project's app manifest, `wasmkeep.toml`.

use super::Project;

/// The app manifest: one class, its component, and how `serve --watch`
/// rebuilds it (`build`, run here when a file under `watch` changes).
pub(super) fn manifest(p: &Project, build: &str, watch: &[&str]) -> String {
    manifest_of(p, &format!("{}.wasm", p.name), build, watch)
}

/// [`manifest`] with the component at `component`.
pub(super) fn manifest_of(p: &Project, component: &str, build: &str, watch: &[&str]) -> String {
    let watch: Vec<String> = watch.iter().map(|w| format!("{w:?}")).collect();
    format!(
        "# The app manifest for `wasmkeep-shim serve`. Paths are relative to this file.\n\
         app = \"local/{name}\"\n\n\
         [classes.{name}]\n\
         component = {component:?}\n\
         # Any request creates the actor if it does not exist yet.\n\
         access = \"open\"\n\
         # `serve --watch` runs this when a file under `watch` changes, then swaps\n\
         # the new component in (actors keep their state, alarms and sockets).\n\
         build = {build:?}\n\
         watch = [{watch}]\n",
        name = p.name,
        watch = watch.join(", "),
    )
}
