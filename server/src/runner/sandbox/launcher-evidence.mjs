// The plan's evidence, derived by the launcher alone once the command exited 0 (see the header of
// sandbox-launcher.mjs): nothing else alive, the saved plan read, shown, read again, and each
// artifact sent over the control channel.
import { now, send, sendArtifact } from "./launcher-control.mjs";
import { writeOutput } from "./launcher-output.mjs";
import { buildPlanDiff, buildRedactedPlan } from "./launcher-plan-diff.mjs";
import { commandOf, killOthers, readEvidenceFile, runShow } from "./launcher-show.mjs";

/**
 * After the command exited 0: the plan's evidence, derived by this launcher alone (see the header)
 * and sent over the control channel. Resolves the exit code to report (0, or the failing step's).
 */
export async function produceEvidence(evidence, booted, env, wrapper) {
  send({ type: "mark", name: "evidence", at: now() });
  const fail = (line, code = 1) => {
    writeOutput("stderr", `stackship: ${line}\n`);
    return code;
  };
  if (!killOthers())
    return fail("could not end every other process of the sandbox after the plan; the plan is not used.");
  const planFile = readEvidenceFile(evidence.plan);
  if (planFile === undefined) return fail("the saved plan is missing or not a regular file.");
  const cwd = typeof evidence.cwd === "string" ? evidence.cwd : "/work";
  const show = commandOf(evidence.show);
  if (show === undefined) return fail("the evidence has no show command.");
  send({ type: "mark", name: "show", at: now() });
  const shown = await runShow([...wrapper, ...show], cwd, env);
  if (shown.code !== 0 || shown.signal !== null || shown.stdout === undefined)
    return fail("could not show the saved plan as JSON.", shown.code === 0 || shown.code === null ? 1 : shown.code);
  // Read again with nothing else alive: it must still be the plan that was shown.
  const again = readEvidenceFile(evidence.plan);
  if (again === undefined || !again.equals(planFile))
    return fail("the saved plan changed while it was shown; the plan is not used.");
  sendArtifact("plan.tfplan", planFile);
  sendArtifact("plan.json", shown.stdout);
  send({ type: "mark", name: "plan-diff", at: now() });
  if (evidence.planDiff && typeof evidence.planDiff === "object") {
    const planDiff = await buildPlanDiff(booted.planDiff, evidence.planDiff, shown.stdout, env);
    if (planDiff !== undefined) sendArtifact("plan-diff.json", planDiff);
  }
  if (evidence.redactedPlan && typeof evidence.redactedPlan === "object") {
    send({ type: "mark", name: "redacted-plan", at: now() });
    const redacted = await buildRedactedPlan(booted.planDiff, evidence.redactedPlan, shown.stdout, env, wrapper, cwd);
    if (redacted !== undefined) sendArtifact("plan-redacted.json", redacted);
  }
  const humanShow = commandOf(evidence.humanShow);
  if (humanShow !== undefined) {
    // Only for the human form of the log (never evidence): without it the log shows the plan's `@message` lines.
    send({ type: "mark", name: "human-show", at: now() });
    const human = await runShow([...wrapper, ...humanShow], cwd, env, "plan.txt");
    if (human.code === 0 && human.signal === null && human.stdout !== undefined) sendArtifact("plan.txt", human.stdout);
  }
  for (const { name, from } of Array.isArray(evidence.files) ? evidence.files : []) {
    if (typeof name !== "string" || typeof from !== "string") continue;
    const bytes = readEvidenceFile(from);
    if (bytes !== undefined) sendArtifact(name, bytes);
  }
  return 0;
}
