// The first process inside every StackShip sandbox, run with the host's node binary (plain ESM,
// no tsx: nothing but node's own modules exists in the sandbox).
//
//   node sandbox-launcher.mjs [--api-socket PATH --api-port PORT]
//
// It talks to the runner over fd 3 (a socketpair the runner passed through bwrap), one JSON
// object per line:
//   runner -> launcher  {"type":"start","argv":[...],"env":{...},"cwd":"/work"}
//                       {"type":"signal","signal":"SIGINT"}        (sent to the command's process group)
//   launcher -> runner  {"type":"started","pid":N}
//                       {"type":"exit","code":N|null,"signal":"SIGx"|null}
//                       {"type":"error","message":"..."}
// The command and its environment arrive over the channel rather than on bwrap's argv so that
// secrets in them never show up in the host's process list.
//
// With --api-socket it is also the loopback forwarder: it listens on 127.0.0.1:PORT and pipes every
// connection to the API channel's Unix socket, and it starts the command only once it listens.
import { spawn } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';

const CONTROL_FD = 3;

function parseArgs(args) {
  const options = { apiSocket: undefined, apiPort: undefined };
  for (let i = 0; i < args.length; i += 2) {
    const [flag, value] = [args[i], args[i + 1]];
    if (value === undefined) throw new Error(`missing value for ${flag}`);
    if (flag === '--api-socket') options.apiSocket = value;
    else if (flag === '--api-port') options.apiPort = Number(value);
    else throw new Error(`unknown option ${flag}`);
  }
  if ((options.apiSocket === undefined) !== (options.apiPort === undefined)) {
    throw new Error('--api-socket and --api-port go together');
  }
  return options;
}

const control = new net.Socket({ fd: CONTROL_FD, readable: true, writable: true });
control.on('error', () => {});

function send(message) {
  control.write(`${JSON.stringify(message)}\n`);
}

function finish(code, message) {
  // Exit only once the runner has the last message.
  control.end(`${JSON.stringify(message)}\n`, () => process.exit(code));
  setTimeout(() => process.exit(code), 1000).unref();
}

function startForwarder(socketPath, port) {
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    const upstream = net.connect({ path: socketPath, allowHalfOpen: true });
    const teardown = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', teardown);
    upstream.on('error', teardown);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => {
      server.off('error', reject);
      server.unref();
      resolve(server);
    });
  });
}

let child;
let pending = '';
let started = false;

function killGroup(signal) {
  if (!child || child.pid === undefined) return;
  try {
    // The command leads its own process group (detached), so `sh -c 'tofu …'` and tofu both get it.
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

async function start(message, options) {
  const argv = Array.isArray(message.argv) ? message.argv : [];
  if (argv.length === 0 || !argv.every((a) => typeof a === 'string')) {
    finish(127, { type: 'error', message: 'start: argv must be a non-empty list of strings' });
    return;
  }
  if (options.apiSocket !== undefined) {
    try {
      await startForwarder(options.apiSocket, options.apiPort);
    } catch (error) {
      finish(126, { type: 'error', message: `API forwarder: ${error.message}` });
      return;
    }
  }
  try {
    child = spawn(argv[0], argv.slice(1), {
      cwd: typeof message.cwd === 'string' ? message.cwd : process.cwd(),
      env: message.env && typeof message.env === 'object' ? message.env : {},
      stdio: ['ignore', 'inherit', 'inherit'],
      detached: true,
    });
  } catch (error) {
    finish(127, { type: 'error', message: `${argv[0]}: ${error.message}` });
    return;
  }
  child.once('spawn', () => send({ type: 'started', pid: child.pid }));
  child.once('error', (error) => {
    if (child.pid === undefined) finish(127, { type: 'error', message: `${argv[0]}: ${error.message}` });
  });
  child.once('exit', (code, signal) => {
    // The shell convention, so bwrap's own exit status still says what happened.
    const status = code ?? 128 + (os.constants.signals[signal] ?? 0);
    finish(status, { type: 'exit', code, signal });
  });
}

function handle(message, options) {
  if (message.type === 'start' && !started) {
    started = true;
    void start(message, options);
  } else if (message.type === 'signal' && typeof message.signal === 'string') {
    killGroup(message.signal);
  }
}

function main() {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    finish(125, { type: 'error', message: `launcher: ${error.message}` });
    return;
  }
  control.setEncoding('utf8');
  control.on('data', (data) => {
    pending += data;
    let newline;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      if (!line.trim()) continue;
      try {
        handle(JSON.parse(line), options);
      } catch {
        // Ignore garbage; the runner only sends well-formed lines.
      }
    }
  });
  // The runner went away: nobody is left to collect the result, so stop everything.
  control.on('end', () => {
    killGroup('SIGKILL');
    process.exit(137);
  });
}

main();
