// A module resolution hook for the jco process wasmkeep-build starts: every
// import of @bytecodealliance/preview2-shim resolves from this package, which
// depends on 0.25.0, instead of from jco, whose ^0.26 makes jco 1.35 fail to
// read the WIT ("failed to get path metadata ... (os error 44)"). npm applies
// `overrides` only in the project being installed, so without this every
// project using the SDK had to pin the shim itself.
const SHIM = "@bytecodealliance/preview2-shim";
const sdk = new URL("../package.json", import.meta.url).href;

export async function resolve(specifier, context, next) {
  if (specifier === SHIM || specifier.startsWith(`${SHIM}/`)) {
    return next(specifier, { ...context, parentURL: sdk });
  }
  return next(specifier, context);
}
