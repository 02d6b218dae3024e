/**
 * PLACEHOLDER (branch s3 only): the real conformance suite is written by another helper in
 * parallel and replaces this file at merge. It exists so s3.test.ts can already import it.
 */
import type { ObjectBackend } from "../object-backend.ts";

export function runObjectBackendConformance(_name: string, _make: () => Promise<ObjectBackend>): void {}
