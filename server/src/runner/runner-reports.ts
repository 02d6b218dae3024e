// The runner's accounts for its log: a failure named without the SQL it carried, and what a
// graceful shutdown waited for.

/**
 * A failure the log can name without quoting what the database was asked: the driver's message
 * after the SQL knex puts before it (which may hold values), on one line, and its code.
 */
export function describeFailure(error: unknown): string {
  const message = String((error as Error)?.message ?? error);
  const cause = (message.includes(" - ") ? message.slice(message.lastIndexOf(" - ") + 3) : message)
    .split("\n")[0]
    .trim()
    .slice(0, 300);
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" && code.length > 0 && !cause.includes(code) ? `${cause} (${code})` : cause;
}

/** What a graceful shutdown waited for: the phases in flight at the signal, and those the grace ran out on. */
export interface ShutdownReport {
  inFlight: { runId: string; phase: string }[];
  interrupted: { runId: string; phase: string }[];
}

/** The shutdown log line's account of the phases: what it waited for and how each group ended. */
export function describeShutdown(report: ShutdownReport): string {
  const list = (phases: ShutdownReport["inFlight"]) =>
    phases.map(({ runId, phase }) => `${phase} of ${runId}`).join(", ");
  if (report.inFlight.length === 0) return "waited for no phase (none was in flight)";
  const interrupted = new Set(report.interrupted.map(({ runId, phase }) => `${phase}:${runId}`));
  const finished = report.inFlight.filter(({ runId, phase }) => !interrupted.has(`${phase}:${runId}`));
  return [
    `waited for ${report.inFlight.length} phase(s) in flight`,
    finished.length > 0 ? `ended within the grace: ${list(finished)}` : null,
    report.interrupted.length > 0 ? `interrupted when the grace ran out: ${list(report.interrupted)}` : null,
  ]
    .filter(Boolean)
    .join("; ");
}
