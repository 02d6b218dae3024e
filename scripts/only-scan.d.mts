// Types for only-scan.mjs (plain JavaScript so that run-tests.mjs runs it without a loader).
export interface OnlyCall {
  line: number;
  column: number;
  call: string;
  text: string;
}
export function findOnlyCalls(text: string): OnlyCall[];
export function scanForOnly(root: string, files: readonly string[]): Array<OnlyCall & { file: string }>;
