/// <reference path="./interfaces/wasmkeep-actor-alarms.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-calls.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-context.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-events.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-http.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-sockets.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-storage.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-types.d.ts" />
declare module 'wasmkeep:actor/actor@0.2.2' {
  export type * as WasmkeepActorAlarms022 from 'wasmkeep:actor/alarms@0.2.2'; // import wasmkeep:actor/alarms@0.2.2
  export type * as WasmkeepActorCalls022 from 'wasmkeep:actor/calls@0.2.2'; // import wasmkeep:actor/calls@0.2.2
  export type * as WasmkeepActorContext022 from 'wasmkeep:actor/context@0.2.2'; // import wasmkeep:actor/context@0.2.2
  export type * as WasmkeepActorHttp022 from 'wasmkeep:actor/http@0.2.2'; // import wasmkeep:actor/http@0.2.2
  export type * as WasmkeepActorSockets022 from 'wasmkeep:actor/sockets@0.2.2'; // import wasmkeep:actor/sockets@0.2.2
  export type * as WasmkeepActorStorage022 from 'wasmkeep:actor/storage@0.2.2'; // import wasmkeep:actor/storage@0.2.2
  export type * as WasmkeepActorTypes022 from 'wasmkeep:actor/types@0.2.2'; // import wasmkeep:actor/types@0.2.2
  export * as events from 'wasmkeep:actor/events@0.2.2'; // export wasmkeep:actor/events@0.2.2
}
