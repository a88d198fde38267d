"""The reference web player: interactived's events rendered by Chromium (DevTools protocol)."""
