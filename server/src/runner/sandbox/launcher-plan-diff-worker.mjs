// The program of a plan-diff worker (launcher-plan-diff.mjs `buildInWorker`): one build with the builder it
// loads itself, the result posted back. Only in such a worker: loaded anywhere else it does nothing.
import { isMainThread, parentPort, workerData } from "node:worker_threads";
import { buildFromBytes } from "./launcher-plan-diff.mjs";

/** The worker's program: this module, building one request with the builder it loads itself. */
async function planDiffWorkerMain() {
  const { builder, request } = workerData;
  parentPort.postMessage(await buildFromBytes(import(builder), request));
}

if (!isMainThread && workerData?.planDiffWorker === true) void planDiffWorkerMain();
