// The launcher's control channel to the runner (fd 3, a socketpair the runner passed through
// bwrap): one JSON object per line, and the evidence's artifacts as a header line plus raw bytes
// (see sandbox-launcher.mjs for the protocol).
import { createHash } from "node:crypto";
import net from "node:net";

const CONTROL_FD = 3;

export const now = () => performance.timeOrigin + performance.now();

/** The control channel, opened by `main`. */
let control;

/** Opens the control channel (once, in `main`). */
export function openControl() {
  control = new net.Socket({ fd: CONTROL_FD, readable: true, writable: true });
  control.on("error", () => {});
  return control;
}

export function send(message) {
  control.write(`${JSON.stringify(message)}\n`);
}

export function finish(code, message) {
  // Exit only once the runner has the last message.
  control.end(`${JSON.stringify(message)}\n`, () => process.exit(code));
  setTimeout(() => process.exit(code), 1000).unref();
}

/**
 * After the command's exit report: the runner takes the report's status, not this process's, so
 * nothing is left to do but end. A SIGKILL of itself ends the process (and so the sandbox) a few
 * milliseconds sooner than process.exit, which first runs the exit handlers and tears down any
 * worker thread. The caller waits for `outputFlushed` first: a SIGKILL drops whatever this
 * process still queues for its stdout and stderr.
 */
export function finishReported(message) {
  control.end(`${JSON.stringify(message)}\n`, () => process.kill(process.pid, "SIGKILL"));
  setTimeout(() => process.kill(process.pid, "SIGKILL"), 1000).unref();
}

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

/** One artifact to the runner over the control channel: a header line, then exactly its bytes. */
export function sendArtifact(name, bytes) {
  control.write(`${JSON.stringify({ type: "artifact", name, size: bytes.length, sha256: sha256(bytes) })}\n`);
  if (bytes.length > 0) control.write(bytes);
}
