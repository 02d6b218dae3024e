#!/usr/bin/env node
// stackship-plan-diff: plan JSON (`tofu show -json`) on standard input, the redacted
// `stackship.plan-diff/v1` artifact on standard output. Exit 1 with a message on standard error
// for input that is not plan JSON; messages never quote the input (it holds secrets in cleartext).
// Usage: stackship-plan-diff [--run-id <run id>] [--secret-env <NAME>]...
// Besides the masks, every value the plan itself marks sensitive anywhere (another resource's
// masks, sensitive outputs, variables declared sensitive, the prior state's masks) is redacted by
// value wherever else it appears, when it is at least 6 characters long
// (src/domain/redaction/sensitive-values.mjs).
// --secret-env names an environment variable whose value is secret whatever the plan's masks say,
// at any length (the value itself never appears on a command line).
// The plan sandbox runs the same builder, loaded by its launcher (server/src/runner/README.md).
import { buildPlanDiff, PlanDiffInputError } from "../src/domain/plan-diff/plan-diff.mjs";

function fail(message) {
  process.stderr.write(`stackship-plan-diff: ${message}\n`);
  process.exit(1);
}

const args = process.argv.slice(2);
let runId = null;
const knownSecrets = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--run-id" && i + 1 < args.length) runId = args[++i];
  else if (args[i] === "--secret-env" && i + 1 < args.length) {
    const value = process.env[args[++i]];
    if (value) knownSecrets.push(value);
  } else if (args[i] === "--help" || args[i] === "-h") {
    process.stdout.write(
      "usage: stackship-plan-diff [--run-id <run id>] [--secret-env <NAME>]... < plan.json > plan-diff.json\n",
    );
    process.exit(0);
  } else fail(`unexpected argument ${JSON.stringify(args[i])}`);
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
let plan;
try {
  plan = JSON.parse(Buffer.concat(chunks).toString("utf8"));
} catch {
  // The parser's own message quotes the input; never repeat it.
  fail("standard input is not JSON");
}
try {
  const { json } = buildPlanDiff(plan, { runId, knownSecrets, consume: true });
  process.stdout.write(json);
} catch (error) {
  if (error instanceof PlanDiffInputError) fail(error.message);
  fail("could not build the artifact");
}
