// A deliberately wrong variant for test/chaos.test.js: deposits forget their
// operation id, so a retried deposit is counted twice.
import { bank } from "./bank.js";

export default bank({ idempotent: false });
