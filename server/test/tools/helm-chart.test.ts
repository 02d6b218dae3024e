// The Helm chart (deploy/helm/stackship, issue 31 part 2): no cluster is available here, so it is
// linted, rendered and validated. `helm lint --strict`, `helm template` with the default values and
// with a production-like values file (deploy/helm/stackship/ci/production-values.yaml), and
// kubeconform -strict on each output against the Kubernetes JSON schemas scripts/bootstrap-tools
// generates offline (.tools/kubernetes-json-schema): an unknown or misspelt field is an error, and
// the ServiceMonitor is checked against the Prometheus Operator's own CRD schema. helm and
// kubeconform come from `bash scripts/bootstrap-tools --with-test-tools` (npm test runs it). A few
// seconds.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { parseAllDocuments } from "yaml";
import { REPO_ROOT } from "../../src/config.ts";
import { skipTest } from "../support/skips.ts";
import { rejection } from "../support/responses.ts";

const exec = promisify(execFile);
const test = suite("the Helm chart");

const HELM = join(REPO_ROOT, ".tools/bin/helm");
const KUBECONFORM = join(REPO_ROOT, ".tools/bin/kubeconform");
const SCHEMAS = join(REPO_ROOT, ".tools/kubernetes-json-schema");
const CHART = join(REPO_ROOT, "deploy/helm/stackship");
const PRODUCTION = join(CHART, "ci/production-values.yaml");
const KUBERNETES_VERSION = /^KUBERNETES_SCHEMA_VERSION=(.+)$/m.exec(
  readFileSync(join(REPO_ROOT, "scripts/tool-versions.env"), "utf8"),
)![1];

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}

async function helm(...args: string[]): Promise<string> {
  return (await exec(HELM, args, { cwd: REPO_ROOT, maxBuffer: 16 * 1024 * 1024 })).stdout;
}

async function render(...args: string[]): Promise<{ text: string; manifests: Manifest[] }> {
  const text = await helm("template", "ss", CHART, ...args);
  const manifests = parseAllDocuments(text)
    .map((document) => document.toJS() as Manifest | null)
    .filter((manifest): manifest is Manifest => manifest !== null);
  return { text, manifests };
}

/** kubeconform -strict over `text`: every resource valid, none skipped for a missing schema. */
async function validate(text: string, expected: number): Promise<void> {
  const child = execFile(
    KUBECONFORM,
    ["-strict", "-summary", "-kubernetes-version", KUBERNETES_VERSION, "-schema-location", SCHEMAS, "-"],
    { cwd: REPO_ROOT },
  );
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stdin!.end(text);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  assert.is(code, 0, output);
  assert.match(
    output,
    new RegExp(`${expected} resources found .* Valid: ${expected}, Invalid: 0, Errors: 0, Skipped: 0`),
    output,
  );
}

function find(manifests: Manifest[], kind: string, name: string): Manifest {
  const found = manifests.find((manifest) => manifest.kind === kind && manifest.metadata.name === name);
  assert.ok(
    found,
    `no ${kind} ${name} in ${manifests.map((manifest) => `${manifest.kind}/${manifest.metadata.name}`).join(", ")}`,
  );
  return found;
}

type Container = {
  name: string;
  args?: string[];
  env?: { name: string; value?: string }[];
  securityContext?: { runAsUser?: number; capabilities?: { add?: string[]; drop?: string[] } };
};
function podSpec(deployment: Manifest): { terminationGracePeriodSeconds: number; containers: Container[] } {
  return (deployment.spec as { template: { spec: { terminationGracePeriodSeconds: number; containers: Container[] } } })
    .template.spec;
}
const envOf = (container: Container, name: string) => container.env?.find((variable) => variable.name === name)?.value;

/** The message of the error `promise` rejects with (fails if it resolves). */
const rejectionMessage = async (promise: Promise<unknown>) => ((await rejection(promise)) as Error).message;

