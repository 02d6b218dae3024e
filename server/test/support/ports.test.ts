import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { candidateRange, ephemeralLow, freePort, freePorts } from "./ports.ts";

test("ephemeralLow reads the range's first number, and falls back to 32768 when it cannot", () => {
  const dir = mkdtempSync(join(tmpdir(), "ss-ports-"));
  try {
    const file = join(dir, "range");
    writeFileSync(file, "40000\t60999\n");
    assert.is(ephemeralLow(file), 40000);
    writeFileSync(file, "nonsense\n");
    assert.is(ephemeralLow(file), 32768);
    assert.is(ephemeralLow(join(dir, "missing")), 32768);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("candidateRange: at least 1,001 ports from 10000 up to the ephemeral range, else none", () => {
  assert.equal(candidateRange(32768), { first: 10_000, last: 32767 });
  assert.equal(candidateRange(11_001), { first: 10_000, last: 11_000 });
  assert.is(candidateRange(11_000), null);
});

test("freePorts gives different ports below this machine's ephemeral range that a server can bind", async () => {
  const low = ephemeralLow();
  const ports = await freePorts(8);
  assert.is(new Set(ports).size, 8);
  for (const port of ports) {
    if (candidateRange(low)) assert.ok(port >= 10_000 && port < low, `${port} is outside 10000..${low - 1}`);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", resolve);
    });
    await new Promise((resolve) => server.close(resolve));
  }
});

test("freePort skips a port that is taken", async () => {
  const taken = createServer();
  const port = await freePort();
  await new Promise<void>((resolve) => taken.listen(port, "127.0.0.1", resolve));
  try {
    // The first pick is the taken port, then a free one (which one, the same random tells).
    const range = candidateRange(ephemeralLow())!;
    const size = range.last - range.first + 1;
    const picks = [
      (port - range.first + 0.5) / size,
      ((port === range.last ? port - 1 : port + 1) - range.first + 0.5) / size,
    ];
    const [picked] = await freePorts(1, () => picks.shift() ?? Math.random());
    assert.is.not(picked, port);
    assert.equal(picks, [], "both picks were used: the taken port was tried first");
  } finally {
    await new Promise((resolve) => taken.close(resolve));
  }
});

test.run();
