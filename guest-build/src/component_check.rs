//! What a built output is checked to be: a component, and a wasmkeep
//! actor's (it exports the events).

use anyhow::{Context, Result, bail};

use crate::{EVENTS_EXPORT_PREFIX, TARGET};

/// Checks that `bytes` are a component (not a core module) and that it
/// exports `wasmkeep:actor/events@...`.
///
/// # Errors
///
/// Says what the bytes are instead.
pub fn check_component(bytes: &[u8]) -> Result<()> {
    check_is_component(bytes)?;
    let mut depth = 0usize;
    let mut exports = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(bytes) {
        match payload.context("invalid component")? {
            wasmparser::Payload::ModuleSection { .. } | wasmparser::Payload::ComponentSection { .. } => depth += 1,
            wasmparser::Payload::End(_) => depth = depth.saturating_sub(1),
            wasmparser::Payload::ComponentExportSection(reader) if depth == 0 => {
                for export in reader {
                    exports.push(export.context("invalid export")?.name.name.to_string());
                }
            }
            _ => {}
        }
    }
    if exports.iter().any(|e| e.starts_with(EVENTS_EXPORT_PREFIX)) {
        Ok(())
    } else {
        bail!(
            "the component does not export {EVENTS_EXPORT_PREFIX}...; it exports {exports:?} \
             (did the crate call wasmkeep_actor::export!?)"
        )
    }
}

/// Fails unless `bytes` start as a component does (not a core module), saying what they are.
pub(crate) fn check_is_component(bytes: &[u8]) -> Result<()> {
    const MAGIC: &[u8] = b"\0asm";
    const COMPONENT_VERSION_AND_LAYER: &[u8] = &[0x0d, 0x00, 0x01, 0x00];
    if bytes.len() < 8 || &bytes[..4] != MAGIC {
        bail!("not a WebAssembly binary");
    }
    if &bytes[4..8] != COMPONENT_VERSION_AND_LAYER {
        bail!(
            "a core WebAssembly module, not a component (header {:02x?}); build for {TARGET}",
            &bytes[4..8]
        );
    }
    Ok(())
}
