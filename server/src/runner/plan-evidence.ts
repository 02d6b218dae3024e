import { sha256Hex } from "../domain/canonical-json.ts";

// The plan's evidence: the saved plan, its JSON and the redacted plan changes (and the dependency
// lock file and module manifest that travel with it), derived inside the plan sandbox by the
// launcher alone once the configuration's commands are over, and sent to the runner over the
// launcher's control channel (sandbox-launcher.mjs, "The plan's evidence"). Nothing of it is read
// from /work, where a process the configuration started could rewrite it.

/** What a start message's `evidence` asks of the launcher (paths inside the sandbox). */
export interface EvidenceRequest {
  /** The saved plan the command wrote. */
  plan: string;
  /** The command that prints the saved plan's JSON on its stdout (`tofu show -json <plan>`), run by the launcher. */
  show: readonly string[];
  /** Its working directory (the configuration's, for its providers' schemas). */
  cwd: string;
  /** The redacted plan changes of that JSON: this run's id, and the names of the env variables whose values stay redacted. */
  planDiff?: { runId: string; secretEnv: readonly string[] };
  /**
   * The redacted plan the CLI renders (`json-output-redacted`, redacted-plan.mjs): `schemas` is the
   * command printing the provider schemas (`tofu providers schema -json`), run by the launcher
   * like `show`; built when `always` (the run has structured output on) or when the plan imports
   * or generates configuration. The values of the `secretEnv` variables stay redacted.
   */
  redactedPlan?: { schemas: readonly string[]; always: boolean; secretEnv: readonly string[] };
  /**
   * The command that prints the saved plan as tofu renders it for people (`tofu show -no-color
   * <plan>`), run by the launcher like `show` once the rest is derived: the human form of a
   * structured-output run's plan log (phase-log.ts). Not evidence: only ever part of that log,
   * redacted by value like the rest of it.
   */
  humanShow?: readonly string[];
  /** Further files sent as they are once the plan is shown, by artifact name. */
  files?: readonly { name: string; from: string }[];
}

/** The artifacts' names on the channel. */
export const EVIDENCE_PLAN = "plan.tfplan";
export const EVIDENCE_PLAN_JSON = "plan.json";
export const EVIDENCE_PLAN_DIFF = "plan-diff.json";
export const EVIDENCE_PLAN_REDACTED = "plan-redacted.json";
export const EVIDENCE_PLAN_HUMAN = "plan.txt";

/** A JSON message of the launcher, or one artifact whose bytes followed its header. */
export type ControlItem =
  { kind: "message"; message: Record<string, unknown> } | { kind: "artifact"; name: string; bytes: Buffer };

const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/**
 * Reads the launcher's control channel: one JSON object per line, except that an `artifact`
 * header line (`{"type":"artifact","name","size","sha256"}`) is followed by exactly `size` raw
 * bytes. An artifact larger than `maxArtifactBytes`, or whose bytes do not have the header's
 * SHA-256, is a protocol error (`onError`), and nothing after it is read.
 */
export class ControlReader {
  private buffered: Buffer = Buffer.alloc(0);
  private artifact: { name: string; size: number; sha256: string; chunks: Buffer[]; received: number } | undefined;
  private broken = false;

  constructor(
    private readonly maxArtifactBytes: number,
    private readonly onItem: (item: ControlItem) => void,
    private readonly onError: (message: string) => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.broken) return;
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    while (!this.broken) {
      if (this.artifact !== undefined) {
        if (!this.takeArtifactBytes()) return;
        continue;
      }
      const newline = this.buffered.indexOf(0x0a);
      if (newline < 0) {
        if (this.buffered.length > 1024 * 1024) this.fail("a control message without its end");
        return;
      }
      const line = this.buffered.subarray(0, newline).toString("utf8");
      this.buffered = this.buffered.subarray(newline + 1);
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch {
        continue;
      }
      if (message === null || typeof message !== "object") continue;
      const m = message as Record<string, unknown>;
      if (m.type !== "artifact") {
        this.onItem({ kind: "message", message: m });
        continue;
      }
      if (
        typeof m.name !== "string" ||
        !NAME.test(m.name) ||
        typeof m.size !== "number" ||
        !Number.isSafeInteger(m.size) ||
        m.size < 0 ||
        typeof m.sha256 !== "string"
      ) {
        this.fail("a malformed artifact header");
        return;
      }
      if (m.size > this.maxArtifactBytes) {
        this.fail(`the artifact ${m.name} is ${m.size} bytes, more than ${this.maxArtifactBytes}`);
        return;
      }
      this.artifact = { name: m.name, size: m.size, sha256: m.sha256, chunks: [], received: 0 };
    }
  }

  /** Takes what is buffered of the current artifact's bytes; true once it is complete (and delivered). */
  private takeArtifactBytes(): boolean {
    const artifact = this.artifact!;
    const take = Math.min(artifact.size - artifact.received, this.buffered.length);
    if (take > 0) {
      artifact.chunks.push(this.buffered.subarray(0, take));
      artifact.received += take;
      this.buffered = this.buffered.subarray(take);
    }
    if (artifact.received < artifact.size) return false;
    this.artifact = undefined;
    const bytes = Buffer.concat(artifact.chunks, artifact.size);
    if (sha256Hex(bytes) !== artifact.sha256) {
      this.fail(`the artifact ${artifact.name} does not have the SHA-256 its header names`);
      return false;
    }
    this.onItem({ kind: "artifact", name: artifact.name, bytes });
    return true;
  }

  private fail(message: string): void {
    this.broken = true;
    this.buffered = Buffer.alloc(0);
    this.artifact = undefined;
    this.onError(message);
  }
}
