// The JavaScript client against the real daemon (and, for the quiz, the reference backend).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConnectionClosedError, DaemonError, connect } from '../index.js';
import { removeDirectory, startBackend, startDaemon, temporaryDirectory } from '../support/processes.js';

const WAIT_MS = 10000;

/** The next item of an event stream, bounded. */
async function next(stream) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no event within ${WAIT_MS} ms`)), WAIT_MS);
  });
  try {
    const { value, done } = await Promise.race([stream.next(), timeout]);
    assert.equal(done, false, 'the event stream ended');
    return value;
  } finally {
    clearTimeout(timer);
  }
}

/** The next event of `type`, skipping others. */
async function nextOfType(stream, type) {
  for (;;) {
    const event = await next(stream);
    if (event.type === type) return event;
  }
}

describe('the JavaScript client', { timeout: 60000 }, () => {
  let directory;
  let daemon;

  before(async () => {
    directory = temporaryDirectory();
    daemon = await startDaemon({ directory });
  });

  after(async () => {
    await daemon.stop();
    removeDirectory(directory);
  });

  it('calls methods and rejects daemon errors with code and name', async () => {
    const client = await connect(daemon.socketPath, { client: 'js-test' });
    assert.equal(client.hello.protocol, 1);
    const hello = await client.call('daemon.hello', { client: 'js-test', protocol: 1 });
    assert.equal(hello.bootId, client.hello.bootId);
    assert.equal(hello.role, 'control');
    assert.match(hello.bootId, /^[0-9a-f]+$/);

    await assert.rejects(client.call('room.leave'), (error) => {
      assert.ok(error instanceof DaemonError);
      assert.equal(error.code, -32000);
      assert.equal(error.name, 'interactive.NoRoom');
      return true;
    });
    await assert.rejects(client.call('interactive.status', { mediaId: 'm1' }),
      { code: -32000, name: 'interactive.NotLoggedIn' });
    await assert.rejects(client.call('no.such'), { code: -32601, name: 'DaemonError' });
    await assert.rejects(client.call('session.login', { userId: 'u' }), { code: -32602 });
    // The connection stays usable after errors.
    assert.equal((await client.call('session.login', { token: 't', userId: 'u', displayName: 'U' })).loggedIn, true);
    await client.call('session.logout');
    await client.close();
    await assert.rejects(client.call('daemon.status'), ConnectionClosedError);
  });

  it('streams events after the snapshot, filtered by type, with seq gaps under the filter', async () => {
    const client = await connect(daemon.socketPath);
    const other = await connect(daemon.socketPath);
    const stream = client.events({ types: ['config.'] });
    const subscription = await stream.ready;
    assert.equal(subscription.snapshot.bootId, subscription.bootId);
    assert.equal(typeof subscription.seq, 'number');

    assert.equal(stream.lastSeq, subscription.seq);
    await other.call('config.set', { deviceClass: 'tv' });
    const first = await next(stream);
    assert.equal(stream.lastSeq, first.seq);
    assert.equal(first.type, 'config.changed');
    assert.deepEqual(first.data, { deviceClass: 'tv' });
    assert.equal(first.seq, subscription.seq + 1);

    await other.call('session.login', { token: 't', userId: 'u', displayName: 'U' });
    await other.call('config.set', { deviceClass: 'kiosk' });
    const second = await next(stream);
    assert.equal(second.data.deviceClass, 'kiosk');
    assert.equal(second.seq, first.seq + 2, 'session.state took the seq in between');
    await other.call('session.logout');
    await client.close();
    await other.close();
  });

  it('replays the held events after since, and says lagged for another boot', async () => {
    const client = await connect(daemon.socketPath);
    const { seq } = await client.events({ types: ['config.'] }).ready;
    await client.call('config.set', { deviceClass: 'replayed' });

    const again = client.events({ types: ['config.'], since: seq });
    const replayed = await next(again);
    assert.equal(replayed.seq, seq + 1);
    assert.equal(replayed.data.deviceClass, 'replayed');

    const otherBoot = client.events({ since: seq, bootId: 'not-this-boot' });
    const lagged = await next(otherBoot);
    assert.equal(lagged.type, 'events.lagged');
    assert.equal(lagged.seq, null);
    assert.ok(lagged.data.missed >= seq + 1);
    await client.close();
  });

  it('marks the events a slow consumer lost with one events.lagged where they were', async () => {
    const client = await connect(daemon.socketPath, { eventBufferCapacity: 2 });
    const other = await connect(daemon.socketPath);
    const stream = client.events({ types: ['config.'] });
    await stream.ready;
    for (const value of ['a', 'b', 'c', 'd', 'e']) await other.call('config.set', { deviceClass: value });
    await client.call('daemon.status'); // replies come in order: the five events are in
    assert.equal((await next(stream)).data.deviceClass, 'a');
    assert.equal((await next(stream)).data.deviceClass, 'b');
    assert.deepEqual((await next(stream)).data, { missed: 3 });
    await other.call('config.set', { deviceClass: 'f' });
    assert.equal((await next(stream)).data.deviceClass, 'f');
    await client.close();
    await other.close();
  });

  it('ends the iteration on close, and after a break', async () => {
    const client = await connect(daemon.socketPath);
    const stream = client.events({ types: ['config.'] });
    await stream.ready;
    const seen = [];
    const loop = (async () => {
      for await (const event of stream) seen.push(event);
    })();
    await client.close();
    await loop;
    assert.deepEqual(seen, []);

    const second = await connect(daemon.socketPath);
    const other = await connect(daemon.socketPath);
    const breaking = second.events({ types: ['config.'] });
    await breaking.ready;
    await other.call('config.set', { deviceClass: 'x' });
    for await (const event of breaking) {
      assert.equal(event.type, 'config.changed');
      break;
    }
    assert.deepEqual(await breaking.next(), { value: undefined, done: true });
    await second.close();
    await other.close();
  });
});

describe('a daemon that goes away', { timeout: 60000 }, () => {
  it('rejects the stream and pending calls with ConnectionClosedError, and a new boot says lagged', async () => {
    const directory = temporaryDirectory();
    try {
      let daemon = await startDaemon({ directory });
      const client = await connect(daemon.socketPath);
      const stream = client.events({ types: ['config.'] });
      const before = await stream.ready;
      const waiting = assert.rejects(stream.next(), ConnectionClosedError);
      assert.equal(await daemon.stop(), 0);
      await waiting;
      await assert.rejects(client.call('daemon.status'), ConnectionClosedError);

      daemon = await startDaemon({ directory });
      const again = await connect(daemon.socketPath);
      assert.equal(stream.bootId, before.bootId);
      const resumed = again.events({ types: ['config.'], since: stream.lastSeq, bootId: stream.bootId });
      const ready = await resumed.ready;
      assert.notEqual(ready.bootId, before.bootId, 'a restarted daemon has a new boot id');
      assert.equal((await next(resumed)).type, 'events.lagged');
      await again.close();
      await daemon.stop();
    } finally {
      removeDirectory(directory);
    }
  });
});

describe('a quiz', { timeout: 60000 }, () => {
  it('is answered from overlay.show to answer.result', async () => {
    const backend = await startBackend();
    const directory = temporaryDirectory();
    const daemon = await startDaemon({ directory, args: backend.daemonArgs });
    try {
      const client = await connect(daemon.socketPath, { client: 'js-quiz' });
      await client.call('session.login', { token: 'token-alice', userId: 'alice', displayName: 'Alice' });
      assert.equal((await client.call('room.join', { mediaId: 'm1', mode: 'live' })).state, 'joined');
      const stream = client.events({ types: ['overlay.', 'answer.'] });
      await stream.ready;
      await backend.admin('POST', '/_admin/emit', {
        event: 'overlay', room: 'm1', shape: 'wrapped', trackingId: null,
        overlay: { timelineId: 'tl-js', typeTimeline: 1, url: `${backend.baseUrl}/templates/quiz.html?id=tl-js`,
          position: { alignment: 4, width: 40, height: 30 }, duration: 30, targets: ['all'] },
      });
      const show = await nextOfType(stream, 'overlay.show');
      const overlayId = show.data.overlayId;
      assert.deepEqual(show.data.placement, { location: 4, widthPct: 40, heightPct: 30 });
      await client.call('overlay.attached', { overlayId });
      assert.equal((await client.call('overlay.rendered', { overlayId, status: 'loaded' })).recorded, true);
      // What quiz.html posts through the IOS bridge, forwarded as the text it posted.
      await client.call('overlay.bridge', { overlayId, message: '{"type":"INTERACTIVE_SHOW_ANALYTICS","data":{"id":"tl-js"}}' });
      assert.equal((await nextOfType(stream, 'overlay.reveal')).data.overlayId, overlayId);
      const reply = await client.call('overlay.bridge',
        { overlayId, message: '{"type":"INTERACTIVE_ACTION_REPORT","data":{"answer":{"choice":"A"}}}' });
      assert.deepEqual(reply, { handled: true, action: 'answer' });
      const result = await nextOfType(stream, 'answer.result');
      assert.equal(result.data.status, 'success');
      const actions = await backend.admin('GET', '/_admin/actions');
      assert.deepEqual(actions.items.at(-1).body.answer, { answer: { choice: 'A' } });
      await client.close();
    } finally {
      await daemon.stop();
      await backend.stop();
      removeDirectory(directory);
    }
  });
});
