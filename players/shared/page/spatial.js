/*
 * Spatial navigation for a remote control, shared by the TV page (tv.js) and the shim that the
 * player injects into every overlay frame (shim.js): the arrow keys move the focus to the
 * nearest focusable element in that direction.
 */
var InteractivedSpatial = (function () {
  'use strict';
  var SELECTOR = 'button, a[href], input, select, textarea, [tabindex]';
  var DIRECTIONS = { ArrowUp: [0, -1], ArrowDown: [0, 1], ArrowLeft: [-1, 0], ArrowRight: [1, 0] };

  function visible(element) {
    if (element.disabled || element.getAttribute('tabindex') === '-1') { return false; }
    if (element.closest('[hidden]')) { return false; }
    var style = window.getComputedStyle(element);
    if (style.visibility === 'hidden' || style.display === 'none') { return false; }
    var box = element.getBoundingClientRect();
    return box.width > 0 && box.height > 0;
  }

  /* The focusable, visible elements under root (a document or an element). */
  function focusables(root) {
    return Array.prototype.filter.call(root.querySelectorAll(SELECTOR), visible);
  }

  function centre(element) {
    var box = element.getBoundingClientRect();
    return { x: box.left + box.width / 2, y: box.top + box.height / 2 };
  }

  /* The candidate nearest to `from` in the direction of `key`, or null. */
  function next(from, key, candidates) {
    var direction = DIRECTIONS[key];
    if (!direction) { return null; }
    var origin = centre(from), best = null, bestScore = Infinity;
    candidates.forEach(function (candidate) {
      if (candidate === from) { return; }
      var c = centre(candidate), dx = c.x - origin.x, dy = c.y - origin.y;
      var along = dx * direction[0] + dy * direction[1];
      var across = Math.abs(dx * direction[1] + dy * direction[0]);
      if (along <= 0) { return; }
      var score = along + 2 * across;
      if (score < bestScore) { bestScore = score; best = candidate; }
    });
    return best;
  }

  return { focusables: focusables, next: next, isArrow: function (key) { return key in DIRECTIONS; } };
})();
