// Types for test-shards.mjs (plain JavaScript so that run-tests.mjs runs it without a loader).
/** Recorded run time per test file, in seconds. */
export type Durations = Record<string, number>;
export interface Shard {
  /** The recorded (or estimated) seconds of its files. */
  seconds: number;
  files: string[];
}
export function shardFiles(files: string[], durations: Durations, count: number): Shard[];
export function durationsIn(output: string): Durations;
export function readDurations(path: string): Durations;
