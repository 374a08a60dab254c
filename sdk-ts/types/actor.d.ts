/// <reference path="./interfaces/wasmkeep-actor-alarms.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-calls.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-context.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-events.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-http.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-sockets.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-storage.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-types.d.ts" />
declare module 'wasmkeep:actor/actor@0.2.0' {
  export type * as WasmkeepActorAlarms020 from 'wasmkeep:actor/alarms@0.2.0'; // import wasmkeep:actor/alarms@0.2.0
  export type * as WasmkeepActorCalls020 from 'wasmkeep:actor/calls@0.2.0'; // import wasmkeep:actor/calls@0.2.0
  export type * as WasmkeepActorContext020 from 'wasmkeep:actor/context@0.2.0'; // import wasmkeep:actor/context@0.2.0
  export type * as WasmkeepActorHttp020 from 'wasmkeep:actor/http@0.2.0'; // import wasmkeep:actor/http@0.2.0
  export type * as WasmkeepActorSockets020 from 'wasmkeep:actor/sockets@0.2.0'; // import wasmkeep:actor/sockets@0.2.0
  export type * as WasmkeepActorStorage020 from 'wasmkeep:actor/storage@0.2.0'; // import wasmkeep:actor/storage@0.2.0
  export type * as WasmkeepActorTypes020 from 'wasmkeep:actor/types@0.2.0'; // import wasmkeep:actor/types@0.2.0
  export * as events from 'wasmkeep:actor/events@0.2.0'; // export wasmkeep:actor/events@0.2.0
}
