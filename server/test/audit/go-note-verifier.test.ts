import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { auditVerifierKey, checkpointChain } from "../../src/commands/audit-checkpoints.ts";
import { REPO_ROOT } from "../../src/config.ts";
import { auditChainOf, parseCheckpointText } from "../../src/domain/audit-chain.ts";
import { createOrganizationWithToken } from "../support/factories.ts";
import { testDialects } from "../support/databases.ts";
import { withTestServer } from "../support/test-server.ts";
import { skipTest } from "../support/skips.ts";

/**
 * Audit checkpoints verify with Go's golang.org/x/mod/sumdb/note, not only with StackShip's code.
 * The verifier (note-verifier/, x/mod pinned by its go.mod and go.sum) is built from the Go module
 * proxy into .tools/build/, keyed by the hash of its sources, and reused by later runs.
 */
const go = suite("audit checkpoints: verified by golang.org/x/mod/sumdb/note");

const SOURCE = join(REPO_ROOT, "server/test/audit/note-verifier");

function hasGo(): boolean {
  return spawnSync("go", ["version"], { encoding: "utf8" }).status === 0;
}

function buildVerifier(): string {
  const hash = createHash("sha256");
  for (const file of ["go.mod", "go.sum", "main.go"]) hash.update(readFileSync(join(SOURCE, file)));
  const dir = join(REPO_ROOT, ".tools/build/note-verifier");
  const binary = join(dir, `note-verifier-${hash.digest("hex").slice(0, 16)}`);
  if (existsSync(binary)) return binary;
  mkdirSync(dir, { recursive: true });
  const partial = `${binary}.${process.pid}.tmp`;
  execFileSync("go", ["build", "-o", partial, "."], {
    cwd: SOURCE,
    env: { ...process.env, GOFLAGS: "-trimpath -mod=readonly", CGO_ENABLED: "0" },
    stdio: "pipe",
  });
  renameSync(partial, binary);
  return binary;
}

function verifyWithGo(binary: string, verifierKey: string, note: string | Buffer) {
  return spawnSync(binary, [verifierKey], { input: note, encoding: "utf8" });
}

const title =
  "a real checkpoint verifies with note.Open; a flipped byte in the text or the signature, or another key, is refused";
for (const dialect of testDialects()) {
  if (!hasGo()) {
    skipTest(go, `${title} [${dialect}]`, "no go toolchain on PATH");
    continue;
  }
  go(`${title} [${dialect}]`, () =>
    withTestServer(dialect, async (server) => {
      const binary = buildVerifier();
      const org = await createOrganizationWithToken(server, "gone");
      const chain = auditChainOf(org.organizationId);
      const checkpoint = await checkpointChain(server.services, chain);
      assert.ok(checkpoint);
      const { verifierKey } = await auditVerifierKey(server.services);

      const ok = verifyWithGo(binary, verifierKey, checkpoint.note);
      assert.is(ok.status, 0, ok.stderr);
      const body = parseCheckpointText(ok.stdout);
      assert.equal(body, {
        origin: `stackship/audit/${chain}`,
        treeSize: checkpoint.treeSize,
        headDigest: (await server.services.stores.audit.head(chain)).digest,
      });

      // One byte flipped in the signed text (the tree size), then in the signature.
      const note = Buffer.from(checkpoint.note, "utf8");
      const textFlip = Buffer.from(note);
      const sizeAt = note.indexOf("\n") + 1;
      textFlip[sizeAt] ^= 0x01;
      const refusedText = verifyWithGo(binary, verifierKey, textFlip);
      assert.is(refusedText.status, 1, refusedText.stdout);
      assert.match(refusedText.stderr, /refused/);

      const sigFlip = Buffer.from(note);
      sigFlip[note.length - 6] = sigFlip[note.length - 6] === 0x41 ? 0x42 : 0x41;
      const refusedSig = verifyWithGo(binary, verifierKey, sigFlip);
      assert.is(refusedSig.status, 1, refusedSig.stdout);
      assert.match(refusedSig.stderr, /refused/);

      // The same note under a different key of the same name: unknown key, refused.
      const otherKey = verifierKey.replace(/\+[0-9a-f]{8}\+/, "+00000000+");
      const refusedKey = verifyWithGo(binary, otherKey, note);
      assert.not.equal(refusedKey.status, 0, refusedKey.stdout);
    }),
  );
}

go.run();
