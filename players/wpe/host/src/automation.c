#include "automation.h"

static WebKitWebView *on_create_web_view(WebKitAutomationSession *session, gpointer data)
{
    (void) session;
    return host_create_automation_view(data);
}

static void on_automation_started(WebKitWebContext *context, WebKitAutomationSession *session, gpointer data)
{
    Host *host = data;
    (void) context;
    WebKitApplicationInfo *info = webkit_application_info_new();
    webkit_application_info_set_name(info, "wpe-host");
    webkit_application_info_set_version(info, 1, 0, 0);
    webkit_automation_session_set_application_info(session, info);
    webkit_application_info_unref(info);
    g_signal_connect(session, "create-web-view", G_CALLBACK(on_create_web_view), host);
    JsonObject *fields = json_object_new();
    json_object_set_string_member(fields, "sessionId", webkit_automation_session_get_id(session));
    host_emit(host, "automation-started", fields);
}

void automation_enable(Host *host)
{
    webkit_web_context_set_automation_allowed(host->context, TRUE);
    g_signal_connect(host->context, "automation-started", G_CALLBACK(on_automation_started), host);
}
