// A deliberately wrong variant for test/chaos.test.js: a deposit records its
// operation id only after its answer went out, so a crash between the two
// followed by a retry counts the deposit twice.
import { bank } from "./bank.js";

export default bank({ idAfterAnswer: true });
