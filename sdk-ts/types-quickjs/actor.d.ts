/// <reference path="./interfaces/wasmkeep-actor-alarms.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-calls.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-context.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-events.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-http.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-js-storage.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-sockets.d.ts" />
/// <reference path="./interfaces/wasmkeep-actor-types.d.ts" />
declare module 'wasmkeep:actor-js/actor@0.2.1' {
  export type * as WasmkeepActorJsStorage021 from 'wasmkeep:actor-js/storage@0.2.1'; // import wasmkeep:actor-js/storage@0.2.1
  export type * as WasmkeepActorAlarms021 from 'wasmkeep:actor/alarms@0.2.1'; // import wasmkeep:actor/alarms@0.2.1
  export type * as WasmkeepActorCalls021 from 'wasmkeep:actor/calls@0.2.1'; // import wasmkeep:actor/calls@0.2.1
  export type * as WasmkeepActorContext021 from 'wasmkeep:actor/context@0.2.1'; // import wasmkeep:actor/context@0.2.1
  export type * as WasmkeepActorHttp021 from 'wasmkeep:actor/http@0.2.1'; // import wasmkeep:actor/http@0.2.1
  export type * as WasmkeepActorSockets021 from 'wasmkeep:actor/sockets@0.2.1'; // import wasmkeep:actor/sockets@0.2.1
  export type * as WasmkeepActorTypes021 from 'wasmkeep:actor/types@0.2.1'; // import wasmkeep:actor/types@0.2.1
  export * as events from 'wasmkeep:actor/events@0.2.1'; // export wasmkeep:actor/events@0.2.1
}
