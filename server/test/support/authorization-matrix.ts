// The shape both authorization matrices (v1 and tfe) share: five callers, a row of expected
// statuses per operation, and every operation called as every caller.

export const CALLERS = ["anonymous", "other", "viewer", "operator", "admin"] as const;
export type Caller = (typeof CALLERS)[number];
export type Row = Record<Caller, number>;

export const row = (anonymous: number, other: number, viewer: number, operator: number, admin: number): Row => ({ anonymous, other, viewer, operator, admin });
/** Readable by members of the organization, hidden from other organizations. */
export const READ = row(401, 404, 200, 200, 200);

/** Calls every operation as every caller; each call whose status differs from `expected`, described (empty when all match). */
export async function matrixMismatches<Op extends { operationId: string }>(operations: readonly Op[], expected: Record<string, Row>, respond: (operation: Op, caller: Caller) => Promise<Response>): Promise<string[]> {
  const mismatches: string[] = [];
  for (const operation of operations) {
    for (const caller of CALLERS) {
      const response = await respond(operation, caller);
      const status = expected[operation.operationId][caller];
      if (response.status !== status) mismatches.push(`${operation.operationId} as ${caller}: ${response.status} (expected ${status}) ${(await response.text()).slice(0, 300)}`);
    }
  }
  return mismatches;
}
