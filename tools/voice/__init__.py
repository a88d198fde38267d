"""The voice lab: Janus' AudioBridge in a network namespace, aiortc peers, and a driver for the
media process `interactived-voice` (README.md)."""
