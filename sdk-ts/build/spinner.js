// A one-line spinner for the build command's long steps (type check,
// componentizing): the step's line with a turning frame and the elapsed time,
// rewritten in place a few times per second, so a build that takes seconds
// does not look hung. Only on a terminal: in a pipe or a CI log the frames
// would be noise, so there it writes nothing and the caller prints its
// plain line instead.
//
//   const spinner = startSpinner("wasmkeep-build: componentizing with starlingmonkey");
//   await work();
//   spinner.stop(); // clears the line: what is printed next starts at column 0

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const CLEAR = "\r\x1b[K";
// Ctrl-C (and a kill) would otherwise end the process mid-frame and leave the
// half line under the shell's prompt.
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"];

/** Whether `stream` is a terminal that understands "\x1b[K" (not a pipe, a file or TERM=dumb). */
export function isTerminal(stream) {
  return stream.isTTY === true && process.env.TERM !== "dumb";
}

/** `text ⠹ 7.3 s`, cut to the terminal's width so that it never wraps (a wrapped line is not rewritten by "\r"). */
function frameLine(text, frame, seconds, columns) {
  const tail = ` ${frame} ${seconds.toFixed(1)} s`;
  const room = (columns || 80) - 1 - tail.length;
  const head = text.length > room ? `${text.slice(0, Math.max(0, room - 1))}…` : text;
  return head + tail;
}

/**
 * Starts the spinner on `stream` (stderr by default) when it is a terminal;
 * `tty` overrides that (the tests' fake terminal). Returns `{ active, stop }`:
 * stop() ends it and clears its line; it can be called more than once.
 */
export function startSpinner(text, { stream = process.stderr, tty = isTerminal(stream), intervalMs = 100 } = {}) {
  if (!tty) return { active: false, stop() {} };
  const started = Date.now();
  let n = 0;
  const draw = () => stream.write(`\r${frameLine(text, FRAMES[n++ % FRAMES.length], (Date.now() - started) / 1000, stream.columns)}`);
  const timer = setInterval(draw, intervalMs);
  // The spinner never keeps the process alive on its own.
  timer.unref?.();
  const onSignal = (signal) => {
    stop();
    // Our listener kept the default action from running: let it run now, so
    // the exit status still says the build was interrupted.
    process.kill(process.pid, signal);
  };
  let stopped = false;
  function stop() {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    for (const s of SIGNALS) process.removeListener(s, onSignal);
    stream.write(CLEAR);
  }
  for (const s of SIGNALS) process.on(s, onSignal);
  draw();
  return { active: true, stop };
}
