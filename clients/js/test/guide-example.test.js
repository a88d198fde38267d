// Runs the JavaScript example of docs/players.md ("From zero to an answered quiz"), as written
// there, against the real daemon and the reference backend, with a stand-in for the web engine
// that behaves as the quiz page does.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { ConnectionClosedError, connect } from '../index.js';
import { removeDirectory, repoRoot, startBackend, startDaemon, temporaryDirectory } from '../support/processes.js';

const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor;
const guide = readFileSync(path.join(repoRoot, 'docs/players.md'), 'utf8');

/** The first ```js block after `heading`. */
function codeAfter(heading) {
  const start = guide.indexOf(heading);
  assert.ok(start >= 0, `docs/players.md has no "${heading}"`);
  return /```js\n([\s\S]*?)```/.exec(guide.slice(start))[1];
}

/** Resolves once `check` returns a value (polled, bounded). */
async function eventually(check, what, ms = 15000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what} within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

it('the guide\'s JavaScript example answers a quiz', { timeout: 60000 }, async () => {
  const example = codeAfter('### JavaScript (`clients/js`)')
    .replace(/^import .*$/m, '')
    .replace("'/run/interactived/interactived.sock'", 'SOCKET');
  const placementFrame = new Function(`${codeAfter('## 3. Placement geometry')}; return placementFrame;`)();
  const backend = await startBackend();
  const directory = temporaryDirectory();
  const daemon = await startDaemon({ directory, args: backend.daemonArgs });
  const logged = [];
  const frames = new Map();
  // The quiz page: loads, says it is ready, and once shown the viewer picks A.
  const web = {
    open(overlayId, url, frame, { onPost, onLoad }) {
      frames.set(overlayId, { url, frame, onPost });
      onLoad(true);
      onPost('{"type":"INTERACTIVE_SHOW_ANALYTICS","data":{}}');
    },
    reveal(overlayId) {
      frames.get(overlayId).onPost('{"type":"INTERACTIVE_ACTION_REPORT","data":{"answer":{"choice":"A"}}}');
    },
    post() {},
    close(overlayId) { frames.delete(overlayId); },
    showControls() {},
    ask: async () => true,
  };
  try {
    const run = new AsyncFunction('connect', 'web', 'TOKEN', 'placementFrame', 'SOCKET', 'console', example);
    const running = run(connect, web, 'token-alice', placementFrame, daemon.socketPath, { log: (...words) => logged.push(words) });
    const ended = running.then(() => null, (error) => error);
    await eventually(async () => (await backend.admin('GET', '/_admin/rooms')).rooms?.m1?.length, 'no viewer joined m1');
    await backend.admin('POST', '/_admin/emit', {
      event: 'overlay', room: 'm1', shape: 'wrapped', trackingId: null,
      overlay: { timelineId: 'tl-guide', typeTimeline: 1, url: `${backend.baseUrl}/templates/quiz.html?id=tl-guide`,
        position: { alignment: 8, width: 40, height: 30 }, duration: 30, targets: ['all'] },
    });
    const answer = await eventually(() => logged.find((words) => words[0] === 'answer:'), 'no answer.result');
    assert.equal(answer[1], 'success');
    const [shown] = [...frames.values()];
    assert.deepEqual(shown.frame, { x: 1152, y: 756, width: 768, height: 324 });
    const actions = await backend.admin('GET', '/_admin/actions');
    assert.deepEqual(actions.items.at(-1).body.answer, { answer: { choice: 'A' } });
    await daemon.stop();
    assert.ok((await ended) instanceof ConnectionClosedError, 'the example runs until the daemon goes away');
  } finally {
    await daemon.stop();
    await backend.stop();
    removeDirectory(directory);
  }
});
