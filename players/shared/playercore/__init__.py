"""What interactived's reference players share, whatever their web engine: the daemon session
and its events, each overlay's life, placement, the bridge budget, dialogs, play tickets,
screenshots and the demo autopilot. An engine (players/web: Chromium over DevTools; players/wpe:
WPE WebKit over wpe-host) implements :class:`playercore.engine.Engine`."""
