/*
 * The processes the host started (WebKit's web and network processes, and whatever they
 * started): found in /proc by parent, so that the host exits only once they are gone.
 */
#ifndef WPE_HOST_CHILDREN_H
#define WPE_HOST_CHILDREN_H

#include <glib.h>
#include <sys/types.h>

/* The pids of every live descendant of this process. */
GArray *children_list(void);

/*
 * Waits up to `grace_ms` for every descendant to exit (iterating the main context, so WebKit
 * sees its connections close), then sends SIGTERM to the ones left, and SIGKILL to any still
 * there after as long again. Zombies are reaped. Returns how many had to be signalled.
 */
guint children_end(guint grace_ms);

#endif
