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
import { VoiceRoom } from './voice.js';

export { VOICE_EVENTS, VoiceRoom } from './voice.js';

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
 * Connects to the daemon's socket at `path` and says `daemon.hello` (its result is
 * `client.hello`: `bootId`, `role`, `capabilities`, …). Options: `client` (the name given in
 * hello, default 'interactived-client-js'), `callTimeoutMs` (default 30000),
 * `eventBufferCapacity` (events held for a consumer that does not keep up, default 4096),
 * `maxLineLength` (characters of one line, default 64 Mi).
 */
export async function connect(path, options = {}) {
  const socket = await new Promise((resolve, reject) => {
    const opened = net.createConnection({ path });
    opened.once('error', reject);
    opened.once('connect', () => {
      opened.off('error', reject);
      resolve(opened);
    });
  });
  const client = new Client(socket, options);
  try {
    client.hello = await client.call('daemon.hello',
      { client: options.client ?? 'interactived-client-js', protocol: PROTOCOL_VERSION });
  } catch (error) {
    await client.close();
    throw error;
  }
  return client;
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
    /** The result of `daemon.hello` (set by `connect`). */
    this.hello = null;
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
    const stream = new EventStream(this, this.#eventBufferCapacity, since);
    this.#stream = stream;
    const params = {};
    if (types !== undefined) params.types = types;
    if (since !== undefined) params.since = since;
    if (bootId !== undefined) params.bootId = bootId;
    stream._subscribed(this.call('events.subscribe', params), bootId);
    return stream;
  }

  /**
   * voice.join: joins the voice room `room` (leaving another one), with `muted`, the room's
   * `pin` (a secret: the daemon never logs it), the `display` name the others see (default the
   * viewer's) and `timeoutMs` (the daemon's wait). Resolves with a VoiceRoom: `joined` with
   * `selfId` and `participants`, or `connecting` after `timeoutMs`. Refusals reject with a
   * DaemonError: `interactive.BackendRefused` (wrong pin, full room), `BackendUnreachable`,
   * `VoiceUnavailable` (`data.reason`), `NotConfigured` (no `voiceUrl`), `NoRoom`.
   */
  async voiceJoin(room, { muted = false, pin, display, timeoutMs } = {}, options = {}) {
    const params = { room, muted };
    if (display !== undefined) params.display = display;
    if (pin !== undefined) params.pin = pin;
    if (timeoutMs !== undefined) params.timeoutMs = timeoutMs;
    const result = await this.call('voice.join', params, options);
    const joined = VoiceRoom.fromStatus(result);
    if (!joined) throw new DaemonError({ code: -32603, message: 'voice.join answered what is not a voice room' });
    return joined;
  }

  /** voice.leave: `{room, state: 'left'}`. */
  voiceLeave(options = {}) {
    return this.call('voice.leave', undefined, options);
  }

  /** voice.mute: `{room, muted}` (VoiceRoom's `applyMute` takes it). */
  voiceMute(muted, options = {}) {
    return this.call('voice.mute', { muted }, options);
  }

  /** daemon.status's `voice` as a VoiceRoom (every participant), or null. */
  async voiceStatus(options = {}) {
    return VoiceRoom.fromStatus((await this.call('daemon.status', undefined, options))?.voice);
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
 * ConnectionClosedError when the daemon goes away: connect again and resume with
 * `events({types, since: stream.lastSeq, bootId: stream.bootId})`; when the new `ready.bootId`
 * differs, the daemon restarted (it joins again by itself; drop the old boot's overlays).
 */
export class EventStream {
  #client;
  #capacity;
  #items = [];
  #eventCount = 0;
  #waiter = null;
  #done = false;
  #error = null;
  #yieldedEvent = false;

  constructor(client, capacity, since) {
    this.#client = client;
    this.#capacity = capacity;
    /** The subscription's reply `{bootId, seq, snapshot}`. */
    this.ready = null;
    /** The boot of the subscription (once `ready` resolved). */
    this.bootId = null;
    /** The seq of the last event this stream yielded, to resume from (`since`). */
    this.lastSeq = since ?? null;
  }

  _subscribed(reply, requestedBootId) {
    this.ready = reply;
    reply.then((result) => {
      // Events may have been yielded already: they are newer than the reply.
      if (this.#yieldedEvent) return;
      this.bootId = result.bootId;
      const anotherBoot = requestedBootId !== undefined && requestedBootId !== result.bootId;
      if (this.lastSeq === null || anotherBoot) this.lastSeq = result.seq;
    }, (error) => this._end(error));
  }

  _push(event) {
    if (this.#done) return;
    const item = { type: event.type, seq: event.seq ?? null, data: event.data ?? {}, bootId: event.bootId, time: event.time };
    if (this.#waiter && this.#items.length === 0) {
      const waiter = this.#waiter;
      this.#waiter = null;
      waiter.resolve(this.#yield(item));
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
      return Promise.resolve(this.#yield(item));
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

  #yield(item) {
    if (item.seq !== null) {
      // Every event of one connection belongs to the daemon's current boot.
      this.bootId = item.bootId;
      this.lastSeq = item.seq;
      this.#yieldedEvent = true;
    }
    return { value: item, done: false };
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
