import { suite } from "uvu";
import * as assert from "uvu/assert";
import { tarballRedirectAllowed } from "./client.ts";

// Where a tarball redirect may lead: GitHub's API host or (github.com) its codeload host, over
// the API's own scheme and port; nowhere else.
const redirects = suite("tarball redirects");

const allowed = (api: string, location: string) => tarballRedirectAllowed(api, new URL(location));

redirects("github.com: codeload.github.com and api.github.com over https only", () => {
  const api = "https://api.github.com";
  assert.ok(allowed(api, "https://codeload.github.com/acme/infra/legacy.tar.gz/refs/heads/main?token=x"));
  assert.ok(allowed(api, "https://api.github.com/repos/acme/infra/tarball/abc"));
  assert.ok(allowed(api, "https://CODELOAD.github.com/x"), "host names compare case-insensitively");
  assert.not.ok(allowed(api, "http://codeload.github.com/x"), "not over plain http");
  assert.not.ok(allowed(api, "https://evil.example/x"));
  assert.not.ok(allowed(api, "https://codeload.github.com.evil.example/x"));
  assert.not.ok(allowed(api, "https://codeload.github.com:8443/x"), "not another port");
  assert.not.ok(allowed(api, "https://user:pw@codeload.github.com/x"), "no credentials in the URL");
  assert.not.ok(allowed(api, "ftp://codeload.github.com/x"));
  assert.not.ok(allowed(api, "file:///etc/passwd"));
});

redirects("GitHub Enterprise Server: the configured host only (no codeload.github.com)", () => {
  const api = "https://ghe.example.com/api/v3";
  assert.ok(allowed(api, "https://ghe.example.com/_codeload/acme/infra/legacy.tar.gz/abc?token=x"));
  assert.not.ok(allowed(api, "https://codeload.github.com/x"));
  assert.not.ok(allowed(api, "http://ghe.example.com/x"));
  assert.not.ok(allowed(api, "https://169.254.169.254/latest/meta-data/"));
});

redirects("an http API URL (a local double) allows only itself over http", () => {
  const api = "http://127.0.0.1:4010";
  assert.ok(allowed(api, "http://127.0.0.1:4010/_codeload/k?token=k"));
  assert.not.ok(allowed(api, "http://localhost:4010/_codeload/k"));
  assert.not.ok(allowed(api, "https://127.0.0.1:4010/_codeload/k"));
  assert.not.ok(allowed(api, "http://127.0.0.1:4011/_codeload/k"));
});

redirects.run();
