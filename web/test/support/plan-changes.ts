/**
 * The plan-changes component tests' set-up (web/src/run/plan-changes*.test.ts): an
 * `ss-plan-changes` mounted on a fake server that serves a plan diff, and the rows, detail and
 * boxes they read.
 */
import type { PlanDiff } from "@stackship/client";
import type { SsPlanChanges } from "../../src/run/plan-changes.ts";
import "../../src/run/plan-changes.ts";
import { text } from "./dom.ts";
import { FakeServer, mount } from "./fake-server.ts";
import { RUN_ID } from "./fixtures.ts";

export async function changes(server: FakeServer) {
  const el = document.createElement("ss-plan-changes");
  el.runId = RUN_ID;
  await mount(server, el);
  await el.changes.taskComplete.catch(() => undefined);
  await el.updateComplete;
  return el;
}

export const rows = (el: HTMLElement) => [...el.shadowRoot!.querySelectorAll('[role="listitem"]')];
export const resourceRows = (el: HTMLElement) => [...el.shadowRoot!.querySelectorAll<HTMLElement>(".row.resource")];
export const rowOf = (el: HTMLElement, address: string) =>
  resourceRows(el).find((r) => text(r.querySelector(".address")) === address)!;
export const serve = (diff: PlanDiff) =>
  new FakeServer().on(`GET /v1/runs/${RUN_ID}/plan-changes`, {
    status: 200,
    body: diff,
    contentType: "application/json",
  });
export const detailRows = (el: HTMLElement) =>
  [...el.shadowRoot!.querySelectorAll('[data-testid="changes-detail"] tbody tr')].map((tr) =>
    [...tr.querySelectorAll("td")].map((td) => text(td)),
  );
export async function open(el: SsPlanChanges, address: string) {
  rowOf(el, address).querySelector<HTMLButtonElement>("button.open")!.click();
  await el.updateComplete;
}
export const visibleBox = (el: Element) => {
  const r = el.getBoundingClientRect();
  return r.width > 0 && r.height > 0;
};
