declare module 'wasmkeep:actor/alarms@0.2.4' {
  /**
   * The pending alarm, in milliseconds since the Unix epoch, or none.
   * None after `delete-self-durable` answered `ok` in this event.
   */
  export function getAlarm(): bigint | undefined;
  /**
   * Sets (or moves) the alarm. It fires once, at or after `at`, and never
   * after the actor was deleted. Does nothing after `delete-self-durable`
   * answered `ok` in this event.
   */
  export function setAlarm(at: bigint): void;
  /**
   * Clears the pending alarm, if any. Does nothing after
   * `delete-self-durable` answered `ok` in this event.
   */
  export function clearAlarm(): void;
}
