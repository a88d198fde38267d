// Client of interactived's local API for Node: JSON-RPC 2.0, one JSON object per line, over the
// daemon's Unix socket (docs/ipc.md; docs/players.md shows a player built on it). No
// dependencies: the `net` module only.
//
//   import { connect } from './clients/js/index.js';
//   const client = await connect('/run/interactived/interactived.sock');
//   await client.call('daemon.hello', { client: 'my-player', protocol: 1 });
//   for await (const event of client.events({ types: ['overlay.'] })) { ... }
//   await client.close();

import net from 'node:net';

/** The protocol version this client speaks (`daemon.hello`). */
export const PROTOCOL_VERSION = 1;

/**
 * A daemon error reply. `code` is the JSON-RPC code (-32000 for the daemon's own errors),
 * `name` the stable dotted name of a daemon error (`interactive.NotLoggedIn`, …) or
 * 'DaemonError' when the reply has none (-32600, -32601, -32602, …), `data` the error's data.
 */
export class DaemonError extends Error {
  constructor(error) {
    super(typeof error.message === 'string' ? error.message : 'daemon error');
    this.code = error.code;
    this.data = error.data ?? null;
    this.name = typeof error.data?.name === 'string' ? error.data.name : 'DaemonError';
  }
}

/** The connection ended (the daemon stopped or restarted, or the client was closed). */
export class ConnectionClosedError extends Error {
  constructor(message = 'the connection to the daemon closed') {
    super(message);
    this.name = 'ConnectionClosedError';
  }
}

