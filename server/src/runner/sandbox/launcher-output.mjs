// What the launcher writes to its stdout and stderr once it started the command (the command's
// output and the launcher's own lines), counted for the exit report, and the waits before it: for
// the command's last output, and until all of it has left this process.

/**
 * Everything this process writes to its stdout and stderr once it started the command: the
 * command's output (forwarded from the command's own pipes) and the launcher's lines. The exit
 * report gives the byte counts, so that the runner knows when it has all of the attempt's output
 * without waiting for the sandbox to end.
 */
export const written = { stdout: 0, stderr: 0 };
export function writeOutput(stream, chunk) {
  written[stream] += typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.length;
  (stream === "stdout" ? process.stdout : process.stderr).write(chunk);
}
/**
 * Resolves once everything written to the launcher's stdout and stderr has left this process.
 * Writes to a pipe are asynchronous in node: when the runner reads slower than the command wrote
 * (a loaded host), they queue here, and the SIGKILL of `finishReported` would drop them while the
 * exit report still counted them. An empty write completes after every write queued before it.
 */
export function outputFlushed() {
  return Promise.all(
    [process.stdout, process.stderr].map(
      (stream) =>
        new Promise((resolve) => {
          if (stream.writableLength === 0 || stream.destroyed) resolve();
          else stream.write("", () => resolve());
        }),
    ),
  );
}
/** How long the launcher waits, after the command exited, for the last of its output (a process it left behind may hold its pipes). */
const OUTPUT_DRAIN_MS = 500;
/** The longest it waits in all: a process left behind that keeps writing does not hold the exit report back for ever. */
const OUTPUT_DRAIN_MAX_MS = 10_000;

/**
 * Resolves once `ended` does, or once a whole OUTPUT_DRAIN_MS window went by with no output
 * forwarded (at most OUTPUT_DRAIN_MAX_MS in all). Each window is judged in the loop's check phase,
 * after its poll phase, so that output already waiting in the pipes when a launcher starved of CPU
 * wakes up is read (and opens a new window) before the window counts as quiet: a plain timer fires
 * before the poll and cut a long output short on a loaded machine.
 */
export function outputSettled(ended) {
  return new Promise((resolve) => {
    const deadline = performance.now() + OUTPUT_DRAIN_MAX_MS;
    const forwarded = () => written.stdout + written.stderr;
    let seen = forwarded();
    let timer;
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const window = () => {
      timer = setTimeout(
        () =>
          setImmediate(() => {
            if (forwarded() === seen || performance.now() >= deadline) return done();
            seen = forwarded();
            window();
          }),
        OUTPUT_DRAIN_MS,
      );
    };
    window();
    void ended.then(done);
  });
}
