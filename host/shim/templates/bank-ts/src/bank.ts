// A bank account whose every 200 is kept, in a cluster too.
//
// - POST /deposit?op=<id>&amount=<n> and POST /withdraw?op=<id>&amount=<n>
//   move money once per operation id: a client that retries after a 503 or
//   a lost answer repeats the id, and the retry changes nothing and answers
//   what the first try did. A withdrawal beyond the balance is refused with
//   409, and that refusal is kept for its id too.
// - GET / answers {"balance": <n>, "interest": <total paid>}.
// - Interest: 1% of the balance (rounded down) every virtual day, paid by
//   the alarm, which sets itself again.
// - DELETE / closes the account with a durable delete.
//
// Nothing here waits for a write by hand: the SDK sends each answer only
// once the transaction before it is kept (ADR 019), and answers 503 when it
// is not known to be.
import { SqlError, defineActor, json, log, setAlarmIn, storage, text } from "@wasmkeep/actor";
import type { Request, Responder, Response } from "@wasmkeep/actor";

const DAY_MS = 24 * 3600 * 1000;

function balance(): number {
  return storage.query<{ balance: number }>("SELECT balance FROM account")[0]!.balance;
}

/**
 * The bank; `idAfterAnswer: true` is the deliberately wrong variant: a deposit
 * records its operation id only after its answer went out, so a host that
 * stops between the two (a crash) leaves the money moved and the id unknown,
 * and a client that did not get the answer retries and is counted twice.
 */
export function bank({ idAfterAnswer }: { idAfterAnswer: boolean }) {
  /** `record`: whether the operation's id is written with the money it moves (else the caller writes it). */
  function operation(request: Request, kind: "deposit" | "withdraw", record = true): Response {
    const op = request.query["op"];
    const amount = Number(request.query["amount"]);
    if (!op || !Number.isSafeInteger(amount) || amount <= 0) return text("give ?op=<id>&amount=<a positive whole number>", 400);
    return storage.transaction(() => {
      // A retry of an operation already done answers what it answered.
      const [done] = storage.query<{ status: number; answer: string }>("SELECT status, answer FROM ops WHERE id = ?", op);
      if (done) return text(done.answer, done.status);
      const b = balance();
      let status = 200;
      let answer: string;
      if (kind === "withdraw" && amount > b) {
        status = 409;
        answer = `refused: the balance is ${b}`;
      } else {
        const delta = kind === "deposit" ? amount : -amount;
        storage.exec("UPDATE account SET balance = balance + ?", delta);
        answer = String(b + delta);
      }
      if (record) storage.exec("INSERT OR REPLACE INTO ops(id, status, answer) VALUES (?, ?, ?)", op, status, answer);
      return text(answer, status);
    });
  }

  /** The broken variant's deposit: answered first, its id recorded after. */
  function depositThenRecord(request: Request, responder: Responder): void {
    const answer = operation(request, "deposit", false);
    responder.send(answer);
    if (answer.status === 200 && typeof answer.body === "string") {
      storage.exec("INSERT OR REPLACE INTO ops(id, status, answer) VALUES (?, ?, ?)", request.query["op"]!, 200, answer.body);
    }
  }

  return defineActor({
    onInit() {
      storage.exec(`
        CREATE TABLE account(id INTEGER PRIMARY KEY CHECK (id = 1), balance INTEGER NOT NULL);
        INSERT INTO account VALUES (1, 0);
        CREATE TABLE ops(id TEXT PRIMARY KEY, status INTEGER NOT NULL, answer TEXT NOT NULL);
        CREATE TABLE interest(paid INTEGER NOT NULL);
      `);
      setAlarmIn(DAY_MS);
    },

    onRequest(request, responder) {
      try {
        switch (`${request.method} ${request.pathname}`) {
          case "GET /": {
            const [row] = storage.query<{ paid: number }>("SELECT coalesce(sum(paid), 0) AS paid FROM interest");
            return json({ balance: balance(), interest: row!.paid });
          }
          case "POST /deposit":
            if (idAfterAnswer) return depositThenRecord(request, responder);
            return operation(request, "deposit");
          case "POST /withdraw":
            return operation(request, "withdraw");
          case "DELETE /":
            storage.deleteSelfDurable();
            return text("closed");
          default:
            return text("use GET /, POST /deposit?op=<id>&amount=<n>, POST /withdraw?op=<id>&amount=<n> or DELETE /", 405);
        }
      } catch (err) {
        // "internal": not known to be done; a 503 asks the client to retry.
        if (err instanceof SqlError) return text(`${err.code}: ${err.message}; try again`, 503);
        throw err;
      }
    },

    onAlarm() {
      try {
        storage.transaction(() => {
          const interest = Math.floor(balance() / 100);
          storage.exec("UPDATE account SET balance = balance + ?", interest);
          storage.exec("INSERT INTO interest(paid) VALUES (?)", interest);
        });
      } catch (err) {
        log.warn(`interest not paid: ${err}`);
      }
      setAlarmIn(DAY_MS);
    },
  });
}
