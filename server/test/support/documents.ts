// The generated schema types of both HTTP surfaces, for typing the documents the API tests read.
import type { components as TfeComponents } from "../../../generated/tfe/types.gen.ts";
import type { components as V1Components } from "../../../generated/v1/types.gen.ts";

/** The TFE surface's schemas (`Tfe["RunDocument"]`, `Tfe["ErrorDocument"]`, …). */
export type Tfe = TfeComponents["schemas"];
/** The /v1 surface's schemas (`V1["Run"]`, `V1["ErrorDocument"]`, …). */
export type V1 = V1Components["schemas"];

/** A response's JSON body, as the documented shape `T` (the caller names the shape it expects). */
export async function jsonOf<T>(response: Response): Promise<T> {
  return (await response.json()) as T;
}

/** An answer of the TFE test client (`api` in tfe-runs-fixtures.ts) whose JSON body is the documented shape `T`. */
export function answerAs<T>(answer: { status: number; json: unknown; headers: Headers }): {
  status: number;
  json: T;
  headers: Headers;
} {
  return { ...answer, json: answer.json as T };
}

/** The first error object of a JSON:API error document (the shape both surfaces share). */
export function firstError(document: unknown): Tfe["ErrorDocument"]["errors"][number] {
  return (document as Tfe["ErrorDocument"]).errors[0];
}
