/// <reference path="./wasmkeep-actor-types.d.ts" />
declare module 'wasmkeep:actor/context@0.2.0' {
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
  export type Address = import('wasmkeep:actor/types@0.2.0').Address;
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
}
