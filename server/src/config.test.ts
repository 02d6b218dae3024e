import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { loadConfig, type GitHubAppSettings } from "./config.ts";
import { GitHubAppClient } from "./github/client.ts";

const github = suite("GitHub App configuration");
const PEM = generateKeyPairSync("rsa", { modulusLength: 2048 })
  .privateKey.export({ type: "pkcs1", format: "pem" })
  .toString();
const ALL = {
  STACKSHIP_GITHUB_APP_ID: "123",
  STACKSHIP_GITHUB_PRIVATE_KEY: PEM,
  STACKSHIP_GITHUB_WEBHOOK_SECRET: "s3cret",
};

github("off without the variables, naming exactly the missing ones", () => {
  const none = loadConfig({}).github;
  assert.is(none.state, "off");
  assert.is(none.apiUrl, "https://api.github.com");
  if (none.state === "off")
    assert.is(
      none.detail,
      "The GitHub App pipeline is off: set STACKSHIP_GITHUB_APP_ID, STACKSHIP_GITHUB_PRIVATE_KEY (or _FILE), STACKSHIP_GITHUB_WEBHOOK_SECRET.",
    );
  const one = loadConfig({ ...ALL, STACKSHIP_GITHUB_WEBHOOK_SECRET: "" }).github;
  assert.is(one.state, "off");
  if (one.state === "off")
    assert.is(one.detail, "The GitHub App pipeline is off: set STACKSHIP_GITHUB_WEBHOOK_SECRET.");
});

github("on with all of them; the key may come from a file or as one line with \\n; the API URL is configurable", () => {
  const on = loadConfig({ ...ALL, STACKSHIP_GITHUB_API_URL: "https://ghe.example.com/api/v3/" }).github;
  assert.is(on.state, "on");
  if (on.state !== "on") return;
  assert.is(on.apiUrl, "https://ghe.example.com/api/v3");
  assert.is(on.tarballMaxBytes, 64 * 1024 * 1024);
  new GitHubAppClient(on);
  const oneLine = loadConfig({ ...ALL, STACKSHIP_GITHUB_PRIVATE_KEY: PEM.trim().split("\n").join("\\n") }).github;
  assert.ok(oneLine.state === "on" && oneLine.privateKey.trim() === PEM.trim());
  const dir = mkdtempSync(join(tmpdir(), "ss-config-"));
  try {
    writeFileSync(join(dir, "app.pem"), PEM);
    const fromFile = loadConfig({
      ...ALL,
      STACKSHIP_GITHUB_PRIVATE_KEY: "",
      STACKSHIP_GITHUB_PRIVATE_KEY_FILE: join(dir, "app.pem"),
    }).github;
    assert.ok(fromFile.state === "on" && fromFile.privateKey === PEM);
    assert.throws(
      () =>
        loadConfig({
          ...ALL,
          STACKSHIP_GITHUB_PRIVATE_KEY: "",
          STACKSHIP_GITHUB_PRIVATE_KEY_FILE: join(dir, "missing.pem"),
        }),
      /cannot read/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

github("refuses a malformed App id, key or API URL with the variable's name", () => {
  assert.throws(() => loadConfig({ ...ALL, STACKSHIP_GITHUB_APP_ID: "my-app" }), /STACKSHIP_GITHUB_APP_ID/);
  assert.throws(
    () => loadConfig({ ...ALL, STACKSHIP_GITHUB_PRIVATE_KEY: "not a key" }),
    /STACKSHIP_GITHUB_PRIVATE_KEY/,
  );
  assert.throws(() => loadConfig({ ...ALL, STACKSHIP_GITHUB_API_URL: "::" }), /STACKSHIP_GITHUB_API_URL/);
  const broken = loadConfig({
    ...ALL,
    STACKSHIP_GITHUB_PRIVATE_KEY: "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n",
  }).github;
  assert.throws(
    () => new GitHubAppClient(broken as Extract<GitHubAppSettings, { state: "on" }>),
    /STACKSHIP_GITHUB_PRIVATE_KEY is not a readable PEM/,
  );
});

github.run();

const shutdown = suite("STACKSHIP_SHUTDOWN_GRACE_SECONDS");

shutdown(
  "defaults to 60 s; 0 and 1 are taken as given; a negative, fractional or non-numeric value is refused with the variable's name",
  () => {
    assert.is(loadConfig({}).shutdownGraceMs, 60_000);
    assert.is(loadConfig({ STACKSHIP_SHUTDOWN_GRACE_SECONDS: "" }).shutdownGraceMs, 60_000);
    assert.is(loadConfig({ STACKSHIP_SHUTDOWN_GRACE_SECONDS: "0" }).shutdownGraceMs, 0);
    assert.is(loadConfig({ STACKSHIP_SHUTDOWN_GRACE_SECONDS: "1" }).shutdownGraceMs, 1_000);
    assert.is(loadConfig({ STACKSHIP_SHUTDOWN_GRACE_SECONDS: "600" }).shutdownGraceMs, 600_000);
    for (const bad of ["-1", "0.5", "1.5", "sixty", "1s"]) {
      assert.throws(
        () => loadConfig({ STACKSHIP_SHUTDOWN_GRACE_SECONDS: bad }),
        (error: Error) =>
          error.message === `STACKSHIP_SHUTDOWN_GRACE_SECONDS must be a non-negative integer, got '${bad}'`,
      );
    }
  },
);

shutdown.run();
