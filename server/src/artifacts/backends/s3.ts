/**
 * The S3-compatible artifact backend (`STACKSHIP_ARTIFACT_URL=s3://bucket/prefix?…`): objects are
 * S3 objects under `<prefix>/<key>` in one bucket. Writes stream through a multipart upload (parts
 * of PART_SIZE, at most QUEUE_SIZE in flight, so an object is never whole in memory); S3 makes an
 * object visible only when its PutObject or CompleteMultipartUpload succeeds, and a source that
 * fails aborts the multipart upload, so a failed write leaves nothing. Reads are ranged GetObject
 * requests whose body is streamed; sizes come from HeadObject.
 *
 * URL: `s3://BUCKET[/PREFIX][?endpoint=URL&region=NAME&force_path_style=true|false
 *       &access_key_id=…&secret_access_key=…]`. Credentials come from the query (both or neither)
 * or else from the AWS SDK's default chain (`AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`, …).
 * No message this module makes contains a credential or the full URL.
 */
import { Readable } from "node:stream";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  S3Client,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { assertObjectKey, ObjectNotFoundError, type ObjectBackend } from "../object-backend.ts";

/** Multipart part size: S3's minimum (5 MiB) is also what bounds a write's memory. */
export const PART_SIZE = 5 * 1024 * 1024;
/** Parts uploaded at once; a write holds at most about (QUEUE_SIZE + 1) × PART_SIZE. */
export const QUEUE_SIZE = 2;

export interface S3BackendOptions {
  bucket: string;
  /** Key prefix without leading or trailing slashes ("" for the bucket's root). */
  prefix: string;
  client: S3ClientConfig;
  /** Where the bucket is, for messages (no credentials). */
  describe: string;
}

