import { createClient } from "@hey-api/openapi-ts";
import { writeFileSync } from "node:fs";
import openapiTS, { astToString, type OpenAPI3 } from "openapi-typescript";
import { BANNER } from "./common.ts";

/** types.gen.ts: openapi-typescript's `paths`, `components` and `operations`. */
export async function emitTypes(spec: OpenAPI3, out: string) {
  const ast = await openapiTS(spec, { alphabetize: true });
  writeFileSync(out, `${BANNER}\n${astToString(ast)}`);
}

/** client/: the @hey-api fetch SDK that client/ re-exports and tests call the server through. */
export async function emitSdk(input: string, output: string) {
  await createClient({
    input,
    output: { path: output, module: { extension: ".ts" } },
    logs: { level: "silent" },
    plugins: ["@hey-api/client-fetch", "@hey-api/typescript", "@hey-api/sdk"],
  });
}