/** No reply within the call's time limit. */
export class TimeoutError extends Error {
  constructor(method, ms) {
    super(`no reply to ${method} within ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

const LAGGED = 'events.lagged';

/**
 * Connects to the daemon's socket at `path`. Options: `callTimeoutMs` (default 30000),
 * `eventBufferCapacity` (events held for a consumer that does not keep up, default 4096),
 * `maxLineLength` (characters of one line, default 64 Mi).
 */
export function connect(path, options = {}) {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection({ path });
    const failed = (error) => reject(error);
    socket.once('error', failed);
    socket.once('connect', () => {
      socket.off('error', failed);
      resolve(new Client(socket, options));
    });
  });
}

/** One connection to the daemon: calls, notifications and one event stream. */
export class Client {
  #socket;
  #pending = new Map();
  #nextId = 1;
  #text = '';
  #discarding = false;
  #closedError = null;
  #stream = null;
  #callTimeoutMs;
  #eventBufferCapacity;
  #maxLineLength;

  constructor(socket, { callTimeoutMs = 30000, eventBufferCapacity = 4096, maxLineLength = 64 << 20 } = {}) {
    this.#socket = socket;
    this.#callTimeoutMs = callTimeoutMs;
    this.#eventBufferCapacity = Math.max(1, eventBufferCapacity);
    this.#maxLineLength = maxLineLength;
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => this.#receive(chunk));
    socket.on('error', () => {}); // 'close' follows and says the rest
    socket.on('close', () => this.#closed(new ConnectionClosedError()));
  }

  /**
   * Calls `method` with `params` and resolves with its result. A daemon error rejects with a
   * DaemonError; a closed connection with ConnectionClosedError; no reply in time with
   * TimeoutError. Options: `timeoutMs`.
   */
  call(method, params, { timeoutMs = this.#callTimeoutMs } = {}) {
    if (this.#closedError) return Promise.reject(this.#closedError);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new TimeoutError(method, timeoutMs));
      }, timeoutMs);
      this.#pending.set(id, { resolve, reject, timer });
      this.#send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
    });
  }

  /** Sends a notification: no reply (`player.time` is usually sent this way). */
  notify(method, params) {
    if (this.#closedError) throw this.#closedError;
    this.#send({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) });
  }

  /**
   * Subscribes to the daemon's events (`types`: prefixes such as 'overlay.'; `since`: replay
   * the held events after that seq; `bootId`: the boot `since` belongs to) and returns an
   * EventStream: `for await (const event of stream)` yields `{type, seq, data, bootId, time}`,
   * and `await stream.ready` is the subscription's reply `{bootId, seq, snapshot}`. One stream
   * per connection: a new one replaces the previous one.
   */
  events({ types, since, bootId } = {}) {
    this.#stream?._end(null);
    const stream = new EventStream(this, this.#eventBufferCapacity);
    this.#stream = stream;
    const params = {};
    if (types !== undefined) params.types = types;
    if (since !== undefined) params.since = since;
    if (bootId !== undefined) params.bootId = bootId;
    stream._subscribed(this.call('events.subscribe', params));
    return stream;
  }

  /** Closes the connection: pending calls reject, the event stream ends. */
  close() {
    return new Promise((resolve) => {
      if (this.#socket.destroyed) return resolve();
      this.#closed(new ConnectionClosedError('the client was closed'), true);
      this.#socket.once('close', () => resolve());
      this.#socket.end();
    });
  }

  _streamDone(stream) {
    if (this.#stream !== stream) return;
    this.#stream = null;
    if (!this.#closedError) this.call('events.unsubscribe').catch(() => {});
  }

  #send(message) {
    this.#socket.write(JSON.stringify(message) + '\n');
  }

  #receive(chunk) {
    let text = this.#text + chunk;
    let newline;
    while ((newline = text.indexOf('\n')) >= 0) {
      const line = text.slice(0, newline);
      text = text.slice(newline + 1);
      if (this.#discarding) {
        this.#discarding = false;
      } else {
        this.#handle(line);
      }
    }
    if (text.length > this.#maxLineLength) {
      text = '';
      this.#discarding = true;
    }
    this.#text = text;
  }

  #handle(line) {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      return; // the daemon sends JSON only; anything else is skipped rather than trusted
    }
    if (message?.method === 'event' && message.params) {
      this.#stream?._push(message.params);
      return;
    }
    const pending = this.#pending.get(message?.id);
    if (!pending) return;
    this.#pending.delete(message.id);
    clearTimeout(pending.timer);
    if (message.error) pending.reject(new DaemonError(message.error));
    else pending.resolve(message.result);
  }

  #closed(error, byClient = false) {
    if (this.#closedError) return;
    this.#closedError = error;
    for (const { reject, timer } of this.#pending.values()) {
      clearTimeout(timer);
      reject(error);
    }
    this.#pending.clear();
    this.#stream?._end(byClient ? null : error);
    this.#stream = null;
  }
}

/**
 * The events of one subscription, as an async iterable. A consumer that falls more than the
 * client's `eventBufferCapacity` behind loses the newest events, and one
 * `{type: 'events.lagged', data: {missed}}` takes their place, as the daemon's own does.
 * Iteration ends when the client is closed or another stream replaces this one, and throws
 * ConnectionClosedError when the daemon goes away (reconnect, subscribe again with `since` and
 * `bootId`, and when `ready.bootId` differs, log in and join again).
 */
export class EventStream {
  #client;
  #capacity;
  #items = [];
  #eventCount = 0;
  #waiter = null;
  #done = false;
  #error = null;

  constructor(client, capacity) {
    this.#client = client;
    this.#capacity = capacity;
    this.ready = null;
  }

  _subscribed(reply) {
    this.ready = reply;
    reply.catch((error) => this._end(error));
  }

  _push(event) {
    if (this.#done) return;
    const item = { type: event.type, seq: event.seq ?? null, data: event.data ?? {}, bootId: event.bootId, time: event.time };
    if (this.#waiter && this.#items.length === 0) {
      const waiter = this.#waiter;
      this.#waiter = null;
      waiter.resolve({ value: item, done: false });
    } else if (item.type === LAGGED) {
      this.#gap(item, Math.max(0, Number(item.data.missed) || 0));
    } else if (this.#eventCount >= this.#capacity) {
      this.#gap(item, 1);
    } else {
      this.#items.push(item);
      this.#eventCount += 1;
    }
  }

  _end(error) {
    if (this.#done) return;
    this.#done = true;
    this.#error = error;
    if (this.#waiter && this.#items.length === 0) {
      const waiter = this.#waiter;
      this.#waiter = null;
      if (error) waiter.reject(error);
      else waiter.resolve({ value: undefined, done: true });
    }
  }

  next() {
    if (this.#items.length > 0) {
      const item = this.#items.shift();
      if (item.type !== LAGGED) this.#eventCount -= 1;
      return Promise.resolve({ value: item, done: false });
    }
    if (this.#done) {
      return this.#error ? Promise.reject(this.#error) : Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => { this.#waiter = { resolve, reject }; });
  }

  /** Stops the stream (a `break` out of `for await` calls it): the daemon is told. */
  return() {
    this._end(null);
    this.#items = [];
    this.#client._streamDone(this);
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  #gap(event, missed) {
    const last = this.#items[this.#items.length - 1];
    if (last?.type === LAGGED) {
      last.data = { missed: last.data.missed + missed };
    } else {
      this.#items.push({ type: LAGGED, seq: null, data: { missed }, bootId: event.bootId, time: event.time });
    }
  }
}
