/*
 * Bridge between an overlay template and its host, shared by quiz.html, predict.html and
 * lucky.html.
 *
 * Template -> host: post(type, data) sends JSON.stringify({type, data}) to the first of
 *   1. window.webkit.messageHandlers.IOS.postMessage   (the iOS SDK's handler name),
 *   2. window.interactiveBridge.postMessage            (a host that injects this object),
 *   3. window.parent.postMessage(message, '*')         (the page is in an iframe),
 *   4. console.log                                     (opened on its own in a browser).
 * Host -> template: the host calls window.postMessage(JSON.stringify({key, data}), '*');
 * onHostMessage({KEY: fn}) calls fn(data) for each known key.
 */
(function () {
  'use strict';

  function post(type, data) {
    var message = JSON.stringify({ type: type, data: data === undefined ? {} : data });
    var handlers = window.webkit && window.webkit.messageHandlers;
    if (handlers && handlers.IOS && typeof handlers.IOS.postMessage === 'function') {
      handlers.IOS.postMessage(message);
    } else if (window.interactiveBridge &&
               typeof window.interactiveBridge.postMessage === 'function') {
      window.interactiveBridge.postMessage(message);
    } else if (window.parent && window.parent !== window) {
      window.parent.postMessage(message, '*');
    } else {
      console.log('[interactive bridge] ' + message);
    }
  }

  function onHostMessage(handlers) {
    window.addEventListener('message', function (event) {
      var message = event.data;
      if (typeof message === 'string') {
        try { message = JSON.parse(message); } catch (e) { return; }
      }
      if (!message || typeof message.key !== 'string') { return; }
      var handler = handlers[message.key];
      if (handler) { handler(message.data || {}); }
    });
  }

  // URL parameters the daemon adds: logged=true|false, duration=<s>, fanclub=false; the
  // scenario adds id=<timelineId> and optional texts.
  function params() {
    var query = new URLSearchParams(window.location.search);
    return {
      id: query.get('id') || '',
      logged: query.get('logged') !== 'false',
      fanclub: query.get('fanclub') !== 'false',
      duration: Math.max(0, parseInt(query.get('duration') || '0', 10) || 0),
      text: function (name, fallback) { return query.get(name) || fallback; }
    };
  }

  // Counts down `seconds` in `element`; calls done() at zero. No-op for 0 (no time limit).
  function countdown(seconds, element, done) {
    if (!seconds) { element.hidden = true; return; }
    var left = seconds;
    element.textContent = left + ' s';
    var timer = setInterval(function () {
      left -= 1;
      element.textContent = Math.max(left, 0) + ' s';
      if (left <= 0) { clearInterval(timer); done(); }
    }, 1000);
  }

  function show(element, text) {
    element.textContent = text;
    element.hidden = false;
  }

  window.InteractiveTemplate = {
    post: post, onHostMessage: onHostMessage, params: params, countdown: countdown, show: show
  };
})();
