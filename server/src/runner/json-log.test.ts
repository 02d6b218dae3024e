import { suite } from "uvu";
import * as assert from "uvu/assert";
import { JsonLogRenderer, renderJsonLogLine } from "./json-log.ts";

const render = suite("the human text of tofu's -json UI lines");

render(
  "a UI line becomes its @message; version and refresh_complete lines are left out; other text stays as it is",
  () => {
    assert.is(
      renderJsonLogLine('{"@level":"info","@message":"terraform_data.a: Plan to create","type":"planned_change"}'),
      "terraform_data.a: Plan to create",
    );
    assert.is(renderJsonLogLine('{"@level":"info","@message":"OpenTofu 1.12.6","type":"version"}'), null);
    assert.is(renderJsonLogLine('{"@level":"info","@message":"x: Refresh complete","type":"refresh_complete"}'), null);
    assert.is(renderJsonLogLine("Initializing the backend..."), "Initializing the backend...");
    // A provisioner's output as tofu prints it for people (the @message has a colon after the address).
    const progress = {
      "@level": "info",
      "@message": "terraform_data.leak: (local-exec): hello",
      hook: { resource: { addr: "terraform_data.leak" }, provisioner: "local-exec", output: "hello" },
      type: "provision_progress",
    };
    assert.is(renderJsonLogLine(JSON.stringify(progress)), "terraform_data.leak (local-exec): hello");
    assert.is(renderJsonLogLine(JSON.stringify({ ...progress, hook: {} })), "terraform_data.leak: (local-exec): hello");
    assert.is(
      renderJsonLogLine(
        '{"@level":"info","@message":"terraform_data.leak: (local-exec) Provisioning complete","type":"provision_complete"}',
      ),
      null,
    );
    assert.is(renderJsonLogLine('{"not":"a UI line"}'), '{"not":"a UI line"}');
    assert.is(renderJsonLogLine("{broken"), "{broken");
    assert.is(
      renderJsonLogLine(
        '{"@level":"info","@message":"Plan: 1 to add, 0 to change, 0 to destroy.","type":"change_summary"}',
      ),
      "\nPlan: 1 to add, 0 to change, 0 to destroy.\n",
    );
  },
);

render(
  "a diagnostic shows its summary, where and its detail; outputs list a sensitive one as (sensitive value)",
  () => {
    const diagnostic = JSON.stringify({
      "@level": "error",
      "@message": "Error: Invalid value",
      type: "diagnostic",
      diagnostic: {
        severity: "error",
        summary: "Invalid value",
        detail: "It must be short.",
        range: { filename: "main.tf", start: { line: 3 } },
      },
    });
    assert.is(renderJsonLogLine(diagnostic), "\nError: Invalid value\n  on main.tf line 3:\n\nIt must be short.");
    const outputs = JSON.stringify({
      "@level": "info",
      "@message": "Outputs: 2",
      type: "outputs",
      outputs: { secret: { sensitive: true }, greeting: { sensitive: false, value: "hello" } },
    });
    assert.is(renderJsonLogLine(outputs), '\nOutputs:\n\ngreeting = "hello"\nsecret = (sensitive value)');
  },
);

render("lines split across chunks are rendered whole; a partial last line waits for flush", () => {
  const renderer = new JsonLogRenderer();
  const line = '{"@level":"info","@message":"a: Creating...","type":"apply_start"}\n';
  let out = renderer.push("init text\n" + line.slice(0, 20)).join("");
  out += renderer.push(line.slice(20) + "tail").join("");
  assert.is(out, "init text\na: Creating...\n");
  assert.equal(renderer.flush(), ["tail\n"]);
  assert.equal(renderer.flush(), [""]);
});

const ui = (type: string, message: string) => `${JSON.stringify({ "@level": "info", "@message": message, type })}\n`;

render("with planSection, the plan's own lines are held back and their place ends the first piece", () => {
  const renderer = new JsonLogRenderer(true);
  const pieces = renderer.push(
    ui("version", "OpenTofu 1.12.6") +
      ui("refresh_start", "a: Refreshing state...") +
      ui("planned_change", "a: Plan to create") +
      ui("change_summary", "Plan: 1 to add, 0 to change, 0 to destroy.") +
      ui("diagnostic", "Warning: late"),
  );
  assert.equal(pieces, ["a: Refreshing state...\n", "Warning: late\n"]);
  assert.is(renderer.section, "a: Plan to create\n\nPlan: 1 to add, 0 to change, 0 to destroy.\n\n");
  // Only one place: later plan lines add to the section without a new piece.
  assert.equal(renderer.push(ui("outputs", "Outputs: 0")), [""]);
  assert.ok(renderer.sectionStarted);
});

render("without planSection (the apply, the live feed after release), every line renders where it comes", () => {
  const renderer = new JsonLogRenderer(false);
  assert.equal(renderer.push(ui("planned_change", "a: Plan to create") + ui("apply_start", "a: Creating...")), [
    "a: Plan to create\na: Creating...\n",
  ]);
  assert.is(renderer.section, "");
});

render.run();
