/*
 * The TV page, the same in both reference players. The player (playercore, through its engine)
 * calls window.tv.* with what the daemon said; the page reports what the viewer did: to the
 * WPE view's own `tv` script message handler where there is one, else through the DevTools
 * binding __tvReport (Chromium). Overlays sit in wrappers at the boxes the player computed from
 * their placement (percent of the screen, which is the video area): with their page in an
 * iframe (Chromium), or, with ?overlays=views, as a view of the engine's own above the page
 * (WPE), the wrapper then being where the remote's focus stops on the way in and out.
 * Episodes of play tickets play on the same video (the clip stands in for every stream), with
 * a time badge and a card for the other screen states (loading, paywall, a message with Retry);
 * with ?video=host the host plays it under the page (host-video.js) and the page is transparent.
 * The voice room's panel lists the participants, who is muted and who talks; the red key (or M)
 * asks the player to mute or unmute this box, and the player lowers the programme's volume
 * (setProgrammeVolume) while someone else talks.
 */
(function () {
  'use strict';
  var query = new URLSearchParams(window.location.search);
  var OVERLAY_VIEWS = query.get('overlays') === 'views';
  var HOST_VIDEO = query.get('video') === 'host';
  var tvHandler = window.webkit && window.webkit.messageHandlers && window.webkit.messageHandlers.tv;
  var video = HOST_VIDEO ? new InteractivedHostVideo(function (command) {
    command.event = 'video';
    report(command);
  }) : document.getElementById('video');
  if (HOST_VIDEO) {
    document.documentElement.classList.add('host-video');
    document.getElementById('video').remove();
  }
  var overlays = document.getElementById('overlays');
  var buttons = document.getElementById('buttons');
  var controls = document.getElementById('controls');
  var playpause = document.getElementById('playpause');
  var dialog = document.getElementById('dialog');
  var toastBox = document.getElementById('toast');
  var BACK_KEYS = { Escape: true, Backspace: true, BrowserBack: true, GoBack: true };
  /* The remote's red key (XF86Red: ColorF0Red in both engines), or M on a keyboard. */
  var MUTE_KEYS = { ColorF0Red: true, m: true, M: true };
  var voicePanel = document.getElementById('voice');
  var voiceView = null, volumeRamp = null;
  /* What an overlay's page may do: run its scripts, keep its own origin (its storage, its
     requests to its own server), send forms. Not navigate the TV page (no allow-top-navigation),
     open windows or dialogs, download, or lock the pointer. */
  var FRAME_SANDBOX = 'allow-scripts allow-same-origin allow-forms';
  var dialogCancel = null, toastTimer = null;
  var playback = document.getElementById('playback');
  var playbackTime = document.getElementById('playback-time');
  var playbackNote = document.getElementById('playback-note');
  var card = document.getElementById('playback-card');
  var retry = document.getElementById('playback-retry');
  var episode = null, noteTimer = null;
  var enteredOverlay = null;  // with OVERLAY_VIEWS: the overlay whose view has the remote's focus

  function report(message) {
    var text = JSON.stringify(message);
    if (tvHandler) {
      tvHandler.postMessage(text);
    } else if (typeof window.__tvReport === 'function') {
      window.__tvReport(text);
    }
  }

  if (!HOST_VIDEO && query.get('video')) { video.src = query.get('video'); }
  video.addEventListener('playing', function () { report({ event: 'player.state', state: 'playing' }); });
  video.addEventListener('pause', function () { report({ event: 'player.state', state: 'paused' }); });
  video.addEventListener('waiting', function () { report({ event: 'player.state', state: 'buffering' }); });
  video.addEventListener('ended', function () { report({ event: 'player.state', state: 'ended' }); });
  playpause.addEventListener('click', function () {
    if (video.paused) { video.play(); } else { video.pause(); }
  });
  video.addEventListener('play', function () { playpause.innerHTML = '&#10074;&#10074;'; });
  video.addEventListener('pause', function () { playpause.innerHTML = '&#9654;'; });
  setInterval(function () {
    document.getElementById('clock').textContent = new Date().toLocaleTimeString('en-GB');
  }, 500);

  /* Episodes. The clip loops while no episode plays (live TV); an episode plays once from its
     startAt and reports its end. */
  function pad(number) { return (number < 10 ? '0' : '') + number; }

  /* mm:ss.t */
  function clockText(seconds) {
    var tenths = Math.max(0, Math.floor((Number(seconds) || 0) * 10));
    return pad(Math.floor(tenths / 600)) + ':' + pad(Math.floor(tenths / 10) % 60) + '.' + (tenths % 10);
  }

  function showTime() {
    if (!episode) { return; }
    playbackTime.textContent = clockText(video.currentTime) +
      (isFinite(video.duration) ? ' / ' + clockText(video.duration) : '');
  }

  function note(text, seconds) {
    playbackNote.textContent = text;
    playbackNote.hidden = !text;
    clearTimeout(noteTimer);
    if (seconds) { noteTimer = setTimeout(function () { playbackNote.hidden = true; }, seconds * 1000); }
  }

  function seekTo(seconds) {
    return new Promise(function (done) {
      var timer = setTimeout(done, 3000);
      video.addEventListener('seeked', function () { clearTimeout(timer); done(); }, { once: true });
      video.currentTime = seconds;
    });
  }

  /* playback.play: {vid, filmId, episodeNo, startAt, subtitles}. Seeks to startAt and, unless
     `start` is false (then playVideo starts it), plays; resolves with the position. */
  function playEpisode(spec, start) {
    episode = spec;
    video.loop = false;
    playback.hidden = false;
    var subtitles = (spec.subtitles || []).length ? ' \u00b7 subtitles ' + spec.subtitles.join(', ') : '';
    document.getElementById('playback-title').textContent =
      spec.filmId + ' \u00b7 episode ' + spec.episodeNo + ' \u00b7 ' + spec.vid + subtitles;
    var startAt = Math.max(0, Number(spec.startAt) || 0);
    note(startAt > 0 ? 'Resumed at ' + clockText(startAt) + ' with a fresh ticket' : 'Playing from the start', 8);
    return seekTo(startAt).then(function () {
      showTime();
      return start === false ? video.currentTime : playVideo();
    });
  }

  function playVideo() {
    var from = video.currentTime;
    return video.play().catch(function () { return null; }).then(function () {
      if (episode) { episode.playedFrom = from; }
      showTime();
      return from;
    });
  }

  /* The platform refused the stream: the video stops; its position is what the player reports. */
  function streamRefused(reason) {
    video.pause();
    var position = video.currentTime;
    showTime();
    note(reason + ' at ' + clockText(position) + ': asking for a fresh ticket');
    return position;
  }

  function setPreloaded(vids) {
    document.getElementById('playback-next').textContent = vids.length ? 'preloaded: ' + vids.join(', ') : '';
  }

  var CARDS = {
    loading: function (data) { return ['Loading episode ' + data.episodeNo, data.filmId]; },
    paywall: function (data) {
      return ['Subscribers only', 'Episode ' + data.episodeNo + ' of ' + data.filmId +
              ' is part of the subscription. Subscribe to watch it.'];
    },
    message: function (data) { return [data.text || 'Something went wrong', data.filmId + ', episode ' + data.episodeNo]; }
  };

  /* playback.state: {state, filmId, episodeNo, text, canRetry}. */
  function setPlaybackState(data) {
    var make = CARDS[data.state];
    playback.dataset.state = data.state || '';
    if (!make) {  // playing
      var hadFocus = retry === document.activeElement;
      card.hidden = true;
      if (hadFocus) { focusDefault(); }
      return;
    }
    var text = make(data);
    card.dataset.state = data.state;
    document.getElementById('playback-card-title').textContent = text[0];
    document.getElementById('playback-card-text').textContent = text[1];
    document.getElementById('playback-spinner').hidden = data.state !== 'loading';
    retry.hidden = !(data.state === 'message' && data.canRetry === true);
    card.hidden = false;
    if (data.state !== 'loading') { video.pause(); }
    if (!retry.hidden && dialog.hidden) {
      takeFocus();
      retry.focus();
    } else if (retry.hidden && document.activeElement === retry) {
      focusDefault();
    }
  }

  retry.addEventListener('click', function () { report({ event: 'action', name: 'playback.retry' }); });
  video.addEventListener('ended', function () { if (episode) { report({ event: 'playback.ended' }); } });
  video.addEventListener('seeked', showTime);
  setInterval(showTime, 100);
  document.addEventListener('visibilitychange', function () {
    if (!document.hidden && episode) { report({ event: 'playback.foreground', position: video.currentTime }); }
  });

  function wrapperOf(overlayId) {
    return Array.prototype.filter.call(overlays.children, function (element) {
      return element.dataset.overlay === overlayId;
    })[0] || null;
  }

  /* Loads an overlay hidden and transparent at box ({left, top, width, height} in percent of
     the screen: playercore.placement); the player reports attached/rendered. */
  function showOverlay(overlay, box) {
    removeOverlay(overlay.overlayId);
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
    if (!OVERLAY_VIEWS) {
      var frame = document.createElement('iframe');
      frame.name = overlay.overlayId;
      frame.setAttribute('allowtransparency', 'true');
      frame.setAttribute('sandbox', FRAME_SANDBOX);
      frame.src = overlay.url;
      wrapper.appendChild(frame);
    }
    overlays.appendChild(wrapper);
  }

  /* Shows a loaded overlay and gives it the remote's focus. */
  function revealOverlay(overlayId) {
    var wrapper = wrapperOf(overlayId);
    if (!wrapper) { return false; }
    wrapper.dataset.revealed = 'true';
    overlaysChanged();
    if (dialog.hidden) { enterOverlay(wrapper); }
    return true;
  }

  /* With OVERLAY_VIEWS this page is one view above the overlays' views, so its controls would
     cover an overlay at the bottom: they stay hidden while an overlay is revealed (where the
     frames are in this page, the overlays are above the controls). */
  function overlaysChanged() {
    if (OVERLAY_VIEWS) {
      document.body.classList.toggle('overlay-revealed', !!overlays.querySelector('.overlay[data-revealed="true"]'));
    }
  }

  /* The remote's focus into the overlay: its frame, or (OVERLAY_VIEWS) its view. */
  function enterOverlay(wrapper) {
    if (OVERLAY_VIEWS) {
      if (document.activeElement && document.activeElement !== document.body) { document.activeElement.blur(); }
      enteredOverlay = wrapper.dataset.overlay;
      report({ event: 'focus', overlayId: enteredOverlay });
      return;
    }
    var frame = wrapper.querySelector('iframe');
    if (frame) { frame.focus(); }
  }

  /* The remote's focus to this page (from an overlay's frame or view). */
  function takeFocus() {
    window.focus();
    if (OVERLAY_VIEWS) {
      enteredOverlay = null;
      report({ event: 'focus', overlayId: null });
    }
  }

  function removeOverlay(overlayId) {
    var wrapper = wrapperOf(overlayId);
    if (!wrapper) { return false; }
    var hadFocus = wrapper.contains(document.activeElement) || enteredOverlay === overlayId;
    if (enteredOverlay === overlayId) { enteredOverlay = null; }
    wrapper.remove();
    overlaysChanged();
    if (hadFocus) { focusDefault(); }
    return true;
  }

  /* The remote's focus left an overlay frame (Back, or an arrow with nothing beyond). */
  function focusOverlayWrapper(overlayId, reason) {
    var wrapper = wrapperOf(overlayId);
    if (!wrapper) { return; }
    takeFocus();
    wrapper.focus();
    if (reason && reason !== 'back') { move(reason); }
  }

  /* The voice room: {room, state, muted, participants: [{peerId, display, muted, talking, self}]},
     or null for no panel. */
  function setVoice(view) {
    voiceView = view;
    voicePanel.hidden = !view;
    if (!view) { return; }
    document.getElementById('voice-room').textContent =
      view.room + (view.state === 'reconnecting' ? ' \u00b7 reconnecting\u2026' : '');
    var list = document.getElementById('voice-participants');
    list.textContent = '';
    view.participants.forEach(function (participant) {
      var row = document.createElement('li');
      row.className = 'voice-participant';
      row.dataset.peer = participant.peerId;
      row.dataset.talking = String(participant.talking);
      row.dataset.muted = String(participant.muted);
      var name = voiceSpan('voice-name', participant.display);
      if (participant.self) { name.appendChild(voiceSpan('voice-you', ' (you)')); }
      row.appendChild(voiceSpan('voice-level', ''));
      row.appendChild(name);
      if (participant.muted) { row.appendChild(voiceSpan('voice-muted', 'muted')); }
      list.appendChild(row);
    });
    var hint = document.getElementById('voice-hint');
    hint.textContent = '';
    hint.appendChild(voiceSpan('voice-key', ''));
    hint.appendChild(document.createTextNode(view.muted ? 'Unmute' : 'Mute'));
  }

  function voiceSpan(className, text) {
    var span = document.createElement('span');
    span.className = className;
    span.textContent = text;
    return span;
  }

  /* The programme's volume to `level` (0-1) in a straight ramp over `rampMs`, after `delayMs`;
     a new call replaces a ramp under way. */
  function setProgrammeVolume(level, rampMs, delayMs) {
    clearTimeout(volumeRamp);
    var target = Math.min(1, Math.max(0, Number(level)));
    var step = 40;
    function ramp() {
      var from = video.volume, started = performance.now(), span = Math.max(0, Number(rampMs) || 0);
      (function tick() {
        var done = span === 0 ? 1 : Math.min(1, (performance.now() - started) / span);
        video.volume = done === 1 ? target : from + (target - from) * done;
        if (done < 1) { volumeRamp = setTimeout(tick, step); }
      })();
    }
    volumeRamp = setTimeout(ramp, Math.max(0, Number(delayMs) || 0));
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

  /* A modal dialog: {title, text, buttons: [{label, action}], focus, cancel}: the button at index
     `focus` (default 0) has the focus first; actions are reported. */
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
    takeFocus();
    (row.children[spec.focus || 0] || row.firstChild).focus();
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

  /* Focus goes to the revealed overlay when there is one, else to Retry, else to the controls. */
  function focusDefault() {
    if (!dialog.hidden) { return; }
    var revealed = overlays.querySelector('.overlay[data-revealed="true"]');
    if (revealed) { enterOverlay(revealed); return; }
    takeFocus();
    (!card.hidden && !retry.hidden ? retry : buttons.firstChild || playpause).focus();
  }

  /* "frame:ID" inside an overlay, "overlay:ID" on its wrapper, else the element's id or text. */
  function describeFocus() {
    if (enteredOverlay) { return 'frame:' + enteredOverlay; }
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
    } else if (MUTE_KEYS[event.key] && voiceView) {
      event.preventDefault();
      report({ event: 'action', name: 'voice.mute' });
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
    focusOverlayWrapper: focusOverlayWrapper, setControls: setControls, setVoice: setVoice,
    setProgrammeVolume: setProgrammeVolume,
    setPredictButton: setPredictButton, showDialog: showDialog, closeDialog: closeDialog,
    toast: toast, focusDefault: focusDefault, playEpisode: playEpisode, playVideo: playVideo,
    streamRefused: streamRefused,
    /* The host's video news (?video=host): see host-video.js. */
    hostVideo: function (news) { if (HOST_VIDEO) { video.update(news); } },
    setPreloaded: setPreloaded, setPlaybackState: setPlaybackState,
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
        playing: !video.paused,
        volume: video.volume,
        voice: voicePanel.hidden ? null : {
          room: voiceView.room, state: voiceView.state, muted: voiceView.muted,
          hint: document.getElementById('voice-hint').textContent,
          participants: Array.prototype.map.call(document.getElementById('voice-participants').children, function (row) {
            return { peerId: row.dataset.peer, display: row.querySelector('.voice-name').firstChild.textContent,
                     muted: row.dataset.muted === 'true', talking: row.dataset.talking === 'true',
                     self: !!row.querySelector('.voice-you') };
          })
        },
        playback: {
          vid: episode ? episode.vid : null, state: playback.dataset.state || null, time: video.currentTime,
          playedFrom: episode && episode.playedFrom !== undefined ? episode.playedFrom : null,
          card: card.hidden ? null : document.getElementById('playback-card-title').textContent,
          retry: !card.hidden && !retry.hidden, note: playbackNote.hidden ? null : playbackNote.textContent,
          preloaded: document.getElementById('playback-next').textContent
        }
      };
    }
  };
  focusDefault();
  report({ event: 'ready' });
})();
