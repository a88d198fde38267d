/*
 * The remote in an overlay's page, run by the player before the page's own scripts (Chromium:
 * in the frame, with the IOS shim; WPE: in the overlay view's isolated script world, which the
 * page cannot see). The arrows move the focus between the page's controls by spatial.js's rule,
 * Enter is the engine's own activation (a click), and Back, or an arrow with nothing further
 * that way, hands the focus back to the TV page through leave(reason), which the engine's part
 * defines. The first control that is not a close button gets the focus when the overlay is
 * entered.
 */
var BACK_KEYS = { Escape: true, Backspace: true, BrowserBack: true, GoBack: true };

function focusFirst() {
  var all = InteractivedSpatial.focusables(document);
  var first = all.filter(function (element) {
    return !/close/i.test((element.getAttribute('aria-label') || '') + ' ' + element.className);
  })[0] || all[0];
  if (first) { first.focus(); }
}

function enter() {
  if (!document.activeElement || document.activeElement === document.body) { focusFirst(); }
}

window.addEventListener('focus', enter);
/* Entered before its page loaded (an overlay redrawn from a snapshot is revealed at once). */
document.addEventListener('DOMContentLoaded', function () { if (document.hasFocus()) { enter(); } });

window.addEventListener('keydown', function (event) {
  if (BACK_KEYS[event.key]) {
    var field = event.target && /^(INPUT|TEXTAREA)$/.test(event.target.tagName);
    if (event.key === 'Backspace' && field) { return; }
    event.preventDefault();
    leave('back');
    return;
  }
  if (!InteractivedSpatial.isArrow(event.key)) { return; }
  event.preventDefault();
  var current = document.activeElement;
  if (!current || current === document.body) { focusFirst(); return; }
  var target = InteractivedSpatial.next(current, event.key, InteractivedSpatial.focusables(document));
  if (target) { target.focus(); } else { leave(event.key); }
}, true);
