/*
 * Injected by the Chromium player into every overlay frame before the page's own scripts run
 * (wrapped in one function with spatial.js and overlay-remote.js, so that they add nothing to
 * the page's globals but the IOS object). It installs the iOS SDK's bridge object,
 * window.webkit.messageHandlers.IOS, whose postMessage forwards the template's message to the
 * player through the DevTools binding __interactivedBridge; leave() hands the remote's focus
 * back to the TV page the same way.
 */
if (window === window.top) { return; }

var BINDING = '__interactivedBridge';

function send(payload) {
  var binding = window[BINDING];
  if (typeof binding === 'function') { binding(JSON.stringify(payload)); }
}

var IOS = {
  postMessage: function (message) {
    send({ kind: 'post', message: typeof message === 'string' ? message : JSON.stringify(message) });
  }
};
window.webkit = window.webkit || {};
window.webkit.messageHandlers = window.webkit.messageHandlers || {};
window.webkit.messageHandlers.IOS = IOS;

function leave(reason) { send({ kind: 'leave', reason: reason }); }
