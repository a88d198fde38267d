"""The WPE WebKit engine of the reference player: playercore's Engine over wpe-host (../host)."""
