/*
 * The WPE player's part of the remote in an overlay view (players/shared/page/overlay-remote.js),
 * run with it and spatial.js in the view's isolated script world: leave() tells the player
 * through the host's own `host` handler, which the page cannot reach, and enter() is the
 * player's to call once the view has the remote's focus.
 */
function leave(reason) {
  window.webkit.messageHandlers.host.postMessage(JSON.stringify({ kind: 'leave', reason: reason }));
}

window.interactivedRemote = { enter: function () { enter(); } };
