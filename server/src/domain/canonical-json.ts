import { createHash } from "node:crypto";

/** A value canonicalize() accepts. */
export type CanonicalJsonValue =
  | null
  | boolean
  | number
  | string
  | readonly CanonicalJsonValue[]
  | { readonly [key: string]: CanonicalJsonValue | undefined };

/**
 * Deterministic JSON: object keys sorted by UTF-16 code units, no whitespace, array order kept,
 * undefined object members omitted (as JSON.stringify does).
 *
 * Throws a TypeError for anything without one obvious encoding: non-finite numbers, bigint,
 * functions, symbols, undefined outside an object member, cycles, and non-plain objects
 * (Date, Map, Buffer, class instances), which JSON.stringify would encode inconsistently.
 */
export function canonicalize(value: unknown): string {
  return encode(value, "$", new Set());
}

/** The lowercase hex SHA-256 of a UTF-8 string or of bytes. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

function encode(value: unknown, path: string, ancestors: Set<object>): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`canonicalize: non-finite number at ${path}`);
      return JSON.stringify(value);
    case "object":
      if (value === null) return "null";
      return encodeObject(value, path, ancestors);
    default:
      // undefined, bigint, function, symbol
      throw new TypeError(`canonicalize: cannot encode ${typeof value} at ${path}`);
  }
}

function encodeObject(value: object, path: string, ancestors: Set<object>): string {
  if (ancestors.has(value)) throw new TypeError(`canonicalize: cycle at ${path}`);
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      return `[${value.map((item, index) => encode(item, `${path}[${index}]`, ancestors)).join(",")}]`;
    }
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      throw new TypeError(`canonicalize: cannot encode a non-plain object at ${path}`);
    }
    const record = value as Record<string, unknown>;
    // Default sort compares UTF-16 code units, which is what the canonical form requires.
    const keys = Object.keys(record).sort();
    const members: string[] = [];
    for (const key of keys) {
      const member = record[key];
      if (member === undefined) continue;
      members.push(`${JSON.stringify(key)}:${encode(member, `${path}.${key}`, ancestors)}`);
    }
    return `{${members.join(",")}}`;
  } finally {
    ancestors.delete(value);
  }
}
