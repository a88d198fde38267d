/*
 * --automation: WPEWebDriver may drive the host's views. WebDriver starts the host itself
 * (with WEBKIT_INSPECTOR_SERVER set), so the control channel is then a socket
 * (--control-socket). Each browsing context WebDriver asks for is a new visible view,
 * reported as view-created; views made with create-view are automation-controlled too.
 */
#ifndef WPE_HOST_AUTOMATION_H
#define WPE_HOST_AUTOMATION_H

#include "host.h"

void automation_enable(Host *host);

#endif
