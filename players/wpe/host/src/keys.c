#include "keys.h"

#include <stdlib.h>
#include <string.h>
#include <wpe/wpe.h>
#include <xkbcommon/xkbcommon.h>

static const struct {
    const char *alias;
    const char *keysym_name;
} aliases[] = {
    { "ArrowUp", "Up" },          { "ArrowDown", "Down" },    { "ArrowLeft", "Left" },
    { "ArrowRight", "Right" },    { "Enter", "Return" },      { "Back", "XF86Back" },
    { "BrowserBack", "XF86Back" }, { "Backspace", "BackSpace" }, { "ColorF0Red", "XF86Red" },
};

static guint32 hardware_code_for(guint32 keysym)
{
    struct wpe_input_xkb_keymap_entry *entries = NULL;
    uint32_t count = 0;
    wpe_input_xkb_context_get_entries_for_key_code(wpe_input_xkb_context_get_default(), keysym, &entries, &count);
    guint32 code = count > 0 ? entries[0].hardware_key_code : 0;
    free(entries);
    return code;
}

gboolean keys_lookup(const char *name, guint32 *keysym, guint32 *hardware_key_code)
{
    const char *keysym_name = name;
    for (gsize i = 0; i < G_N_ELEMENTS(aliases); i++) {
        if (strcmp(name, aliases[i].alias) == 0)
            keysym_name = aliases[i].keysym_name;
    }
    xkb_keysym_t symbol = xkb_keysym_from_name(keysym_name, XKB_KEYSYM_NO_FLAGS);
    if (symbol == XKB_KEY_NoSymbol)
        symbol = xkb_keysym_from_name(keysym_name, XKB_KEYSYM_CASE_INSENSITIVE);
    if (symbol == XKB_KEY_NoSymbol)
        return FALSE;
    *keysym = symbol;
    *hardware_key_code = hardware_code_for(symbol);
    return TRUE;
}
