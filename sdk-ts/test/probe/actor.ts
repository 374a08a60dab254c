// The SDK's probe actor for its own tests (test/errors.test.js): each path
// makes a handler fail in one way. Built by scripts/build-guests.js into
// target/components/sdk-ts-probe.wasm.
import { calls, context, decodeText, defineActor, json, log, setAlarmIn, sockets, storage, text } from "@wasmkeep/actor";

class NamedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NamedError";
  }
}

function fail(how: string): unknown {
  switch (how) {
    case "bad-status":
      return { status: 200.5, body: "a status is an integer" };
    case "error":
      throw new Error("boom");
    case "named":
      throw new NamedError("named boom");
    case "sdk-type-error":
      return storage.exec("SELECT ?", {} as never);
    case "sql":
      return storage.exec("SELEC nonsense");
    case "json-undefined":
      return json(undefined);
    case "string":
      throw "a string";
    case "object":
      throw { code: 7 };
    case "undefined":
      throw undefined;
    case "null":
      throw null;
    case "no-stack": {
      const e = new Error("no stack here");
      Object.defineProperty(e, "stack", { value: undefined });
      throw e;
    }
    case "bad-answer":
      return 42;
    case "bad-body":
      return { status: 200, body: { not: "a body" } };
    case "log-error":
      log.error("logged:", new TypeError("logged type error"));
      return text("logged");
    case "console": {
      // QuickJS has no console of its own: the SDK's stand-in writes to the host's log.
      // (The SDK's tsconfig has no DOM or Node types, hence the cast.)
      const c = (globalThis as unknown as { console: Record<"log" | "warn" | "error", (...a: unknown[]) => void> }).console;
      c.log("console.log", 1, { a: 2n });
      c.warn("console.warn");
      c.error("console.error", new RangeError("console range"));
      return text("printed");
    }
  }
  return text(`unknown failure ${how}`, 400);
}

export default defineActor({
  onInit() {
    if (context.self().name === "init-fails") throw new RangeError("onInit boom");
    storage.exec("CREATE TABLE seen(what TEXT)");
  },
  onRequest(request, responder) {
    const [, verb, arg] = request.pathname.split("/");
    if (verb === "fail") return fail(arg ?? "") as string;
    if (verb === "sent-by") {
      // A method taken off the responder still sends (closures, not a class).
      const { send } = responder;
      send(text(`sent by a detached send; sent = ${responder.sent}`));
      return;
    }
    // The handler gets exactly its event's two arguments.
    // eslint-disable-next-line prefer-rest-params
    if (verb === "arity") return text(String(arguments.length));
    if (verb === "json-bigint") {
      // bigints inside a JSON answer, beside plain values, with a toJSON on the way.
      return json({ small: 1n, big: 12345678901234567890n, list: [2n, "x", null], at: { toJSON: () => 7 } });
    }
    if (verb === "alarm") {
      setAlarmIn(0);
      return text("set");
    }
    if (verb === "call") return text(calls.callText({ class: "probe", name: "callee" }, arg ?? ""));
    if (verb === "request") {
      // Everything the README lists for a Request.
      return json({
        method: request.method,
        path: request.path,
        pathname: request.pathname,
        query: request.query,
        headers: request.headers,
        header: request.header("X-Probe") ?? null,
        text: request.text(),
        json: request.body.length && request.header("content-type") === "application/json" ? request.json() : null,
        bodyBytes: request.body.length,
      });
    }
    return text("ok");
  },
  onAlarm() {
    throw new Error("onAlarm boom");
  },
  onCall(payload) {
    const p = decodeText(payload);
    if (p === "throw") throw new Error("onCall boom");
    if (p === "throw-string") throw "onCall string";
    return `called: ${p}`;
  },
  onSocketMessage(socket, message) {
    if (message === "throw") throw new TypeError("onSocketMessage boom");
    sockets.send(socket, message);
  },
});
