import { suite } from "uvu";
import * as assert from "uvu/assert";
import { parseOpaVersion, sanitizeText } from "./policy-stage.ts";

const stage = suite("policy stage helpers");

stage("reads the OPA build identity; an empty build commit is not recorded", () => {
  assert.equal(parseOpaVersion("Version: 1.22.4\nBuild Commit: \nBuild Timestamp: \nGo Version: go1.26.8\n"), {
    version: "1.22.4",
    buildCommit: null,
  });
  assert.equal(parseOpaVersion("Version: 1.0.0\nBuild Commit: abc123\n"), { version: "1.0.0", buildCommit: "abc123" });
  assert.equal(parseOpaVersion("sh: opa: not found\n"), { version: null, buildCommit: null });
});

stage("finding text goes through the log sanitizer, both spellings of a value", () => {
  assert.is(
    sanitizeText(['s3cr"et'], 'value s3cr"et and "s3cr\\"et"'),
    'value [sensitive value] and "[sensitive value]"',
  );
  assert.is(sanitizeText([], "plain"), "plain");
});

stage.run();
