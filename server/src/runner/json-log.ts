/**
 * The human text of OpenTofu's machine-readable UI lines (`tofu plan -json`, `tofu apply -json`),
 * for the human form of a structured-output run's log (phase-log.ts): what /v1, the dashboard's
 * consoles and the live feed show. A line that is not such a JSON object is kept as it is (the
 * `tofu init` output and StackShip's own lines). Each UI line becomes its `@message`, except:
 * `version`, `refresh_complete` and `provision_complete` lines are left out (tofu's human output
 * prints none of them), a provisioner's output reads `addr (provisioner): line` as tofu prints it,
 * a diagnostic shows its summary, where it is and its detail, and `outputs` lists the outputs
 * (a sensitive one as `(sensitive value)`, as tofu prints it).
 */
export function renderJsonLogLine(line: string): string | null {
  const trimmed = line.trim();
  if (!trimmed.startsWith("{")) return line;
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return line;
  }
  if (!isUiLine(parsed)) return line;
  switch (parsed.type) {
    case "version":
    case "refresh_complete":
    case "provision_complete":
      return null;
    case "provision_progress":
      return renderProvisionProgress(parsed);
    case "diagnostic":
      return renderDiagnostic(parsed);
    case "outputs":
      return renderOutputs(parsed);
    case "change_summary":
      return `\n${parsed["@message"]}\n`;
    default:
      return parsed["@message"];
  }
}

interface UiLine {
  "@message": string;
  "@level": string;
  type?: string;
  diagnostic?: {
    severity?: string;
    summary?: string;
    detail?: string;
    range?: { filename?: string; start?: { line?: number } };
    address?: string;
  };
  outputs?: Record<string, { sensitive?: boolean; value?: unknown }>;
  hook?: { resource?: { addr?: string }; provisioner?: string; output?: string };
}

function isUiLine(value: unknown): value is UiLine {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as UiLine)["@message"] === "string" &&
    typeof (value as UiLine)["@level"] === "string"
  );
}

/** tofu's human form of a provisioner's output line (`terraform_data.a (local-exec): text`); the `@message` has a colon after the address. */
function renderProvisionProgress(line: UiLine): string {
  const hook = line.hook;
  if (
    typeof hook?.resource?.addr !== "string" ||
    typeof hook.provisioner !== "string" ||
    typeof hook.output !== "string"
  )
    return line["@message"];
  return `${hook.resource.addr} (${hook.provisioner}): ${hook.output}`;
}

function renderDiagnostic(line: UiLine): string {
  const d = line.diagnostic;
  if (!d) return line["@message"];
  const parts = [`\n${d.severity === "warning" ? "Warning" : "Error"}: ${d.summary ?? ""}`];
  if (d.address) parts.push(`\n  with ${d.address},`);
  if (d.range?.filename)
    parts.push(`\n  on ${d.range.filename}${d.range.start?.line ? ` line ${d.range.start.line}` : ""}:`);
  if (d.detail) parts.push(`\n\n${d.detail}`);
  return parts.join("");
}

function renderOutputs(line: UiLine): string | null {
  const outputs = Object.entries(line.outputs ?? {});
  if (outputs.length === 0) return null;
  const rendered = outputs
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(
      ([name, output]) =>
        `${name} = ${output.sensitive ? "(sensitive value)" : "value" in output ? JSON.stringify(output.value) : "(known after apply)"}`,
    );
  return `\nOutputs:\n\n${rendered.join("\n")}`;
}

/** The UI lines that make up tofu's rendering of the plan itself (its drift, changes, summary and outputs). */
const PLAN_SECTION_TYPES = new Set(["resource_drift", "planned_change", "change_summary", "outputs"]);

/**
 * Splits a stream of text into whole lines and renders each (renderJsonLogLine); a partial
 * last line is held until its end arrives or `flush`.
 *
 * With `planSection` on (the plan phase's held log), the lines of the plan's own rendering
 * (PLAN_SECTION_TYPES) are not rendered where they come: the first of them ends a piece of the
 * output (the place the plan goes) and their `@message` rendering is kept in `section`, for when
 * tofu's own rendering of the saved plan (`tofu show`) is not there to take that place.
 */
export class JsonLogRenderer {
  private partial = "";
  /** The `@message` rendering of the plan's own lines, held back while `planSection` is on. */
  section = "";
  /** Whether the place of the plan's rendering has been passed (it ended a piece). */
  sectionStarted = false;

  constructor(public planSection = false) {}

  /**
   * The human text of the whole lines `chunk` completes, in pieces: more than one only where the
   * plan's own rendering goes, between the first piece and the second.
   */
  push(chunk: string): string[] {
    const text = this.partial + chunk;
    const end = text.lastIndexOf("\n");
    if (end < 0) {
      this.partial = text;
      return [""];
    }
    this.partial = text.slice(end + 1);
    return this.renderLines(text.slice(0, end));
  }

  /** The held partial line, rendered. */
  flush(): string[] {
    const rest = this.partial;
    this.partial = "";
    return rest.length === 0 ? [""] : this.renderLines(rest);
  }

  private renderLines(text: string): string[] {
    const pieces = [""];
    for (const line of text.split("\n")) {
      const rendered = renderJsonLogLine(line);
      if (rendered === null) continue;
      if (this.planSection && isPlanSectionLine(line)) {
        if (!this.sectionStarted) {
          this.sectionStarted = true;
          pieces.push("");
        }
        this.section += `${rendered}\n`;
        continue;
      }
      pieces[pieces.length - 1] += `${rendered}\n`;
    }
    return pieces;
  }
}

function isPlanSectionLine(line: string): boolean {
  const trimmed = line.trim();
  if (!trimmed.startsWith("{")) return false;
  try {
    const parsed: unknown = JSON.parse(trimmed);
    return isUiLine(parsed) && parsed.type !== undefined && PLAN_SECTION_TYPES.has(parsed.type);
  } catch {
    return false;
  }
}
