// Splits the server and client test files into shards that take about as long as each other, so
// that scripts/run-tests.mjs can run them as parallel uvu processes. The times come from a
// previous run (scripts/test-durations.json, written by STACKSHIP_TEST_DURATIONS_FILE): the
// longest file goes first onto the shard with the least time so far. A file the record does not
// know counts as the median of those it does (or 1 s when it knows none).
import { existsSync, readFileSync } from "node:fs";

/** `files` in `count` shards of about equal recorded time; every file in exactly one, each shard sorted. */
export function shardFiles(files, durations, count) {
  const recorded = (file) =>
    Object.hasOwn(durations, file) && Number.isFinite(durations[file]) ? durations[file] : undefined;
  const known = files.map(recorded).filter((seconds) => seconds !== undefined);
  known.sort((a, b) => a - b);
  const fallback = known.length > 0 ? known[Math.floor(known.length / 2)] : 1;
  const weighed = files.map((file) => ({ file, seconds: recorded(file) ?? fallback }));
  // Longest first; equal times by name, so the split does not depend on the order files came in.
  weighed.sort((a, b) => b.seconds - a.seconds || (a.file < b.file ? -1 : 1));
  const shards = Array.from({ length: Math.max(1, Math.min(count, files.length)) }, () => ({ seconds: 0, files: [] }));
  for (const { file, seconds } of weighed) {
    const lightest = shards.reduce((least, shard) => (shard.seconds < least.seconds ? shard : least));
    lightest.files.push(file);
    lightest.seconds += seconds;
  }
  return shards.map((shard) => ({ seconds: shard.seconds, files: shard.files.sort() }));
}

/** The `[test-duration] <seconds> <file>` lines a uvu run printed (scripts/test-timeout.cjs), as file → seconds. */
export function durationsIn(output) {
  const durations = {};
  for (const match of output.matchAll(/\[test-duration\] (\d+(?:\.\d+)?) (\S+)/g))
    durations[match[2]] = Number(match[1]);
  return durations;
}

/** The recorded durations in `path`, or none when the file is missing or unreadable. */
export function readDurations(path) {
  if (!existsSync(path)) return {};
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8"));
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? parsed : {};
  } catch {
    return {};
  }
}
