/*
 * Remote keys by name. The protocol's `key` takes an XKB keysym name ("Left", "Return",
 * "Escape", "XF86Back", "BackSpace", "a", ...) or one of the DOM-style names a remote's
 * driver is usually described with: ArrowUp/Down/Left/Right, Enter, Back (XF86Back, which
 * WebKit reports to the page as "BrowserBack"), Escape, Backspace.
 */
#ifndef WPE_HOST_KEYS_H
#define WPE_HOST_KEYS_H

#include <glib.h>

/* The keysym and the hardware key code (from libwpe's default keymap, 0 if none) for `name`. */
gboolean keys_lookup(const char *name, guint32 *keysym, guint32 *hardware_key_code);

#endif
