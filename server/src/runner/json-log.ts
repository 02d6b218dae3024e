/**
 * The human text of OpenTofu's machine-readable UI lines (`tofu plan -json`, `tofu apply -json`),
 * for the human form of a structured-output run's log (phase-log.ts): what /v1, the dashboard's
 * consoles and the live feed show. A line that is not such a JSON object is kept as it is (the
 * `tofu init` output and StackShip's own lines). Each UI line becomes its `@message`, except:
 * `version` and `refresh_complete` lines are left out (tofu's human output prints neither), a
 * diagnostic shows its summary, where it is and its detail, and `outputs` lists the outputs
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
      return null;
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
  diagnostic?: { severity?: string; summary?: string; detail?: string; range?: { filename?: string; start?: { line?: number } }; address?: string };
  outputs?: Record<string, { sensitive?: boolean; value?: unknown }>;
}

function isUiLine(value: unknown): value is UiLine {
  return typeof value === "object" && value !== null && typeof (value as UiLine)["@message"] === "string" && typeof (value as UiLine)["@level"] === "string";
}

function renderDiagnostic(line: UiLine): string {
  const d = line.diagnostic;
  if (!d) return line["@message"];
  const parts = [`\n${d.severity === "warning" ? "Warning" : "Error"}: ${d.summary ?? ""}`];
  if (d.address) parts.push(`\n  with ${d.address},`);
  if (d.range?.filename) parts.push(`\n  on ${d.range.filename}${d.range.start?.line ? ` line ${d.range.start.line}` : ""}:`);
  if (d.detail) parts.push(`\n\n${d.detail}`);
  return parts.join("");
}

function renderOutputs(line: UiLine): string | null {
  const outputs = Object.entries(line.outputs ?? {});
  if (outputs.length === 0) return null;
  const rendered = outputs
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, output]) => `${name} = ${output.sensitive ? "(sensitive value)" : "value" in output ? JSON.stringify(output.value) : "(known after apply)"}`);
  return `\nOutputs:\n\n${rendered.join("\n")}`;
}

/**
 * Splits a stream of text into whole lines and renders each (renderJsonLogLine); a partial
 * last line is held until its end arrives or `flush`.
 */
export class JsonLogRenderer {
  private partial = "";

  /** The human text of the whole lines `chunk` completes. */
  push(chunk: string): string {
    const text = this.partial + chunk;
    const end = text.lastIndexOf("\n");
    if (end < 0) {
      this.partial = text;
      return "";
    }
    this.partial = text.slice(end + 1);
    return renderLines(text.slice(0, end));
  }

  /** The held partial line, rendered. */
  flush(): string {
    const rest = this.partial;
    this.partial = "";
    return rest.length === 0 ? "" : renderLines(rest);
  }
}

function renderLines(text: string): string {
  let out = "";
  for (const line of text.split("\n")) {
    const rendered = renderJsonLogLine(line);
    if (rendered !== null) out += `${rendered}\n`;
  }
  return out;
}
