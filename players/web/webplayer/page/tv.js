/*
 * The TV page. The player (Python, over the DevTools protocol) calls window.tv.* with what the
 * daemon said; the page reports what the viewer did through the DevTools binding __tvReport.
 * Overlays are frames in wrappers placed by their placement (location 0-8 row-major from the
 * top-left, width and height in percent of the video area, which is the whole screen).
 */
(function () {
  'use strict';
  var video = document.getElementById('video');
  var overlays = document.getElementById('overlays');
  var buttons = document.getElementById('buttons');
  var controls = document.getElementById('controls');
  var playpause = document.getElementById('playpause');
  var dialog = document.getElementById('dialog');
  var toastBox = document.getElementById('toast');
  var BACK_KEYS = { Escape: true, Backspace: true, BrowserBack: true, GoBack: true };
  var dialogCancel = null, toastTimer = null;

  function report(message) {
    if (typeof window.__tvReport === 'function') { window.__tvReport(JSON.stringify(message)); }
  }

  var query = new URLSearchParams(window.location.search);
  if (query.get('video')) { video.src = query.get('video'); }
  video.addEventListener('playing', function () { report({ event: 'player.state', state: 'playing' }); });
  video.addEventListener('pause', function () { report({ event: 'player.state', state: 'paused' }); });
  playpause.addEventListener('click', function () {
    if (video.paused) { video.play(); } else { video.pause(); }
  });
  video.addEventListener('play', function () { playpause.innerHTML = '&#10074;&#10074;'; });
  video.addEventListener('pause', function () { playpause.innerHTML = '&#9654;'; });
  setInterval(function () {
    document.getElementById('clock').textContent = new Date().toLocaleTimeString('en-GB');
  }, 500);

  function wrapperOf(overlayId) {
    return Array.prototype.filter.call(overlays.children, function (element) {
      return element.dataset.overlay === overlayId;
    })[0] || null;
  }

  function clampPct(value) { return Math.min(100, Math.max(0, Number(value) || 0)); }

  /* Left/top/width/height in percent of the screen for a placement. */
  function geometry(placement) {
    var location = Math.min(8, Math.max(0, Math.floor(Number(placement.location) || 0)));
    var width = clampPct(placement.widthPct), height = clampPct(placement.heightPct);
    var column = location % 3, row = Math.floor(location / 3);
    return { left: column * (100 - width) / 2, top: row * (100 - height) / 2, width: width, height: height };
  }

  /* Loads an overlay hidden and transparent; the player reports attached/rendered. */
  function showOverlay(overlay) {
    removeOverlay(overlay.overlayId);
    var box = geometry(overlay.placement || {});
    var wrapper = document.createElement('div');
    wrapper.className = 'overlay';
    wrapper.dataset.overlay = overlay.overlayId;
    wrapper.dataset.kind = overlay.kind || '';
    wrapper.dataset.revealed = 'false';
    wrapper.tabIndex = 0;
    wrapper.style.left = box.left + '%';
    wrapper.style.top = box.top + '%';
    wrapper.style.width = box.width + '%';
    wrapper.style.height = box.height + '%';
    var frame = document.createElement('iframe');
    frame.name = overlay.overlayId;
    frame.setAttribute('allowtransparency', 'true');
    frame.src = overlay.url;
    wrapper.appendChild(frame);
    overlays.appendChild(wrapper);
  }

  /* Shows a loaded overlay and gives it the remote's focus. */
  function revealOverlay(overlayId) {
    var wrapper = wrapperOf(overlayId);
    if (!wrapper) { return false; }
    wrapper.dataset.revealed = 'true';
    if (dialog.hidden) { enterOverlay(wrapper); }
    return true;
  }

  function enterOverlay(wrapper) {
    var frame = wrapper.querySelector('iframe');
    if (frame) { frame.focus(); }
  }

  function removeOverlay(overlayId) {
    var wrapper = wrapperOf(overlayId);
    if (!wrapper) { return false; }
    var hadFocus = wrapper.contains(document.activeElement);
    wrapper.remove();
    if (hadFocus) { focusDefault(); }
    return true;
  }

  /* The remote's focus left an overlay frame (Back, or an arrow with nothing beyond). */
  function focusOverlayWrapper(overlayId, reason) {
    var wrapper = wrapperOf(overlayId);
    if (!wrapper) { return; }
    window.focus();
    wrapper.focus();
    if (reason && reason !== 'back') { move(reason); }
  }

  function setControls(visible) { controls.classList.toggle('hidden', !visible); }

  /* A predict/lucky button per timeline: its image (idle or power) and opacity; hidden ones go. */
  function setPredictButton(button) {
    var element = buttons.querySelector('[data-timeline="' + CSS.escape(button.timelineId || '') + '"]');
    if (!button.visible) {
      if (element) {
        var hadFocus = element === document.activeElement;
        element.remove();
        if (hadFocus) { focusDefault(); }
      }
      return;
    }
    if (!element) {
      element = document.createElement('button');
      element.className = 'predict';
      element.dataset.timeline = button.timelineId || '';
      element.appendChild(document.createElement('img'));
      element.addEventListener('click', function () {
        report({ event: 'action', name: 'predict.open', data: { timelineId: element.dataset.timeline } });
      });
      buttons.appendChild(element);
    }
    element.dataset.kind = button.kind || '';
    element.dataset.image = button.image || 'idle';
    element.style.opacity = String(button.opacity === undefined ? 1 : button.opacity);
    var source = button.image === 'power' ? button.imagePower : button.imageIdle;
    var image = element.querySelector('img');
    if (source && image.getAttribute('src') !== source) { image.src = source; }
    image.alt = (button.kind || 'predict') + ' (' + element.dataset.image + ')';
  }

  /* A modal dialog: {title, text, buttons: [{label, action}], cancel}; actions are reported. */
  function showDialog(spec) {
    document.getElementById('dialog-title').textContent = spec.title || '';
    document.getElementById('dialog-text').textContent = spec.text || '';
    var row = document.getElementById('dialog-buttons');
    row.textContent = '';
    (spec.buttons || [{ label: 'OK' }]).forEach(function (button) {
      var element = document.createElement('button');
      element.textContent = button.label;
      element.addEventListener('click', function () { closeDialog(button.action); });
      row.appendChild(element);
    });
    dialogCancel = spec.cancel || null;
    dialog.hidden = false;
    window.focus();
    row.firstChild.focus();
  }

  function closeDialog(action) {
    if (dialog.hidden) { return; }
    dialog.hidden = true;
    if (action) { report({ event: 'action', name: action.name, data: action.data || {} }); }
    focusDefault();
  }

  function toast(text, seconds) {
    toastBox.textContent = text;
    toastBox.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(function () { toastBox.hidden = true; }, (seconds || 4) * 1000);
  }

  /* Focus goes to the revealed overlay when there is one, else to the controls. */
  function focusDefault() {
    if (!dialog.hidden) { return; }
    var revealed = overlays.querySelector('.overlay[data-revealed="true"]');
    if (revealed) { enterOverlay(revealed); return; }
    window.focus();
    (buttons.firstChild || playpause).focus();
  }

  /* "frame:ID" inside an overlay, "overlay:ID" on its wrapper, else the element's id or text. */
  function describeFocus() {
    var element = document.activeElement;
    if (!element || element === document.body) { return null; }
    if (element.tagName === 'IFRAME') { return 'frame:' + element.name; }
    if (element.classList.contains('overlay')) { return 'overlay:' + element.dataset.overlay; }
    return element.id || element.textContent;
  }

  function focusScope() { return dialog.hidden ? document : dialog; }

  function move(key) {
    var candidates = InteractivedSpatial.focusables(focusScope());
    var current = document.activeElement;
    if (!current || current === document.body || candidates.indexOf(current) < 0) {
      if (candidates[0]) { candidates[0].focus(); }
      return;
    }
    var target = InteractivedSpatial.next(current, key, candidates);
    if (target) { target.focus(); }
  }

  window.addEventListener('keydown', function (event) {
    if (InteractivedSpatial.isArrow(event.key)) {
      event.preventDefault();
      move(event.key);
    } else if (event.key === 'Enter' && document.activeElement &&
               document.activeElement.classList.contains('overlay')) {
      event.preventDefault();
      enterOverlay(document.activeElement);
    } else if (BACK_KEYS[event.key]) {
      event.preventDefault();
      if (!dialog.hidden) {
        closeDialog(dialogCancel);
      } else if (document.activeElement && document.activeElement.classList.contains('overlay')) {
        report({ event: 'action', name: 'overlay.dismiss', data: { overlayId: document.activeElement.dataset.overlay } });
      }
    }
  });

  window.tv = {
    showOverlay: showOverlay, revealOverlay: revealOverlay, removeOverlay: removeOverlay,
    focusOverlayWrapper: focusOverlayWrapper, setControls: setControls,
    setPredictButton: setPredictButton, showDialog: showDialog, closeDialog: closeDialog,
    toast: toast, focusDefault: focusDefault,
    /* Where a predict/lucky button is on screen: [left, top, width, height], or null. */
    buttonBox: function (timelineId) {
      var element = buttons.querySelector('[data-timeline="' + CSS.escape(timelineId) + '"]');
      if (!element) { return null; }
      var box = element.getBoundingClientRect();
      return [box.left, box.top, box.width, box.height];
    },
    /* What tests and screenshots need to know: the frames and the focus. */
    state: function () {
      return {
        overlays: Array.prototype.map.call(overlays.children, function (wrapper) {
          var box = wrapper.getBoundingClientRect();
          return { overlayId: wrapper.dataset.overlay, revealed: wrapper.dataset.revealed === 'true',
                   box: [box.left, box.top, box.width, box.height] };
        }),
        controls: !controls.classList.contains('hidden'),
        buttons: Array.prototype.map.call(buttons.children, function (button) {
          return { timelineId: button.dataset.timeline, kind: button.dataset.kind, image: button.dataset.image,
                   opacity: Number(button.style.opacity), src: button.querySelector('img').getAttribute('src') };
        }),
        dialog: dialog.hidden ? null : document.getElementById('dialog-title').textContent,
        focus: describeFocus(),
        playing: !video.paused
      };
    }
  };
  focusDefault();
  report({ event: 'ready' });
})();
