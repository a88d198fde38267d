/*
 * Injected by the player into every overlay frame before the page's own scripts run (it is
 * wrapped in a function together with spatial.js). It installs the iOS SDK's bridge object,
 * window.webkit.messageHandlers.IOS, whose postMessage forwards the template's message to the
 * player through the DevTools binding __interactivedBridge, and drives the frame with the
 * remote: arrows move the focus, Enter activates (the browser's own behaviour), Back returns
 * the focus to the TV page.
 */
if (window === window.top) { return; }

var BINDING = '__interactivedBridge';
var BACK_KEYS = { Escape: true, Backspace: true, BrowserBack: true, GoBack: true };

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

/* The first control that is not a close button gets the focus when the frame is entered. */
function focusFirst() {
  var all = InteractivedSpatial.focusables(document);
  var first = all.filter(function (element) {
    return !/close/i.test((element.getAttribute('aria-label') || '') + ' ' + element.className);
  })[0] || all[0];
  if (first) { first.focus(); }
}

window.addEventListener('focus', function () {
  if (!document.activeElement || document.activeElement === document.body) { focusFirst(); }
});

window.addEventListener('keydown', function (event) {
  if (BACK_KEYS[event.key]) {
    var field = event.target && /^(INPUT|TEXTAREA)$/.test(event.target.tagName);
    if (event.key === 'Backspace' && field) { return; }
    event.preventDefault();
    send({ kind: 'leave', reason: 'back' });
    return;
  }
  if (!InteractivedSpatial.isArrow(event.key)) { return; }
  event.preventDefault();
  var current = document.activeElement;
  if (!current || current === document.body) { focusFirst(); return; }
  var target = InteractivedSpatial.next(current, event.key, InteractivedSpatial.focusables(document));
  if (target) { target.focus(); } else { send({ kind: 'leave', reason: event.key }); }
}, true);
