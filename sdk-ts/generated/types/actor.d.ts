/// <reference path="./interfaces/wasmkeep-actor-alarms.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-calls.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-context.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-events.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-http.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-sockets.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-storage.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-types.d.ts" />
declare module 'wasmkeep:actor/actor@0.2.4' {
  export type * as WasmkeepActorAlarms024 from 'wasmkeep:actor/alarms@0.2.4'; // import wasmkeep:actor/alarms@0.2.4
  export type * as WasmkeepActorCalls024 from 'wasmkeep:actor/calls@0.2.4'; // import wasmkeep:actor/calls@0.2.4
  export type * as WasmkeepActorContext024 from 'wasmkeep:actor/context@0.2.4'; // import wasmkeep:actor/context@0.2.4
  export type * as WasmkeepActorHttp024 from 'wasmkeep:actor/http@0.2.4'; // import wasmkeep:actor/http@0.2.4
  export type * as WasmkeepActorSockets024 from 'wasmkeep:actor/sockets@0.2.4'; // import wasmkeep:actor/sockets@0.2.4
  export type * as WasmkeepActorStorage024 from 'wasmkeep:actor/storage@0.2.4'; // import wasmkeep:actor/storage@0.2.4
  export type * as WasmkeepActorTypes024 from 'wasmkeep:actor/types@0.2.4'; // import wasmkeep:actor/types@0.2.4
  export * as events from 'wasmkeep:actor/events@0.2.4'; // export wasmkeep:actor/events@0.2.4
}
