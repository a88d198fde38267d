// The voice room's API (voiceJoin, voiceLeave, voiceMute, voiceStatus and VoiceRoom over the
// voice.* events) against a scripted JSON-lines server that speaks docs/ipc.md's voice
// exchanges (support/scripted-voice-daemon.js): the daemon on this branch does not answer
// voice.* yet.

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DaemonError, VOICE_EVENTS, VoiceRoom, connect } from '../index.js';
import { removeDirectory, temporaryDirectory } from '../support/processes.js';
import { ScriptedVoiceDaemon, daemonError } from '../support/scripted-voice-daemon.js';

const WAIT_MS = 10000;
const JOINED = {
  room: 'watch-party', state: 'joined', selfId: '4711', muted: false, error: null,
  participants: [
    { peerId: '4711', display: 'Alice', muted: false, talking: false },
    { peerId: '88', display: 'Bob', muted: true, talking: false },
  ],
};

/** The next `count` events of a stream, bounded. */
async function take(stream, count) {
  const events = [];
  let timer;
  const timeout = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`no event within ${WAIT_MS} ms`)), WAIT_MS); });
  try {
    while (events.length < count) {
      const { value, done } = await Promise.race([stream.next(), timeout]);
      assert.equal(done, false, 'the event stream ended');
      events.push(value);
    }
  } finally {
    clearTimeout(timer);
  }
  return events;
}

describe('the voice room API', { timeout: 30000 }, () => {
  let directory;
  let scripted;

  before(async () => {
    directory = temporaryDirectory();
    scripted = await ScriptedVoiceDaemon.start(path.join(directory, 'voice.sock'));
  });

  after(async () => {
    await scripted.stop();
    removeDirectory(directory);
  });

  it('voiceJoin sends room, muted, pin and timeoutMs and reads the room', async () => {
    scripted.replies['voice.join'] = JOINED;
    const client = await connect(path.join(directory, 'voice.sock'));
    const room = await client.voiceJoin('watch-party', { muted: true, pin: '1234', timeoutMs: 5000 });
    assert.deepEqual(scripted.requests.at(-1), ['voice.join', { room: 'watch-party', muted: true, pin: '1234', timeoutMs: 5000 }]);
    assert.ok(room instanceof VoiceRoom && room.joined);
    assert.equal(room.selfId, '4711');
    assert.deepEqual(room.participants.map((p) => [p.display, p.muted]), [['Alice', false], ['Bob', true]]);
    await client.voiceJoin('watch-party');
    assert.deepEqual(scripted.requests.at(-1), ['voice.join', { room: 'watch-party', muted: false }]);
    await client.close();
  });

  it('rejects refusals with the daemon error name', async () => {
    scripted.replies['voice.join'] = daemonError('interactive.BackendRefused', 'wrong pin');
    scripted.replies['voice.mute'] = daemonError('interactive.VoiceUnavailable', 'no microphone', { reason: 'autoaudiosrc: no device' });
    scripted.replies['voice.leave'] = daemonError('interactive.NoRoom', 'not in a voice room');
    const client = await connect(path.join(directory, 'voice.sock'));
    await assert.rejects(client.voiceJoin('r', { pin: '0000' }), (error) => {
      assert.ok(error instanceof DaemonError);
      assert.equal(error.code, -32000);
      assert.equal(error.name, 'interactive.BackendRefused');
      return true;
    });
    await assert.rejects(client.voiceMute(true), { name: 'interactive.VoiceUnavailable', data: { name: 'interactive.VoiceUnavailable', reason: 'autoaudiosrc: no device' } });
    await assert.rejects(client.voiceLeave(), { name: 'interactive.NoRoom' });
    await client.close();
  });

  it('voiceStatus, voiceMute and voiceLeave', async () => {
    scripted.replies['voice.mute'] = { room: 'watch-party', muted: true };
    scripted.replies['voice.leave'] = { room: 'watch-party', state: 'left' };
    scripted.voice = null;
    const client = await connect(path.join(directory, 'voice.sock'));
    assert.equal(await client.voiceStatus(), null);
    scripted.voice = JOINED;
    const room = await client.voiceStatus();
    room.applyMute(await client.voiceMute(true));
    assert.deepEqual(scripted.requests.at(-1), ['voice.mute', { muted: true }]);
    assert.equal(room.muted, true);
    assert.equal(room.participant('4711').muted, true);
    assert.deepEqual(await client.voiceLeave(), { room: 'watch-party', state: 'left' });
    await client.close();
  });

  it('keeps a room from the snapshot up to date with the voice events', async () => {
    scripted.voice = JOINED;
    const client = await connect(path.join(directory, 'voice.sock'));
    const stream = client.events({ types: [VOICE_EVENTS] });
    const room = VoiceRoom.fromStatus((await stream.ready).snapshot.voice);
    scripted.emit('voice.peer', { room: 'watch-party', peerId: '93', display: 'Carol', event: 'joined', muted: false });
    scripted.emit('voice.talking', { room: 'watch-party', peerId: '93', talking: true });
    scripted.emit('voice.talking', { room: 'watch-party', peerId: '4711', talking: true });
    scripted.emit('voice.peer', { room: 'watch-party', peerId: '88', display: 'Bob', event: 'updated', muted: false });
    scripted.emit('voice.peer', { room: 'other', peerId: '5', display: 'Eve', event: 'joined', muted: false });
    for (const { type, data } of await take(stream, 5)) room.apply(type, data);
    assert.deepEqual(room.participants.map((p) => [p.display, p.muted, p.talking]),
      [['Alice', false, true], ['Bob', false, false], ['Carol', false, true]]);
    assert.deepEqual(room.othersTalking.map((p) => p.display), ['Carol']);

    scripted.emit('voice.peer', { room: 'watch-party', peerId: '93', display: 'Carol', event: 'left', muted: false, reason: 'timeout' });
    scripted.emit('voice.state', { room: 'watch-party', state: 'joined', selfId: '4711', muted: false, participants: 3, error: null, reason: null });
    for (const { type, data } of await take(stream, 2)) room.apply(type, data);
    assert.deepEqual(room.participants.map((p) => p.display), ['Alice', 'Bob']);
    assert.equal(room.needsStatus, true); // three now, two known: read the list again

    scripted.emit('voice.state', { room: 'watch-party', state: 'left', selfId: '4711', muted: false, participants: 0, error: null, reason: 'kicked' });
    const [left] = await take(stream, 1);
    assert.equal(room.apply(left.type, left.data), true);
    assert.deepEqual([room.state, room.reason, room.participants, room.active], ['left', 'kicked', [], false]);
    await client.close();
  });
});