const missing = [HELM, KUBECONFORM, SCHEMAS].filter((path) => !existsSync(path));
const titles = [
  "helm lint, then the default and a production-like values file render and validate strictly against the Kubernetes schemas",
  "the ServiceMonitor is rendered only when serviceMonitor.enabled, and the Secret only when secret.create",
];
if (missing.length > 0) {
  for (const title of titles)
    skipTest(
      test,
      title,
      `${missing.join(", ")} missing: 'bash scripts/bootstrap-tools --with-test-tools' (npm test runs it) builds them`,
    );
} else {
  test(titles[0], async () => {
    await helm("lint", "--strict", CHART);
    await helm("lint", "--strict", CHART, "-f", PRODUCTION);

    const defaults = await render();
    await validate(defaults.text, defaults.manifests.length);
    const api = podSpec(find(defaults.manifests, "Deployment", "ss-stackship-api"));
    const runner = podSpec(find(defaults.manifests, "Deployment", "ss-stackship-runner"));
    assert.is(envOf(api.containers[0], "STACKSHIP_RUNNER_CONCURRENCY"), "0", "the API process runs no runner");
    assert.equal(
      runner.containers[0].securityContext?.capabilities?.add,
      ["SYS_ADMIN", "NET_ADMIN"],
      "bubblewrap's capabilities",
    );
    // The image's entrypoint modes (deploy/image/entrypoint); the API as the image's unprivileged account.
    assert.equal([api.containers[0].args, runner.containers[0].args], [["server"], ["runner"]]);
    assert.is(api.containers[0].securityContext?.runAsUser, 10001);
    assert.equal(api.containers[0].securityContext?.capabilities?.drop, ["ALL"]);
    assert.is(envOf(runner.containers[0], "STACKSHIP_API_URL"), "http://ss-stackship-api:80");
    const settings = find(defaults.manifests, "ConfigMap", "ss-stackship").data!;
    assert.is(settings.STACKSHIP_SHUTDOWN_GRACE_SECONDS, "60");
    for (const spec of [api, runner])
      assert.ok(spec.terminationGracePeriodSeconds > 60, "Kubernetes waits longer than the shutdown grace");
    find(defaults.manifests, "PodDisruptionBudget", "ss-stackship-api");
    find(defaults.manifests, "PodDisruptionBudget", "ss-stackship-runner");
    find(defaults.manifests, "Service", "ss-stackship-api");

    const production = await render("-f", PRODUCTION);
    await validate(production.text, production.manifests.length);
    const productionRunner = podSpec(find(production.manifests, "Deployment", "ss-stackship-runner"));
    assert.is(envOf(productionRunner.containers[0], "STACKSHIP_RUNNER_CONCURRENCY"), "4");
    assert.is(find(production.manifests, "ConfigMap", "ss-stackship").data!.STACKSHIP_SHUTDOWN_GRACE_SECONDS, "300");
    assert.ok(productionRunner.terminationGracePeriodSeconds > 300);

    // A misspelt field is refused: the strict schemas are in force, not skipped.
    const misspelt = production.text.replace("containerPort:", "containerPrt:");
    assert.match(
      await rejectionMessage(validate(misspelt, production.manifests.length)),
      /additional properties 'containerPrt' not allowed/,
    );
  });

  test(titles[1], async () => {
    const kinds = (manifests: Manifest[]) => manifests.map((manifest) => manifest.kind);
    const off = await render();
    assert.not.ok(kinds(off.manifests).includes("ServiceMonitor"));
    assert.not.ok(kinds(off.manifests).includes("Secret"), "by default the pods read a Secret made outside the chart");
    const on = await render("--set", "serviceMonitor.enabled=true");
    const monitor = find(on.manifests, "ServiceMonitor", "ss-stackship");
    assert.equal(
      (monitor.spec as { endpoints: { port: string; path: string }[] }).endpoints.map(
        ({ port, path }) => `${port} ${path}`,
      ),
      ["http /metrics", "metrics /metrics"],
    );
    await validate(on.text, on.manifests.length);
    // The Secret made by the chart needs the database URL and the key.
    assert.match(await rejectionMessage(render("--set", "secret.create=true")), /STACKSHIP_DATABASE_URL is required/);
  });
}

test.run();
