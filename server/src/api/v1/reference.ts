// The API reference pages and the bundled specifications (spec/v1/paths/reference.yaml), read
// from generated/ (written by `npm run generate`) once, on first request.
import { readFileSync } from "node:fs";
import type { components } from "../../../../generated/v1/types.gen.ts";
import type { H } from "./types.ts";

const GENERATED = new URL("../../../../generated/", import.meta.url);

/**
 * The reference pages run Redoc from inline scripts (no other host is contacted), so their policy
 * allows inline scripts and styles and nothing from elsewhere; Redoc's search runs in a blob: worker.
 */
export const REFERENCE_CSP =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; worker-src blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

const cache = new Map<string, Uint8Array>();

function generatedFile(path: string): Uint8Array {
  let bytes = cache.get(path);
  if (!bytes) {
    bytes = new Uint8Array(readFileSync(new URL(path, GENERATED)));
    cache.set(path, bytes);
  }
  return bytes;
}

type OpenApiDocument = components["schemas"]["OpenApiDocument"];

const specs = new Map<string, OpenApiDocument>();

function bundledSpec(surface: "v1" | "tfe"): OpenApiDocument {
  let spec = specs.get(surface);
  if (!spec) {
    spec = JSON.parse(Buffer.from(generatedFile(`${surface}/openapi.json`)).toString("utf8")) as OpenApiDocument;
    specs.set(surface, spec);
  }
  return spec;
}

const page = (surface: "v1" | "tfe") => ({
  status: 200 as const,
  body: generatedFile(`docs/${surface}.html`),
  headers: {
    "Cache-Control": "no-cache",
    "Content-Security-Policy": REFERENCE_CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
  },
});

const SPEC_HEADERS = { "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff" };

export const referenceHandlers = {
  async getOpenApiV1() {
    return { status: 200, body: bundledSpec("v1"), headers: SPEC_HEADERS };
  },
  async getOpenApiTfe() {
    return { status: 200, body: bundledSpec("tfe"), headers: SPEC_HEADERS };
  },
  async getApiReference() {
    return page("v1");
  },
  async getTfeApiReference() {
    return page("tfe");
  },
} satisfies Partial<H>;