const QUERY_PARAMS = new Set(["endpoint", "region", "force_path_style", "access_key_id", "secret_access_key"]);
// A DNS-compatible bucket name (what path-style and virtual-hosted requests both accept).
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** Parses an `s3://` artifact URL; throws a message naming the bad part (never a credential). */
export function parseS3Url(url: URL): S3BackendOptions {
  if (url.protocol !== "s3:") throw new Error(`artifact URL: expected the s3: scheme, got '${url.protocol}'`);
  if (url.username || url.password) {
    throw new Error(
      "artifact URL: put S3 credentials in access_key_id/secret_access_key or the AWS_* environment, not in the URL's user part",
    );
  }
  const bucket = url.hostname;
  if (!BUCKET_NAME.test(bucket)) throw new Error(`artifact URL: '${bucket}' is not a valid S3 bucket name`);
  const prefix = decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, "");
  if (
    prefix !== "" &&
    (!/^[A-Za-z0-9._/-]+$/.test(prefix) ||
      prefix.split("/").some((part) => part === "" || part === "." || part === ".."))
  ) {
    throw new Error(
      `artifact URL: the key prefix '${prefix}' may use only letters, digits, '.', '_', '-' and single '/'`,
    );
  }
  const params = url.searchParams;
  for (const name of params.keys()) {
    if (!QUERY_PARAMS.has(name))
      throw new Error(`artifact URL: unknown parameter '${name}' (known: ${[...QUERY_PARAMS].join(", ")})`);
  }
  for (const name of QUERY_PARAMS) {
    if (params.getAll(name).length > 1) throw new Error(`artifact URL: parameter '${name}' is given more than once`);
  }
  const client: S3ClientConfig = {
    region: params.get("region") || process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || "us-east-1",
    // NOTE: the SDK's default adds CRC checksums (aws-chunked trailers) to every upload, which not
    // every S3-compatible server accepts; the artifact store above authenticates every frame anyway.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  };
  let describe = `s3://${bucket}${prefix ? `/${prefix}` : ""}`;
  const endpoint = params.get("endpoint");
  if (endpoint !== null) {
    let parsed: URL;
    try {
      parsed = new URL(endpoint);
    } catch {
      throw new Error("artifact URL: 'endpoint' is not a URL");
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
      throw new Error("artifact URL: 'endpoint' must be an http: or https: URL");
    if (parsed.username || parsed.password) throw new Error("artifact URL: 'endpoint' must not carry credentials");
    client.endpoint = parsed.toString();
    describe += ` at ${parsed.origin}`;
  }
  const pathStyle = params.get("force_path_style");
  if (pathStyle !== null) {
    if (pathStyle !== "true" && pathStyle !== "false")
      throw new Error("artifact URL: 'force_path_style' must be true or false");
    client.forcePathStyle = pathStyle === "true";
  }
  const accessKeyId = params.get("access_key_id");
  const secretAccessKey = params.get("secret_access_key");
  if ((accessKeyId === null) !== (secretAccessKey === null)) {
    throw new Error(
      "artifact URL: give both access_key_id and secret_access_key, or neither (then the AWS_* environment is used)",
    );
  }
  if (accessKeyId !== null && secretAccessKey !== null) {
    if (accessKeyId === "" || secretAccessKey === "")
      throw new Error("artifact URL: access_key_id and secret_access_key must not be empty");
    client.credentials = { accessKeyId, secretAccessKey };
  }
  return { bucket, prefix, client, describe };
}

/** Opens the backend and checks that the bucket is reachable with these credentials. */
export async function createS3Backend(url: URL): Promise<ObjectBackend> {
  const options = parseS3Url(url);
  const backend = new S3Backend(options);
  try {
    await backend.checkBucket();
  } catch (error) {
    await backend.close();
    throw error;
  }
  return backend;
}

function isNotFound(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  // NOTE: HeadObject's 404 has no body, so the SDK names it NotFound; GetObject's says NoSuchKey.
  return (
    e?.name === "NoSuchKey" ||
    e?.name === "NotFound" ||
    (e?.$metadata?.httpStatusCode === 404 && e?.name !== "NoSuchBucket")
  );
}

function isUnsatisfiableRange(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === "InvalidRange" || e?.$metadata?.httpStatusCode === 416;
}

function checkRange(range?: { start?: number; end?: number }): { start: number; end: number | undefined } {
  const start = range?.start ?? 0;
  const end = range?.end;
  if (!Number.isSafeInteger(start) || start < 0)
    throw new RangeError(`read: start must be a non-negative integer, got ${start}`);
  if (end !== undefined && (!Number.isSafeInteger(end) || end < 0))
    throw new RangeError(`read: end must be a non-negative integer, got ${end}`);
  return { start, end };
}

export class S3Backend implements ObjectBackend {
  readonly kind = "s3";
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;
  readonly #describe: string;

  constructor(options: S3BackendOptions) {
    this.#client = new S3Client(options.client);
    this.#bucket = options.bucket;
    this.#prefix = options.prefix;
    this.#describe = options.describe;
  }

  #key(key: string): string {
    assertObjectKey(key);
    return this.#prefix ? `${this.#prefix}/${key}` : key;
  }

  async checkBucket(): Promise<void> {
    try {
      await this.#client.send(new HeadBucketCommand({ Bucket: this.#bucket }));
    } catch (error) {
      const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
      const status = e?.$metadata?.httpStatusCode;
      const reason =
        status === 404
          ? "the bucket does not exist"
          : status === 403
            ? "access denied (check the credentials)"
            : `${e?.name ?? "error"}${status ? ` (HTTP ${status})` : ""}`;
      throw new Error(`S3 artifact store ${this.#describe}: ${reason}`);
    }
  }

  async write(key: string, source: AsyncIterable<Uint8Array>): Promise<number> {
    const objectKey = this.#key(key);
    let length = 0;
    async function* counted(): AsyncGenerator<Uint8Array> {
      for await (const chunk of source) {
        length += chunk.byteLength;
        yield chunk;
      }
    }
    const body = Readable.from(counted(), { objectMode: false, highWaterMark: 64 * 1024 });
    const upload = new Upload({
      client: this.#client,
      params: { Bucket: this.#bucket, Key: objectKey, Body: body, ContentType: "application/octet-stream" },
      partSize: PART_SIZE,
      queueSize: QUEUE_SIZE,
      // A failed source or part aborts the multipart upload: nothing becomes visible.
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      body.destroy();
      throw error;
    }
    return length;
  }

  read(key: string, range?: { start?: number; end?: number }): AsyncIterable<Uint8Array> {
    const objectKey = this.#key(key);
    const { start, end } = checkRange(range);
    const client = this.#client;
    const bucket = this.#bucket;
    const size = (k: string) => this.size(k);
    return (async function* () {
      if (end !== undefined && end <= start) {
        // An empty range still tells an absent object from a present one.
        if ((await size(key)) === null) throw new ObjectNotFoundError(key);
        return;
      }
      const header =
        start === 0 && end === undefined ? undefined : `bytes=${start}-${end === undefined ? "" : end - 1}`;
      let response;
      try {
        response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: objectKey, Range: header }));
      } catch (error) {
        if (isNotFound(error)) throw new ObjectNotFoundError(key);
        // A range that starts at or past the end (an empty object included): nothing to read.
        if (isUnsatisfiableRange(error)) return;
        throw error;
      }
      const body = response.Body as (Readable & AsyncIterable<Uint8Array>) | undefined;
      if (!body) return;
      try {
        for await (const chunk of body) yield chunk;
      } finally {
        // A reader that stops early releases the connection.
        body.destroy();
      }
    })();
  }

  async size(key: string): Promise<number | null> {
    const objectKey = this.#key(key);
    try {
      const head = await this.#client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: objectKey }));
      return head.ContentLength ?? 0;
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    const objectKey = this.#key(key);
    try {
      await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: objectKey }));
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  async close(): Promise<void> {
    this.#client.destroy();
  }
}
