// Parsed JSON objects read and written safely, for the redaction and plan-diff modules: a member is
// read only when the object itself has it (never one inherited from Object.prototype, such as
// `constructor`), and a member named `__proto__` is written as a member, not as the prototype.
// Plain JavaScript that imports nothing: the plan sandbox mounts it beside the modules that import
// it (runner/tofu-files.ts).

// eslint-disable-next-line @typescript-eslint/unbound-method -- always called as hasOwn.call(object, key)
export const hasOwn = Object.prototype.hasOwnProperty;

/** Whether `v` is a JSON object: not null, not an array. */
export function isPlainObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** The member `key` of the JSON object `o`; undefined when `o` is not one or does not have it itself. */
export function own(o, key) {
  return isPlainObject(o) && hasOwn.call(o, key) ? o[key] : undefined;
}

/** Sets a member, also when it is named `__proto__`. */
export function put(o, key, value) {
  if (key === "__proto__")
    Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  else o[key] = value;
}
