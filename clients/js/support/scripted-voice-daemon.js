// A scripted stand-in for the daemon's voice room, for the client's voice tests: a JSON-lines
// Unix-socket server that speaks exactly docs/ipc.md's exchanges for daemon.hello,
// daemon.status (with `voice`), events.subscribe, voice.join, voice.leave and voice.mute,
// answers what the test scripted, records every request and sends the events the test emits. It
// exists because the daemon on this branch has no voice manager yet; it makes up no method,
// event or member the contract does not name.

import net from 'node:net';

const BOOT_ID = '5c2f0a9e1b7d4c3a';

/** A daemon error reply's `error` (code -32000, `data.name`). */
export function daemonError(name, message, data = {}) {
  return { error: { code: -32000, message, data: { name, ...data } } };
}

export class ScriptedVoiceDaemon {
  /** `replies[method]`: the result, or `daemonError(...)`; `voice`: daemon.status's `voice`. */
  replies = {};
  voice = null;
  /** The `[method, params]` received, in order. */
  requests = [];
  seq = 40;
  #server;
  #subscribers = new Set();
  #sockets = new Set();

  static async start(path) {
    const daemon = new ScriptedVoiceDaemon();
    daemon.#server = net.createServer((socket) => daemon.#serve(socket));
    await new Promise((resolve, reject) => {
      daemon.#server.once('error', reject);
      daemon.#server.listen(path, resolve);
    });
    return daemon;
  }

  status() {
    return { bootId: BOOT_ID, connection: { state: 'idle' }, room: null, session: { loggedIn: false }, overlays: [], voice: this.voice };
  }

  /** An event to every subscriber, as the daemon sends it. */
  emit(type, data) {
    this.seq += 1;
    const line = JSON.stringify({ jsonrpc: '2.0', method: 'event', params: { bootId: BOOT_ID, seq: this.seq, type, time: '2026-12-01T23:00:00Z', data } });
    for (const socket of this.#subscribers) socket.write(line + '\n');
  }

  stop() {
    for (const socket of this.#sockets) socket.destroy();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  #serve(socket) {
    this.#sockets.add(socket);
    socket.on('close', () => { this.#sockets.delete(socket); this.#subscribers.delete(socket); });
    socket.on('error', () => {});
    let text = '';
    socket.setEncoding('utf8').on('data', (chunk) => {
      text += chunk;
      let newline;
      while ((newline = text.indexOf('\n')) >= 0) {
        const message = JSON.parse(text.slice(0, newline));
        text = text.slice(newline + 1);
        this.#answer(socket, message);
      }
    });
  }

  #answer(socket, { id, method, params = {} }) {
    this.requests.push([method, params]);
    const reply = { jsonrpc: '2.0', id };
    if (method === 'daemon.hello') {
      reply.result = { daemon: 'interactived', version: 'scripted', protocol: 1, bootId: BOOT_ID, role: 'control', capabilities: [] };
    } else if (method === 'daemon.status') {
      reply.result = this.status();
    } else if (method === 'events.subscribe') {
      this.#subscribers.add(socket);
      reply.result = { bootId: BOOT_ID, seq: this.seq, snapshot: this.status() };
    } else if (method in this.replies) {
      const scripted = this.replies[method];
      Object.assign(reply, Object.keys(scripted).length === 1 && 'error' in scripted ? scripted : { result: scripted });
    } else {
      reply.error = { code: -32601, message: `method not found: ${method}` };
    }
    if (id !== undefined) socket.write(JSON.stringify(reply) + '\n');
  }
}
