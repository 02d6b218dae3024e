// STACKSHIP_ARTIFACT_URL (config.ts artifactStoreSetting) and the backend it selects (index.ts).
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { artifactStoreSetting, loadConfig } from "../../config.ts";
import { describeArtifactStore, objectBackendFromConfig } from "./index.ts";
import { LocalObjectBackend } from "./local.ts";

const PG = "postgres://stackship:secret@db.internal:5432/stackship";
const SQLITE = "sqlite:///var/lib/stackship/stackship.db";

const setting = suite("artifact store setting");

setting("unset: a local directory under the data directory on SQLite, PostgreSQL itself on PostgreSQL", () => {
  assert.equal(artifactStoreSetting(undefined, "/data", SQLITE), { kind: "local", directory: "/data/artifacts" });
  assert.equal(artifactStoreSetting("", "/data", SQLITE), { kind: "local", directory: "/data/artifacts" });
  assert.equal(artifactStoreSetting(undefined, "/data", PG), { kind: "postgres" });
  assert.equal(loadConfig({ STACKSHIP_DATA_DIR: "/srv/ss" }).artifactStore, {
    kind: "local",
    directory: "/srv/ss/artifacts",
  });
  assert.equal(loadConfig({ STACKSHIP_DATABASE_URL: PG }).artifactStore, { kind: "postgres" });
});

setting("file:///abs/dir is a local directory on either database; postgres or the database URL is PostgreSQL", () => {
  assert.equal(artifactStoreSetting("file:///mnt/artifacts", "/data", PG), {
    kind: "local",
    directory: "/mnt/artifacts",
  });
  assert.equal(artifactStoreSetting("file:///mnt/my%20artifacts/", "/data", SQLITE), {
    kind: "local",
    directory: "/mnt/my artifacts",
  });
  assert.equal(artifactStoreSetting("postgres", "/data", PG), { kind: "postgres" });
  assert.equal(artifactStoreSetting(PG, "/data", PG), { kind: "postgres" });
});

setting("s3://bucket/prefix with endpoint, region and force_path_style", () => {
  const url = "s3://stackship-artifacts/prod?endpoint=http://127.0.0.1:8333&region=us-east-1&force_path_style=true";
  const s3 = artifactStoreSetting(url, "/data", PG);
  assert.is(s3.kind, "s3");
  if (s3.kind === "s3") assert.is(new URL(s3.url).hostname, "stackship-artifacts");
  assert.is(describeArtifactStore(s3), "S3-compatible bucket stackship-artifacts/prod at http://127.0.0.1:8333");
});

setting("bad values are clear startup errors naming the variable", () => {
  const refused: Array<[string, string, RegExp]> = [
    ["postgres", SQLITE, /needs a PostgreSQL database/],
    ["postgres://other:pw@elsewhere/db", PG, /a separate artifact database is not supported/],
    ["file://host/dir", SQLITE, /no host or query/],
    ["file:///dir?x=1", SQLITE, /no host or query/],
    ["s3:///prefix", PG, /names its bucket/],
    ["s3://bucket/p?endpint=http://x", PG, /unknown S3 parameter 'endpint'/],
    ["s3://bucket/p?endpoint=ftp://x", PG, /is not an http\(s\) URL/],
    ["gs://bucket", PG, /unsupported scheme 'gs:'/],
    ["not a url", PG, /'not a url' is not a URL/],
  ];
  for (const [value, database, message] of refused) {
    assert.throws(
      () => artifactStoreSetting(value, "/data", database),
      (error: Error) => error.message.startsWith("STACKSHIP_ARTIFACT_URL: ") && message.test(error.message),
      value,
    );
  }
});

const selection = suite("object backend selection");

selection("local and postgres build their backends; postgres on SQLite is refused", async () => {
  const local = await objectBackendFromConfig(
    { kind: "local", directory: "/tmp/ss-selection" },
    { knex: undefined as never, dialect: "sqlite" },
  );
  assert.instance(local, LocalObjectBackend);
  assert.is(local.kind, "local");
  await objectBackendFromConfig({ kind: "postgres" }, { knex: undefined as never, dialect: "sqlite" }).then(
    () => assert.unreachable("postgres on SQLite was accepted"),
    (error: Error) => assert.match(error.message, /needs a PostgreSQL database/),
  );
  assert.is(describeArtifactStore({ kind: "postgres" }), "PostgreSQL (the database, table artifact_objects)");
  assert.is(describeArtifactStore({ kind: "local", directory: "/d" }), "local directory /d");
});

setting.run();
selection.run();
