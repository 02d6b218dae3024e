// Writes the JSON schemas kubeconform validates against, offline: kubeconform normally downloads
// them, and that host is out of reach here. Sources, both fetched through the Go module proxy by
// scripts/bootstrap-tools: Kubernetes' own OpenAPI v2 document (api/openapi-spec/swagger.json of
// the k8s.io/kubernetes module at a pinned tag) and CustomResourceDefinition files (the
// Prometheus Operator's ServiceMonitor). The layout is kubeconform's:
// <out>/v<version>-standalone-strict/<kind>-<group prefix>-<version>.json, every $ref inlined
// ("standalone") and every object with declared properties closed ("strict": an unknown field,
// such as a misspelt one, is an error).
//
// Usage: node scripts/k8s-json-schemas.mjs <swagger.json> <kubernetes version> <out dir> [crd.yaml…]
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";

const [swaggerPath, kubernetesVersion, outRoot, ...crdPaths] = process.argv.slice(2);
if (!swaggerPath || !kubernetesVersion || !outRoot) {
  process.stderr.write("usage: k8s-json-schemas.mjs <swagger.json> <kubernetes version> <out dir> [crd.yaml…]\n");
  process.exit(2);
}
const out = join(outRoot, `v${kubernetesVersion}-standalone-strict`);
mkdirSync(out, { recursive: true });

/** kubeconform's file name of a kind: lower-case kind, the group's first label, the version. */
function fileName(group, version, kind) {
  const prefix = group ? `-${group.split(".")[0].toLowerCase()}` : "";
  return `${kind.toLowerCase()}${prefix}-${version.toLowerCase()}.json`;
}

const INT_OR_STRING = { oneOf: [{ type: "string" }, { type: "integer" }] };
// Kubernetes accepts a quantity as a string ("2Gi", "250m") or a plain number (cpu: 1).
const QUANTITY = { oneOf: [{ type: "string" }, { type: "number" }] };

/** Closes objects with declared properties, and lets an optional field be null like the API does. */
function strict(schema, optional = false) {
  if (!schema || typeof schema !== "object") return schema;
  if (Array.isArray(schema)) return schema.map((item) => strict(item));
  const result = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "properties") {
      const required = new Set(schema.required ?? []);
      result.properties = Object.fromEntries(
        Object.entries(value).map(([name, prop]) => [name, strict(prop, !required.has(name))]),
      );
    } else if (key === "items" || key === "additionalProperties" || key === "not") {
      result[key] = typeof value === "object" ? strict(value) : value;
    } else if (key === "allOf" || key === "anyOf" || key === "oneOf") {
      result[key] = value.map((item) => strict(item));
    } else {
      result[key] = value;
    }
  }
  if (result["x-kubernetes-int-or-string"] === true) {
    delete result.type;
    Object.assign(result, INT_OR_STRING);
  }
  if (
    result.properties &&
    result.additionalProperties === undefined &&
    result["x-kubernetes-preserve-unknown-fields"] !== true
  ) {
    result.additionalProperties = false;
  }
  if (optional && typeof result.type === "string") result.type = [result.type, "null"];
  return result;
}

// Kubernetes' own kinds: every definition that names a group-version-kind, its references inlined.
const swagger = JSON.parse(readFileSync(swaggerPath, "utf8"));
const definitions = swagger.definitions;
function inline(schema, stack) {
  if (!schema || typeof schema !== "object") return schema;
  if (Array.isArray(schema)) return schema.map((item) => inline(item, stack));
  if (typeof schema.$ref === "string") {
    const name = schema.$ref.replace(/^#\/definitions\//, "");
    if (name === "io.k8s.apimachinery.pkg.util.intstr.IntOrString") return { ...INT_OR_STRING };
    if (name === "io.k8s.apimachinery.pkg.api.resource.Quantity") return { ...QUANTITY };
    // A recursive type (JSONSchemaProps) is left open where it repeats itself.
    if (stack.includes(name)) return {};
    const target = definitions[name];
    if (!target) throw new Error(`${swaggerPath}: unknown reference ${schema.$ref}`);
    const { $ref: _ref, ...rest } = schema;
    return { ...inline(target, [...stack, name]), ...rest };
  }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, inline(value, stack)]));
}

let written = 0;
for (const [name, definition] of Object.entries(definitions)) {
  for (const gvk of definition["x-kubernetes-group-version-kind"] ?? []) {
    const schema = strict(inline(definition, [name]));
    const apiVersion = gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version;
    schema.properties.apiVersion = { type: "string", enum: [apiVersion] };
    schema.properties.kind = { type: "string", enum: [gvk.kind] };
    schema.$schema = "http://json-schema.org/schema#";
    writeFileSync(join(out, fileName(gvk.group, gvk.version, gvk.kind)), JSON.stringify(schema));
    written += 1;
  }
}

// CustomResourceDefinitions: each served version's openAPIV3Schema (already standalone).
for (const path of crdPaths) {
  for (const document of parseAllDocuments(readFileSync(path, "utf8"))) {
    const crd = document.toJS();
    if (crd?.kind !== "CustomResourceDefinition") continue;
    for (const version of crd.spec.versions ?? []) {
      const openApi = version.schema?.openAPIV3Schema;
      if (!version.served || !openApi) continue;
      const schema = strict(openApi);
      schema.properties.apiVersion = { type: "string", enum: [`${crd.spec.group}/${version.name}`] };
      schema.properties.kind = { type: "string", enum: [crd.spec.names.kind] };
      schema.properties.metadata = { type: "object" };
      schema.$schema = "http://json-schema.org/schema#";
      writeFileSync(join(out, fileName(crd.spec.group, version.name, crd.spec.names.kind)), JSON.stringify(schema));
      written += 1;
    }
  }
}
process.stdout.write(`${written} schemas written to ${out}\n`);
