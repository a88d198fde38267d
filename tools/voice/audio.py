"""Audio for the lab: sources an aiortc peer sends (a tone, a tone that alternates with silence,
a WAV file such as espeak-ng speech), a recorder of what it receives, and the spectrum checks
the tests make (which tones are present over a window of a second or more)."""

from __future__ import annotations

import asyncio
import fractions
import time
import wave
from dataclasses import dataclass, field
from typing import Optional

import av
import numpy as np
from aiortc import MediaStreamTrack
from aiortc.mediastreams import MediaStreamError

RATE = 48_000
FRAME_SAMPLES = 960  # 20 ms


class PacedAudioTrack(MediaStreamTrack):
    """An audio track that hands aiortc one 20 ms frame of ``samples(start, count)`` in real time."""

    kind = "audio"

    def __init__(self) -> None:
        super().__init__()
        self._sent = 0
        self._started: Optional[float] = None

    def samples(self, start: int, count: int) -> np.ndarray:
        raise NotImplementedError

    async def recv(self) -> av.AudioFrame:
        if self.readyState != "live":
            raise MediaStreamError
        if self._started is None:
            self._started = time.monotonic()
        due = self._started + self._sent / RATE
        delay = due - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        pcm = np.clip(self.samples(self._sent, FRAME_SAMPLES) * 32767, -32768, 32767).astype(np.int16)
        frame = av.AudioFrame.from_ndarray(pcm.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = RATE
        frame.pts = self._sent
        frame.time_base = fractions.Fraction(1, RATE)
        self._sent += FRAME_SAMPLES
        return frame


class ToneTrack(PacedAudioTrack):
    """A sine of ``frequency`` Hz at ``amplitude`` (of full scale). With ``on``/``off`` (seconds)
    it alternates: ``on`` seconds of tone, then ``off`` of silence."""

    def __init__(self, frequency: float, amplitude: float = 0.5, on: Optional[float] = None, off: Optional[float] = None) -> None:
        super().__init__()
        self.frequency = frequency
        self.amplitude = amplitude
        self.on = on
        self.off = off

    def samples(self, start: int, count: int) -> np.ndarray:
        index = np.arange(start, start + count)
        wave_ = self.amplitude * np.sin(2 * np.pi * self.frequency * index / RATE)
        if self.on is not None and self.off is not None:
            period = self.on + self.off
            wave_ = np.where((index / RATE) % period < self.on, wave_, 0.0)
        return wave_


class WavTrack(PacedAudioTrack):
    """A mono 16-bit WAV file (e.g. ``espeak-ng -w``), resampled to 48 kHz, looped."""

    def __init__(self, path: str) -> None:
        super().__init__()
        with wave.open(path, "rb") as file:
            if file.getsampwidth() != 2:
                raise ValueError(f"{path}: only 16-bit WAV files are supported")
            rate, channels = file.getframerate(), file.getnchannels()
            data = np.frombuffer(file.readframes(file.getnframes()), dtype=np.int16).astype(np.float64) / 32768
        if channels > 1:
            data = data.reshape(-1, channels).mean(axis=1)
        if rate != RATE:
            positions = np.arange(0, len(data) * RATE / rate) * rate / RATE
            data = np.interp(positions, np.arange(len(data)), data)
        self.data = data if len(data) else np.zeros(FRAME_SAMPLES)

    def samples(self, start: int, count: int) -> np.ndarray:
        return self.data[np.arange(start, start + count) % len(self.data)]


@dataclass
class Recording:
    """What a peer received: mono samples at 48 kHz, and when each frame arrived."""

    chunks: list[np.ndarray] = field(default_factory=list)
    arrivals: list[float] = field(default_factory=list)

    def add(self, samples: np.ndarray) -> None:
        self.chunks.append(samples)
        self.arrivals.append(time.monotonic())

    def samples(self) -> np.ndarray:
        return np.concatenate(self.chunks) if self.chunks else np.zeros(0)

    def last(self, seconds: float) -> np.ndarray:
        """The newest ``seconds`` of audio (less if less arrived)."""
        return self.samples()[-int(seconds * RATE):]

    def since(self, instant: float) -> np.ndarray:
        """The audio of the frames that arrived at or after ``instant`` (time.monotonic())."""
        picked = [chunk for chunk, arrival in zip(self.chunks, self.arrivals) if arrival >= instant]
        return np.concatenate(picked) if picked else np.zeros(0)


async def record(track: MediaStreamTrack, into: Recording) -> None:
    """Reads ``track`` until it ends, appending every frame, downmixed to mono and resampled to 48 kHz."""
    resampler = av.AudioResampler(format="s16", layout="mono", rate=RATE)
    while True:
        try:
            frame = await track.recv()
        except MediaStreamError:
            return
        for converted in resampler.resample(frame):
            into.add(converted.to_ndarray().reshape(-1).astype(np.float64) / 32768)


def write_alternating_wav(path: str, frequency: float, on: float, off: float, cycles: int) -> None:
    """``cycles`` of ``on`` seconds of tone at half scale and ``off`` seconds of silence, 48 kHz
    mono 16-bit: a source that talks and stops talking (``filesrc ... ! wavparse``)."""
    period = np.arange(int((on + off) * RATE))
    tone = np.where(period < on * RATE, 0.5 * np.sin(2 * np.pi * frequency * period / RATE), 0.0)
    samples = (np.tile(tone, cycles) * 32767).astype("<i2")
    with wave.open(path, "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(RATE)
        file.writeframes(samples.tobytes())


def read_raw(path: str, seconds: Optional[float] = None) -> np.ndarray:
    """A file of raw S16LE mono 48 kHz samples (what the media process's test sink writes): all
    of it, or its last ``seconds``."""
    data = np.fromfile(path, dtype="<i2").astype(np.float64) / 32768
    return data if seconds is None else data[-int(seconds * RATE):]


def tone_level(samples: np.ndarray, frequency: float, rate: int = RATE, width: float = 20.0) -> float:
    """The share of the power of ``samples`` within ``width`` Hz of ``frequency``, in dB (0: all
    of it; a tone among two equal ones: about -3; absent: below -40, or -inf for silence).
    Over all of ``samples``, with a Hann window."""
    if len(samples) < rate // 10:
        return float("-inf")
    power = np.abs(np.fft.rfft(samples * np.hanning(len(samples)))) ** 2
    total = power.sum()
    if total <= 0:
        return float("-inf")
    bins = np.fft.rfftfreq(len(samples), 1 / rate)
    band = power[(bins >= frequency - width) & (bins <= frequency + width)].sum()
    return float(10 * np.log10(band / total)) if band > 0 else float("-inf")


def tones_present(samples: np.ndarray, frequencies: list[float], rate: int = RATE, threshold_db: float = -15.0) -> dict[float, bool]:
    """For each frequency, whether at least ``threshold_db`` of the power is within 20 Hz of it."""
    return {frequency: tone_level(samples, frequency, rate) >= threshold_db for frequency in frequencies}


def rms_dbfs(samples: np.ndarray) -> float:
    """The RMS level of ``samples`` in dB of full scale (-inf for digital silence or nothing)."""
    if len(samples) == 0:
        return float("-inf")
    rms = float(np.sqrt(np.mean(samples ** 2)))
    return 20 * np.log10(rms) if rms > 0 else float("-inf")
