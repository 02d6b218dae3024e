#!/usr/bin/env bash
# CPU per plan by process kind for the throughput bench (see throughput-cpu.ts): perf samples
# every millisecond of CPU time (task-clock) of the bench process and everything it starts
# (local tofu, bwrap, the sandbox launcher, tofu inside, prlimit/sh/tar/cp, mount/umount…),
# then splits them by phase (local / StackShip) and kind. Needs perf (Debian linux-perf) and root.
#   bash scripts/bench/cpu-by-kind.sh [N]      (N default 40; BENCH_CPU_PHASES as throughput-cpu.ts)
set -euo pipefail
cd "$(dirname "$0")/../.."
n="${1:-40}"
out="$(mktemp -d "${TMPDIR:-/tmp}/ss-cpu-XXXXXX")"
trap 'rm -rf "$out"' EXIT
BENCH_THROUGHPUT_N="$n" perf record -q -k CLOCK_MONOTONIC -e task-clock/period=1000000/ -e sched:sched_process_exec -o "$out/perf.data" -- \
  node --import tsx scripts/bench/throughput-cpu.ts | tee "$out/marks.txt"
perf script -i "$out/perf.data" -F comm,pid,tid,time,event,period 2>/dev/null > "$out/samples.txt"
node --import tsx scripts/bench/cpu-by-kind.ts "$out/marks.txt" "$out/samples.txt" "$n"
