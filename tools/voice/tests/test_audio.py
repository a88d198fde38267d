"""The lab's own audio: its sources and the spectrum checks the room tests rely on."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tools.voice.audio import FRAME_SAMPLES, RATE, ToneTrack, WavTrack, rms_dbfs, tone_level, tones_present


def sine(frequency: float, seconds: float, amplitude: float = 0.5) -> np.ndarray:
    return amplitude * np.sin(2 * np.pi * frequency * np.arange(int(seconds * RATE)) / RATE)


def test_a_tone_is_present_and_the_others_absent() -> None:
    mix = sine(500, 1.5) + sine(700, 1.5) + 0.001 * np.random.default_rng(1).standard_normal(int(1.5 * RATE))
    assert tone_level(mix, 500) > -4 and tone_level(mix, 700) > -4
    assert tone_level(mix, 1100) < -40
    assert tones_present(mix, [500, 700, 1100]) == {500: True, 700: True, 1100: False}


def test_silence_and_too_little_audio_have_no_tone() -> None:
    assert tone_level(np.zeros(RATE), 500) == float("-inf")
    assert tone_level(sine(500, 0.05), 500) == float("-inf")
    assert rms_dbfs(np.zeros(10)) == float("-inf")
    assert round(rms_dbfs(sine(500, 1, 1.0)), 1) == -3.0


def test_a_tone_track_alternates_tone_and_silence() -> None:
    track = ToneTrack(1000, amplitude=0.5, on=0.1, off=0.1)
    frames = [asyncio.run(track.recv()) for _ in range(10)]  # 200 ms
    samples = np.concatenate([frame.to_ndarray().reshape(-1) for frame in frames]).astype(float) / 32768
    assert len(samples) == 10 * FRAME_SAMPLES
    assert rms_dbfs(samples[: RATE // 10]) > -10
    assert rms_dbfs(samples[RATE // 10:]) == float("-inf")


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")
def test_a_wav_track_plays_espeak_speech(tmp_path: Path) -> None:
    speech = tmp_path / "hello.wav"
    subprocess.run(["espeak-ng", "-w", str(speech), "Hello from the living room"], check=True, timeout=30)
    track = WavTrack(str(speech))
    frame = asyncio.run(track.recv())
    assert frame.sample_rate == RATE and frame.samples == FRAME_SAMPLES
    assert rms_dbfs(track.data) > -40
