// The helper process of host-tools.ts: runs the host tools it is sent (one JSON line each:
// {id, command, args}) and answers each with {id, ok, message}. It only ever runs what the runner
// asks for, with a fixed PATH, and ends when its stdin closes (the runner is gone).
import { execFile } from "node:child_process";
import readline from "node:readline";

const PATH = "/usr/sbin:/usr/bin:/sbin:/bin";

readline
  .createInterface({ input: process.stdin })
  .on("line", (line) => {
    let request;
    try {
      request = JSON.parse(line);
    } catch {
      return;
    }
    const { id, command, args } = request;
    execFile(
      String(command),
      Array.isArray(args) ? args.map(String) : [],
      { env: { PATH } },
      (error, _stdout, stderr) => {
        const message = error ? String(stderr).trim() || error.message : undefined;
        process.stdout.write(`${JSON.stringify({ id, ok: !error, message })}\n`);
      },
    );
  })
  .on("close", () => process.exit(0));
