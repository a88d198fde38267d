/* The host's operations its parts share (host.h): events, views, focus, input, damage. */
#include "host.h"

#include "protocol.h"
#include "view.h"

#include <xkbcommon/xkbcommon.h>

void host_emit(Host *host, const char *name, JsonObject *fields)
{
    JsonObject *event = json_object_new();
    json_object_set_string_member(event, "event", name);
    if (fields) {
        JsonObjectIter iter;
        const char *member;
        JsonNode *node;
        json_object_iter_init(&iter, fields);
        while (json_object_iter_next(&iter, &member, &node))
            json_object_set_member(event, member, json_node_copy(node));
        json_object_unref(fields);
    }
    protocol_send(host->protocol, event);
    json_object_unref(event);
}

void host_quit(Host *host)
{
    host->quitting = TRUE;
    g_main_loop_quit(host->loop);
}

HostView *host_view(Host *host, const char *view_id)
{
    return view_id ? g_hash_table_lookup(host->by_id, view_id) : NULL;
}

void host_destroy_view(Host *host, HostView *view)
{
    if (host->focused == view)
        host->focused = NULL;
    g_hash_table_remove(host->by_id, view->id);
    g_ptr_array_remove(host->views, view);
    view_free(view);
    host_damage(host);
}

void host_focus(Host *host, HostView *view)
{
    if (host->focused == view)
        return;
    if (host->focused)
        view_set_focused(host->focused, FALSE);
    host->focused = view;
    if (view)
        view_set_focused(view, TRUE);
}

HostView *host_key(Host *host, guint32 keysym, guint32 hardware_key_code, gboolean pressed)
{
    if (host->focused) {
        view_key(host->focused, keysym, hardware_key_code, pressed, NULL, NULL);
        return host->focused;
    }
    if (pressed) {
        char name[64];
        JsonObject *fields = json_object_new();
        json_object_set_null_member(fields, "viewId");
        json_object_set_string_member(fields, "key", xkb_keysym_get_name(keysym, name, sizeof name) > 0 ? name : "");
        host_emit(host, "key-unhandled", fields);
    }
    return NULL;
}

HostView *host_click(Host *host, int x, int y, guint button)
{
    HostView *target = NULL;
    for (guint i = 0; i < host->views->len; i++) {
        HostView *view = g_ptr_array_index(host->views, i);
        if (!view->visible || x < view->x || y < view->y || x >= view->x + view->width
            || y >= view->y + view->height || !view_painted_at(view, x - view->x, y - view->y))
            continue;
        if (!target || view->z > target->z || (view->z == target->z && view->order > target->order))
            target = view;
    }
    if (target)
        view_click(target, x - target->x, y - target->y, button);
    return target;
}

void host_damage(Host *host)
{
    host->damaged = TRUE;
}

WebKitWebView *host_create_automation_view(Host *host)
{
    char *id = g_strdup_printf("automation-%" G_GUINT64_FORMAT, host->created);
    ViewOptions options = {
        .kind = VIEW_OVERLAY,
        .width = host->width,
        .height = host->height,
        .visible = TRUE,
        .background = { 1, 1, 1, 1 },
        .controlled_by_automation = TRUE,
    };
    for (guint i = 0; i < host->views->len; i++)
        options.z = MAX(options.z, ((HostView *) g_ptr_array_index(host->views, i))->z + 1);
    HostView *view = view_new(host, id, &options);
    g_free(id);
    g_ptr_array_add(host->views, view);
    g_hash_table_insert(host->by_id, view->id, view);
    host_focus(host, view);
    JsonObject *fields = json_object_new();
    json_object_set_string_member(fields, "viewId", view->id);
    json_object_set_boolean_member(fields, "automation", TRUE);
    host_emit(host, "view-created", fields);
    return view->web_view;
}
