// The table of `cpu-by-kind.sh`: perf samples (one per millisecond of CPU time) of the
// throughput-cpu bench split by phase (the [cpu-mark] bounds it printed) and process kind, as
// CPU milliseconds per plan; and how many programs each phase executed per plan.
//   node --import tsx scripts/bench/cpu-by-kind.ts <marks.txt> <perf script output> <N>
import { readFileSync } from "node:fs";

const [marksFile, samplesFile, nArg] = process.argv.slice(2);
const n = Number(nArg);
const marks = new Map<string, number>();
let mainPid: number | undefined;
for (const line of readFileSync(marksFile, "utf8").split("\n")) {
  const match = /^\[cpu-mark\] (\S+) (\S+)$/.exec(line);
  if (!match) continue;
  if (match[1] === "pid") mainPid = Number(match[2]);
  else marks.set(match[1], Number(match[2]));
}
const phases = ["local", "stackship"].filter((p) => marks.has(`${p}:start`));
const mark = (name: string): number => marks.get(name) ?? NaN;
const phaseOf = (t: number) => phases.find((p) => t >= mark(`${p}:start`) && t <= mark(`${p}:end`));

/** pid → kind, learnt from exec events (a process's comm after its exec). */
const kindOfPid = new Map<number, string>();
const cpu: Record<string, Map<string, number>> = Object.fromEntries(phases.map((p) => [p, new Map<string, number>()]));
const execs: Record<string, Map<string, number>> = Object.fromEntries(
  phases.map((p) => [p, new Map<string, number>()]),
);
const add = (map: Map<string, number>, key: string, value: number) => map.set(key, (map.get(key) ?? 0) + value);

/** pid → the program it executed last (a child that has not executed yet still has its parent's name). */
const execOfPid = new Map<number, string>();

function kind(comm: string, pid: number): string {
  if (pid === mainPid) return "main node (API + runner + bench)";
  if (comm === "node")
    return execOfPid.get(pid) === "node" ? "launcher node (sandbox)" : "forked node child (before exec)";
  if (comm.startsWith("terraform-provi") || comm.startsWith("tofu-provider")) return "provider plugins";
  return comm;
}

// "            node 12539/12539 23136.498852:    1000000 task-clock/period=1000000/: "
const SAMPLE = /^\s*(.+?)\s+(\d+)\/(\d+)\s+([\d.]+):\s+(\d+)\s+(\S+):(?:\s|$)/;
const lines = readFileSync(samplesFile, "utf8").split("\n");
for (const line of lines) {
  const match = SAMPLE.exec(line);
  if (match?.[6].startsWith("sched:sched_process_exec")) execOfPid.set(Number(match[2]), match[1]);
}
for (const line of lines) {
  const match = SAMPLE.exec(line);
  if (!match) continue;
  const [, comm, pidText, , timeText, periodText, event] = match;
  const pid = Number(pidText);
  const phase = phaseOf(Number(timeText));
  if (event.startsWith("sched:sched_process_exec")) {
    kindOfPid.set(pid, comm);
    if (phase) add(execs[phase], kind(comm, pid), 1);
    continue;
  }
  if (!phase) continue;
  // A thread's comm can differ from its process's (e.g. node's worker threads); the process's exec decides.
  add(cpu[phase], kind(kindOfPid.get(pid) ?? comm, pid), Number(periodText) / 1e6);
}

for (const phase of phases) {
  const rows = [...cpu[phase]].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, ms]) => sum + ms, 0);
  const wall = mark(`${phase}:end`) - mark(`${phase}:start`);
  process.stdout.write(
    `\n[cpu] ${phase}: N = ${n}, wall ${wall.toFixed(1)} s, CPU ${(total / 1000).toFixed(1)} s = ${(total / n).toFixed(0)} ms per plan\n`,
  );
  for (const [k, ms] of rows) {
    if (ms / n < 0.5) continue;
    process.stdout.write(
      `  ${k.padEnd(36)} ${(ms / n).toFixed(1).padStart(8)} ms/plan  ${((100 * ms) / total).toFixed(1).padStart(5)}%   execs/plan ${((execs[phase].get(k) ?? 0) / n).toFixed(2)}\n`,
    );
  }
  const other = [...execs[phase]].filter(([k]) => (cpu[phase].get(k) ?? 0) / n < 0.5);
  if (other.length > 0)
    process.stdout.write(
      `  (also executed, under 0.5 ms/plan: ${other.map(([k, c]) => `${k} ${(c / n).toFixed(2)}/plan`).join(", ")})\n`,
    );
}
