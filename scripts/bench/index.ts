/**
 * `npm run bench` / `task bench`: every benchmark, each printing ratios against a baseline
 * measured in the same run. Benchmarks report; they never fail on a number.
 */
const which = process.argv[2];
if (!which || which === "inventory") await import("./inventory.ts");
if (!which || which === "runs") await import("./runs.ts");
if (!which || which === "throughput") await import("./throughput.ts");
if (!which || which === "plan-diff") await import("./plan-diff.ts");
if (!which || which === "json-output") await import("./json-output.ts");
if (!which || which === "live") await import("./live.ts");
if (!which || which === "uploads") await import("./uploads.ts");
if (!which || which === "github") await import("./github.ts");
if (!which || which === "workload-identity") await import("./workload-identity.ts");
if (!which || which === "audit") await import("./audit.ts");
if (!which || which === "attestations") await import("./attestations.ts");
if (!which || which === "sign-in") await import("./sign-in.ts");
if (!which || which === "dashboard") await import("./dashboard.ts");
if (!which || which === "dashboard-live") await import("./dashboard-live.ts");
if (!which || which === "scale") await import("./scale.ts");
