// The bank (src/bank.ts), as it should be: every operation once per id.
import { bank } from "./bank.js";

export default bank({ idAfterAnswer: false });
