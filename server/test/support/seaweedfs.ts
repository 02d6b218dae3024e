/**
 * A real S3-compatible server for tests: SeaweedFS's `weed server -s3` (master, volume, filer and
 * S3 gateway in one process, built by scripts/bootstrap-tools into .tools/bin/weed), on free
 * loopback ports in a temporary directory, with one S3 identity and one bucket.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { freePorts } from "./ports.ts";

export const WEED = join(dirname(fileURLToPath(import.meta.url)), "../../../.tools/bin/weed");

export interface SeaweedS3 {
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** A raw client with the test identity (to look behind the backend: pending uploads, listings). */
  client: S3Client;
  /** `s3://bucket/prefix?endpoint=…` with the credentials in the query. */
  url(prefix: string): URL;
  stop(): Promise<void>;
}

/** A SeaweedFS server's S3 side: its bucket, endpoint, identity, a client, and the `weed` arguments that serve them. */
export interface SeaweedServer {
  args: string[];
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  client: S3Client;
}

/**
 * Prepares (does not start) a `weed server -s3` on free loopback ports with its data in `dir`: writes
 * the S3 identity file, picks the ports and builds the arguments and a raw client of that identity.
 */
export async function seaweedServer(dir: string): Promise<SeaweedServer> {
  const accessKeyId = `ak${randomBytes(8).toString("hex")}`;
  const secretAccessKey = randomBytes(20).toString("hex");
  const bucket = "stackship-artifacts";
  await writeFile(
    join(dir, "s3.json"),
    JSON.stringify({
      identities: [
        {
          name: "stackship",
          credentials: [{ accessKey: accessKeyId, secretKey: secretAccessKey }],
          actions: ["Admin", "Read", "Write", "List", "Tagging"],
        },
      ],
    }),
  );
  const [master, masterGrpc, volume, volumeGrpc, filer, filerGrpc, s3, s3Grpc] = await freePorts(8);
  const args = [
    "server",
    "-ip=127.0.0.1",
    "-ip.bind=127.0.0.1",
    `-dir=${dir}`,
    "-volume.max=16",
    "-master.volumeSizeLimitMB=64",
    "-master.telemetry=false",
    `-master.port=${master}`,
    `-master.port.grpc=${masterGrpc}`,
    `-volume.port=${volume}`,
    `-volume.port.grpc=${volumeGrpc}`,
    "-filer",
    `-filer.port=${filer}`,
    `-filer.port.grpc=${filerGrpc}`,
    `-filer.localSocket=${join(dir, "filer.sock")}`,
    "-s3",
    `-s3.port=${s3}`,
    `-s3.port.grpc=${s3Grpc}`,
    "-s3.port.iceberg=0",
    "-s3.port.lance=0",
    `-s3.config=${join(dir, "s3.json")}`,
    `-s3.localSocket=${join(dir, "s3.sock")}`,
  ];
  const endpoint = `http://127.0.0.1:${s3}`;
  const client = new S3Client({
    endpoint,
    region: "us-east-1",
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
  });
  return { args, endpoint, bucket, accessKeyId, secretAccessKey, client };
}

/** `s3://bucket/prefix?endpoint=…` for StackShip's artifact store, with the credentials in the query. */
export function artifactStoreUrl(weed: SeaweedServer, prefix: string): URL {
  const url = new URL(`s3://${weed.bucket}/${prefix}`);
  url.searchParams.set("endpoint", weed.endpoint);
  url.searchParams.set("region", "us-east-1");
  url.searchParams.set("force_path_style", "true");
  url.searchParams.set("access_key_id", weed.accessKeyId);
  url.searchParams.set("secret_access_key", weed.secretAccessKey);
  return url;
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once("exit", () => resolve()));
}

/** Starts SeaweedFS, or returns null (printing why) when .tools/bin/weed is absent. */
export async function startSeaweedS3(): Promise<SeaweedS3 | null> {
  if (!existsSync(WEED)) {
    process.stdout.write(
      `[seaweedfs] SKIPPED: ${WEED} is absent; 'bash scripts/bootstrap-tools --with-test-tools' (npm test runs it) builds SeaweedFS\n`,
    );
    return null;
  }
  const dir = await mkdtemp(join(tmpdir(), "ss-seaweedfs-"));
  const weed = await seaweedServer(dir);
  const { bucket, endpoint, accessKeyId, secretAccessKey, client } = weed;
  const log = join(dir, "weed.log");
  const out = openSync(log, "a");
  const child = spawn(WEED, weed.args, { cwd: dir, stdio: ["ignore", out, out] });
  closeSync(out);
  // A test process that dies without its after-hook still takes the server with it.
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const stop = async () => {
    process.off("exit", killOnExit);
    client.destroy();
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited(child);
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const tail = readFileSync(log, "utf8").slice(-4000);
      await stop();
      throw new Error(`weed server exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${tail}`);
    }
    try {
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
      break;
    } catch (error) {
      if ((error as { name?: string }).name === "BucketAlreadyOwnedByYou") break;
      if (Date.now() > deadline) {
        const tail = readFileSync(log, "utf8").slice(-4000);
        await stop();
        throw new Error(`weed server not ready after 60 s (${(error as Error).name}):\n${tail}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  return {
    endpoint,
    bucket,
    accessKeyId,
    secretAccessKey,
    client,
    stop,
    url: (prefix: string) => artifactStoreUrl(weed, prefix),
  };
}
