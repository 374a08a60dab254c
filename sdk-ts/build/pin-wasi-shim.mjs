// Loaded with `node --import` into jco's process: registers wasi-shim-hook.mjs.
import { register } from "node:module";

register("./wasi-shim-hook.mjs", import.meta.url);
