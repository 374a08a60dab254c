declare module 'wasmkeep:actor/http@0.2.4' {
  /**
   * A request for `/<class>/<name>/<path>`.
   */
  export interface Request {
    method: string,
    /**
     * What follows `/<class>/<name>`, with the query string: `/`, `/items?page=2`.
     */
    path: string,
    headers: Array<[string, string]>,
    body: Uint8Array,
  }
  /**
   * The actor's answer.
   */
  export interface Response {
    status: number,
    headers: Array<[string, string]>,
    body: Uint8Array,
  }
  
  export class ResponseOutparam implements Disposable {
    /**
     * This type does not have a public constructor.
     */
    private constructor();
    /**
    * Sends the answer. An event that never sets it is answered 500.
    */
    static set(out: ResponseOutparam, response: Response): void;
    [Symbol.dispose](): void;
  }
}
