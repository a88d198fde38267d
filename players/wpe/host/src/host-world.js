/*
 * Runs in every frame of every view, in the host's isolated script world (the page cannot see
 * it), and reports to the host (the hostKeys handler):
 * - {"seen": "keydown" | "keyup"}: each key event, once the page's listeners ran (the host
 *   answers a key command then);
 * - {"unhandled": KEY}: a remote key whose keydown no listener cancelled (preventDefault) and
 *   whose default did nothing, so that the player can act on it (an arrow at the edge of an
 *   overlay, Back). Enter counts as unhandled only when nothing has the focus: on a focused
 *   element its default is the element's activation.
 */
(function () {
  'use strict';
  var REMOTE_KEYS = {
    ArrowUp: true, ArrowDown: true, ArrowLeft: true, ArrowRight: true,
    Enter: true, Escape: true, Backspace: true, BrowserBack: true, GoBack: true
  };
  var host = window.webkit.messageHandlers.hostKeys;

  function editing(element) {
    return element && (/^(INPUT|TEXTAREA|SELECT)$/.test(element.tagName) || element.isContentEditable);
  }

  function report(event) {
    if (!event.isTrusted) { return; }
    /* Once every listener, the page's included, has run. */
    setTimeout(function () {
      host.postMessage(JSON.stringify({ seen: event.type }));
      if (event.type !== 'keydown' || !REMOTE_KEYS[event.key] || event.defaultPrevented) { return; }
      var active = document.activeElement;
      var nothingFocused = !active || active === document.body || active === document.documentElement;
      if (event.key === 'Enter' && !nothingFocused) { return; }
      if (event.key !== 'Enter' && event.key !== 'Escape' && editing(active)) { return; }
      host.postMessage(JSON.stringify({ unhandled: event.key }));
    }, 0);
  }

  window.addEventListener('keydown', report, true);
  window.addEventListener('keyup', report, true);
})();
