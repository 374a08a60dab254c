// The generated guest types (../generated/types, made by `npm run gen`) describe the WIT
// imports; this file only pulls them in for the SDK's own compilation.
/// <reference path="../generated/types/actor.d.ts" />
export {};
