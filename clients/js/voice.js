// The voice room (docs/ipc.md, "Voice rooms"): daemon.status's `voice` as a VoiceRoom, kept up
// to date with the voice.state, voice.peer and voice.talking events.

/** The prefix of the voice room's events, for `client.events({types})`. */
export const VOICE_EVENTS = 'voice.';

/** voice.state states in which the box is in the room or on its way there. */
const ACTIVE_STATES = new Set(['connecting', 'joined', 'reconnecting']);

function participantOf(value) {
  if (typeof value?.peerId !== 'string') return null;
  return {
    peerId: value.peerId,
    display: typeof value.display === 'string' ? value.display : null,
    muted: value.muted === true,
    talking: value.talking === true,
  };
}

/**
 * The voice room as daemon.status shows it (`voice`; also voice.join's result), then as the
 * events change it: `apply(type, data)` each voice.* event. `participants` are
 * `{peerId, display, muted, talking}`, this box (`peerId === selfId`) first when the daemon
 * lists it so. A voice.state carries only the number of participants: when it does not match
 * the list, `needsStatus` is true and the list is to be read again (`client.voiceStatus()`).
 */
export class VoiceRoom {
  constructor({ room, state, selfId = null, muted = false, participants = [], error = null }) {
    this.room = room;
    this.state = state;
    this.selfId = selfId;
    this.muted = muted;
    this.participants = participants;
    /** `{name, message}` in `error`. */
    this.error = error;
    /** Why the box is out: `left`, `kicked`, `replaced` (with `left`); with `closed`. */
    this.reason = null;
    /** A voice.state said a number of participants the list does not have. */
    this.needsStatus = false;
  }

  /** daemon.status's `voice` (or voice.join's result); null for null. */
  static fromStatus(voice) {
    if (typeof voice?.room !== 'string' || typeof voice.state !== 'string') return null;
    return new VoiceRoom({
      room: voice.room,
      state: voice.state,
      selfId: typeof voice.selfId === 'string' ? voice.selfId : null,
      muted: voice.muted === true,
      participants: (Array.isArray(voice.participants) ? voice.participants : []).map(participantOf).filter(Boolean),
      error: voice.error && typeof voice.error === 'object' ? voice.error : null,
    });
  }

  /** Whether the box is in the room now. */
  get joined() { return this.state === 'joined'; }

  /** In the room or on its way there. */
  get active() { return ACTIVE_STATES.has(this.state); }

  /** The participants other than this box who talk now (what lowers the programme). */
  get othersTalking() { return this.participants.filter((p) => p.talking && p.peerId !== this.selfId); }

  participant(peerId) { return this.participants.find((p) => p.peerId === peerId) ?? null; }

  /**
   * Applies a voice.state, voice.peer or voice.talking event's data; returns whether the room
   * changed. An event of another room is ignored, except a voice.state, which names the room now.
   */
  apply(type, data = {}) {
    if (type === 'voice.state') return this.#applyState(data);
    if (data.room !== this.room || typeof data.peerId !== 'string') return false;
    if (type === 'voice.peer') return this.#applyPeer(data);
    if (type === 'voice.talking' && typeof data.talking === 'boolean') {
      return this.#update(data.peerId, { talking: data.talking });
    }
    return false;
  }

  /** voice.mute's result `{room, muted}`: this box's mute in force. */
  applyMute(result) {
    if (result?.room !== this.room || typeof result.muted !== 'boolean') return;
    this.muted = result.muted;
    if (this.selfId !== null) this.#update(this.selfId, { muted: this.muted });
  }

  #applyState(data) {
    if (typeof data.room !== 'string' || typeof data.state !== 'string') return false;
    const before = JSON.stringify([this.room, this.state, this.selfId, this.muted, this.participants, this.error]);
    if (data.room !== this.room) this.participants = [];
    this.room = data.room;
    this.state = data.state;
    if (typeof data.selfId === 'string') this.selfId = data.selfId;
    this.muted = data.muted === true;
    this.error = data.error && typeof data.error === 'object' ? data.error : null;
    this.reason = typeof data.reason === 'string' ? data.reason : null;
    if (this.active) {
      if (this.selfId !== null) this.#update(this.selfId, { muted: this.muted });
      this.needsStatus = Number.isInteger(data.participants) && data.participants !== this.participants.length;
    } else {
      this.participants = [];
      this.needsStatus = false;
    }
    return before !== JSON.stringify([this.room, this.state, this.selfId, this.muted, this.participants, this.error]);
  }

  #applyPeer(data) {
    if (data.event === 'left') {
      const before = this.participants.length;
      this.participants = this.participants.filter((p) => p.peerId !== data.peerId);
      return this.participants.length !== before;
    }
    if (data.event !== 'joined' && data.event !== 'updated') return false;
    const display = typeof data.display === 'string' ? data.display : undefined;
    if (this.participant(data.peerId) === null) {
      this.participants.push({ peerId: data.peerId, display: display ?? null, muted: data.muted === true, talking: false });
      return true;
    }
    return this.#update(data.peerId, { display, muted: data.muted === true });
  }

  #update(peerId, changes) {
    const index = this.participants.findIndex((p) => p.peerId === peerId);
    if (index < 0) return false;
    const participant = this.participants[index];
    const changed = { ...participant };
    for (const [name, value] of Object.entries(changes)) {
      if (value !== undefined) changed[name] = value;
    }
    this.participants[index] = changed;
    return Object.keys(changed).some((name) => changed[name] !== participant[name]);
  }
}
