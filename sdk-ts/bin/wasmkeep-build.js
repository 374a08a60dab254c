#!/usr/bin/env node
// `npx wasmkeep-build ...`: the package's build command. It is build/wasmkeep-build.js,
// beside the two engines' backends (build/quickjs/, build/starlingmonkey/).
import "../build/wasmkeep-build.js";
