/*
 * The TV page's video when the player's host draws it under the page (the WPE player, whose
 * compositor puts GStreamer's picture under every view): the part of an HTMLVideoElement that
 * tv.js uses (currentTime, duration, paused, loop, play, pause and their events), over the
 * host's video. Commands go to the player with send({command: 'play' | 'pause' | 'seek',
 * position, loop}); the host's news comes back through update({event: 'playing' | 'paused' |
 * 'seeked' | 'ended' | 'error' | 'status', position, duration, state, looped}). Between two
 * updates the position runs on with the page's clock while playing. `volume` (0-1, what the
 * voice room's ducking sets) is the page's: the host decodes the picture only.
 */
var InteractivedHostVideo = (function () {
  'use strict';
  var PLAY_TIMEOUT_MS = 5000;

  function now() { return performance.now() / 1000; }

  class HostVideo extends EventTarget {
    constructor(send) {
      super();
      this._send = send;
      this._position = 0;
      this._since = now();
      this._duration = NaN;
      this._paused = true;
      this._loop = true;
      this._volume = 1;
      this._plays = [];
    }

    get paused() { return this._paused; }
    get duration() { return this._duration; }
    get loop() { return this._loop; }
    get volume() { return this._volume; }
    set volume(value) {
      this._volume = Math.min(1, Math.max(0, Number(value) || 0));
      this.dispatchEvent(new Event('volumechange'));
    }
    set loop(value) { this._loop = Boolean(value); }

    get currentTime() {
      var position = this._position + (this._paused ? 0 : now() - this._since);
      return isFinite(this._duration) ? Math.min(position, this._duration) : position;
    }

    /* A seek: 'seeked' follows once the host shows the frame there. */
    set currentTime(seconds) {
      this._at(Math.max(0, Number(seconds) || 0));
      this._send({ command: 'seek', position: this._position, loop: this._loop });
    }

    play() {
      var video = this;
      var started = new Promise(function (resolve, reject) {
        var timer = setTimeout(function () {
          video._plays = video._plays.filter(function (entry) { return entry.resolve !== resolve; });
          reject(new Error('the video did not start within ' + PLAY_TIMEOUT_MS + ' ms'));
        }, PLAY_TIMEOUT_MS);
        video._plays.push({ resolve: resolve, timer: timer });
      });
      if (this._paused) {
        this.dispatchEvent(new Event('play'));
        this._send({ command: 'play' });
      } else {
        this._started();
      }
      return started;
    }

    pause() {
      if (this._paused) { return; }
      this._at(this.currentTime);
      this._paused = true;
      this._send({ command: 'pause' });
      this.dispatchEvent(new Event('pause'));
    }

    /* What the host said (through the player). */
    update(news) {
      if (isFinite(Number(news.duration)) && Number(news.duration) > 0) { this._duration = Number(news.duration); }
      if (typeof news.position === 'number') { this._at(news.position); }
      var wasPaused = this._paused;
      switch (news.event) {
        case 'playing':
          this._paused = false;
          if (wasPaused) { this.dispatchEvent(new Event('play')); }
          this.dispatchEvent(new Event('playing'));
          this._started();
          break;
        case 'paused':
          this._paused = true;
          if (!wasPaused) { this.dispatchEvent(new Event('pause')); }
          break;
        case 'seeked':
          this.dispatchEvent(new Event('seeked'));
          break;
        case 'ended':
          if (news.looped) { this._at(0); break; }
          this._paused = true;
          if (isFinite(this._duration)) { this._at(this._duration); }
          this.dispatchEvent(new Event('pause'));
          this.dispatchEvent(new Event('ended'));
          break;
        case 'error':
          this._paused = true;
          this.dispatchEvent(new Event('error'));
          break;
        case 'status':
          this._paused = news.state !== 'playing';
          if (!this._paused) { this._started(); }
          break;
      }
    }

    _at(position) {
      this._position = position;
      this._since = now();
    }

    _started() {
      this._plays.splice(0).forEach(function (entry) {
        clearTimeout(entry.timer);
        entry.resolve();
      });
    }
  }

  return HostVideo;
})();
