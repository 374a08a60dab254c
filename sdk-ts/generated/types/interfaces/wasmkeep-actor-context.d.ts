/// <reference path="./wasmkeep-actor-types.d.ts" />
declare module 'wasmkeep:actor/context@0.2.4' {
  /**
   * This actor's address.
   */
  export function selfAddress(): Address;
  /**
   * The app this actor belongs to, as `tenant/app`.
   */
  export function app(): string;
  /**
   * The host's time in milliseconds since the Unix epoch: the clock alarms
   * run on (virtual under a test host, so use it rather than the system
   * clock for alarm times).
   */
  export function now(): bigint;
  /**
   * Writes a line to the host's log, tagged with the actor's address.
   */
  export function log(level: LogLevel, message: string): void;
  /**
   * The last deletion of this address before its current database was
   * created, or none if the host holds no such record (the address was
   * never deleted). Read from the marker the deletion left, so it is known
   * from positive evidence only: a guest that receives a late write (a
   * webhook for a deleted account) can refuse to recreate state. Inside the
   * event that deletes the actor it still answers the earlier deletion, if
   * any.
   */
  export function previousDeletion(): Deletion | undefined;
  /**
   * Tells the host why the current event is about to fail: the SDKs
   * call it from their event wrappers when a handler throws, raises or
   * panics, just before the event traps. The host answers the failed
   * event with it (a request's 500 body, a caller's `failed`) instead of
   * what the guest printed, so it needs no knowledge of each language's
   * panic format. The last report of an event counts; an event that does
   * not fail after all ignores it. It does not end the event.
   */
  export function reportFailure(report: FailureReport): void;
  export type Address = import('wasmkeep:actor/types@0.2.4').Address;
  /**
   * Severity of a log line.
   * # Variants
   * 
   * ## `"debug"`
   * 
   * ## `"info"`
   * 
   * ## `"warn"`
   * 
   * ## `"error"`
   */
  export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
  /**
   * How an earlier incarnation of this address was deleted.
   * # Variants
   * 
   * ## `"delete-self"`
   * 
   * `delete-self` in an event.
   * ## `"delete-self-durable"`
   * 
   * `delete-self-durable`.
   * ## `"operator"`
   * 
   * An operator's `actor delete`.
   * ## `"expired"`
   * 
   * Idle expiry (`expire-after-idle` in the manifest).
   */
  export type DeletionCause = 'delete-self' | 'delete-self-durable' | 'operator' | 'expired';
  /**
   * A deletion of this address that took effect.
   */
  export interface Deletion {
    /**
     * When it took effect: milliseconds since the Unix epoch on the host's clock.
     */
    at: bigint,
    /**
     * Who or what deleted it.
     */
    cause: DeletionCause,
  }
  /**
   * Why the current event is failing, as the guest's language tells it.
   */
  export interface FailureReport {
    /**
     * One line: what failed (`TypeError: x is not a function`,
     * `ValueError: no such plan`, the text a Rust panic carries).
     */
    message: string,
    /**
     * Where, as the language prints it (a stack, a traceback, a
     * panic's location), or empty.
     */
    detail: string,
  }
}
