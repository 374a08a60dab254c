/// <reference path="./wasmkeep-actor-types.d.ts" />
declare module 'wasmkeep:actor/calls@0.2.4' {
  /**
   * Runs `on-call` on the target actor (creating it if its class allows)
   * and returns its answer. The caller waits; the callee runs its event in
   * its own mailbox, after the events queued there.
   */
  export function call(target: Address, payload: Uint8Array): Uint8Array;
  export type Address = import('wasmkeep:actor/types@0.2.4').Address;
  /**
   * Why a call failed.
   */
  export type CallError = CallErrorRefused | CallErrorRejected | CallErrorFailed;
  /**
   * Not delivered: unknown class, a class that takes no calls, a call
   * to itself or back along its own call chain (it would wait forever),
   * or the host is stopping.
   */
  export interface CallErrorRefused {
    tag: 'refused',
    val: string,
  }
  /**
   * Delivered; the callee's `on-call` answered with this error.
   */
  export interface CallErrorRejected {
    tag: 'rejected',
    val: string,
  }
  /**
   * Delivered; the callee's event failed (trap or time limit). Its
   * writes before the failure may have been kept.
   */
  export interface CallErrorFailed {
    tag: 'failed',
    val: string,
  }
}
