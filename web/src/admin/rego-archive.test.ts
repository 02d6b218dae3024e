import { equal, ok } from "../../test/support/assert.ts";
import { regoModules, untar } from "./rego-archive.ts";

/** A ustar archive of `files` (what `tar -c` writes for regular files), optionally cut short. */
function tar(files: Record<string, string>): Uint8Array {
  const blocks: Uint8Array[] = [];
  for (const [path, text] of Object.entries(files)) {
    const data = new TextEncoder().encode(text);
    const header = new Uint8Array(512);
    header.set(new TextEncoder().encode(path), 0);
    header.set(new TextEncoder().encode("0000644\0"), 100);
    header.set(new TextEncoder().encode(data.length.toString(8).padStart(11, "0") + "\0"), 124);
    header[156] = "0".charCodeAt(0);
    header.set(new TextEncoder().encode("ustar\0" + "00"), 257);
    blocks.push(header, data, new Uint8Array((512 - (data.length % 512)) % 512));
  }
  blocks.push(new Uint8Array(1024));
  const out = new Uint8Array(blocks.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of blocks) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}

async function gzipFile(name: string, bytes: Uint8Array): Promise<File> {
  const gz = await new Response(
    new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new CompressionStream("gzip")),
  ).arrayBuffer();
  return new File([gz], name);
}

async function refusal(files: File[]): Promise<string> {
  try {
    await regoModules(files);
  } catch (error) {
    return (error as Error).message;
  }
  return "no refusal";
}

describe("Rego bundles read in the browser", () => {
  it("should unpack the .rego modules of a .tar.gz, in folders too, beside plain .rego files", async () => {
    const bundle = await gzipFile(
      "bundle.tar.gz",
      tar({ "policies/tags.rego": "package tags\n", "policies/nested/cost.rego": "package cost\n" }),
    );
    const plain = new File(["package extra\n"], "extra.rego");
    equal(await regoModules([bundle, plain]), [
      { name: "tags", source: "package tags\n" },
      { name: "cost", source: "package cost\n" },
      { name: "extra", source: "package extra\n" },
    ]);
  });

  it("should refuse a bundle holding a data document, naming it, and any other kind of file", async () => {
    const withData = await gzipFile("bundle.tgz", tar({ "tags.rego": "package tags\n", "data.json": "{}" }));
    const message = await refusal([withData]);
    ok(message.includes("data.json") && message.includes(".rego modules only"), message);
    ok((await refusal([new File(["x"], "notes.txt")])).includes("notes.txt"));
    ok((await refusal([])).startsWith("Choose at least one"));
  });

  it("should refuse a truncated archive", async () => {
    const whole = tar({ "tags.rego": "package tags\n".repeat(100) });
    let message = "no refusal";
    try {
      untar(whole.subarray(0, 700));
    } catch (error) {
      message = (error as Error).message;
    }
    ok(message.includes("truncated"), message);
    equal(untar(whole).length, 1);
  });
});
