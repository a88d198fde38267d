// Starts the real daemon (and the reference backend) for the tests, the way
// Tests/IntegrationTests/Support does: a temporary socket and state directory, no
// configuration file, every wait bounded.

import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

let binDirectory = process.env.INTERACTIVED_BIN_DIR;

/** The built executable `name` (`swift build --show-bin-path`, or $INTERACTIVED_BIN_DIR). */
export function builtProduct(name) {
  binDirectory ??= execFileSync('swift', ['build', '--show-bin-path'], { cwd: repoRoot, encoding: 'utf8' }).trim();
  return path.join(binDirectory, name);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** `promise`'s value, or 'timeout' after `ms` (the timer does not outlive the wait). */
async function within(promise, ms) {
  let timer;
  const timeout = new Promise((resolve) => { timer = setTimeout(() => resolve('timeout'), ms); });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A temporary directory, short enough for a socket path. */
export function temporaryDirectory() {
  return mkdtempSync('/tmp/icjs-');
}

/** The daemon, started on `directory` (new if omitted) and reachable once this resolves. */
export async function startDaemon({ directory = temporaryDirectory(), args = [] } = {}) {
  const socketPath = path.join(directory, 'd.sock');
  const env = { ...process.env };
  for (const key of ['NOTIFY_SOCKET', 'LISTEN_FDS', 'LISTEN_PID', 'JOURNAL_STREAM', 'WATCHDOG_USEC', 'INTERACTIVED_SOCKET']) {
    delete env[key];
  }
  const child = spawn(builtProduct('interactived'), [
    '--socket', socketPath, '--state-directory', path.join(directory, 'state'),
    '--config', '/nonexistent.json', '--log-target', 'stderr', ...args,
  ], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text) => { stderr += text; });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const deadline = Date.now() + 10000;
  while (!(await canConnect(socketPath))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the daemon did not start listening on ${socketPath}:\n${stderr}`);
    }
    await sleep(50);
  }
  return {
    socketPath,
    directory,
    stderr: () => stderr,
    /** SIGTERM, then the exit status (bounded). */
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill('SIGTERM');
      const status = await within(exited, 10000);
      if (status === 'timeout') child.kill('SIGKILL');
      return status;
    },
  };
}

/** Removes a directory made by `temporaryDirectory`. */
export function removeDirectory(directory) {
  rmSync(directory, { recursive: true, force: true });
}

function canConnect(socketPath) {
  return new Promise((resolve) => {
    const socket = net.createConnection({ path: socketPath });
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

/** The reference backend (tools/backend) on a free port of 127.0.0.1. */
export async function startBackend() {
  const child = spawn('python3', ['-m', 'tools.backend', '--port', '0', '--log-level', 'warning'],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const listening = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the backend did not start:\n${output}`)), 20000);
    const seen = (text) => {
      output += text;
      const match = /backend listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) { clearTimeout(timer); resolve(match[1]); }
    };
    child.stdout.setEncoding('utf8').on('data', seen);
    child.stderr.setEncoding('utf8').on('data', seen);
    child.once('exit', () => { clearTimeout(timer); reject(new Error(`the backend exited:\n${output}`)); });
  });
  let baseUrl;
  try {
    baseUrl = await listening;
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    baseUrl,
    /** Daemon flags pointing at this backend. */
    daemonArgs: ['--socket-url', baseUrl, '--api-url', baseUrl, '--tenant', 'onlivev2', '--os', 'linuxstb'],
    async admin(method, adminPath, body) {
      const response = await fetch(baseUrl + adminPath, {
        method, headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(10000),
      });
      return response.json();
    },
    async stop() {
      child.kill('SIGTERM');
      if (await within(exited, 10000) === 'timeout') child.kill('SIGKILL');
    },
  };
}
