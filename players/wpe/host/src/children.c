#include "children.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The parent pid and state from /proc/PID/stat ("pid (comm) S ppid ..."; comm may hold spaces). */
static gboolean read_stat(pid_t pid, pid_t *parent, char *state)
{
    char path[64];
    g_snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
    char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
        return FALSE;
    const char *end = strrchr(text, ')');
    gboolean parsed = FALSE;
    if (end) {
        char status = 0;
        int ppid = 0;
        if (sscanf(end + 1, " %c %d", &status, &ppid) == 2) {
            *parent = (pid_t) ppid;
            *state = status;
            parsed = TRUE;
        }
    }
    g_free(text);
    return parsed;
}

GArray *children_list(void)
{
    GArray *all = g_array_new(FALSE, FALSE, sizeof(pid_t) * 2);
    GDir *proc = g_dir_open("/proc", 0, NULL);
    const char *name;
    while (proc && (name = g_dir_read_name(proc))) {
        char *end = NULL;
        long pid = strtol(name, &end, 10);
        pid_t parent;
        char state;
        if (*end == '\0' && pid > 0 && read_stat((pid_t) pid, &parent, &state)) {
            pid_t pair[2] = { (pid_t) pid, parent };
            g_array_append_val(all, pair);
        }
    }
    if (proc)
        g_dir_close(proc);
    GArray *descendants = g_array_new(FALSE, FALSE, sizeof(pid_t));
    pid_t self = getpid();
    g_array_append_val(descendants, self);
    for (guint known = 0; known < descendants->len; known++) {
        pid_t ancestor = g_array_index(descendants, pid_t, known);
        for (guint i = 0; i < all->len; i++) {
            pid_t *pair = &g_array_index(all, pid_t, i * 2);
            if (pair[1] == ancestor)
                g_array_append_val(descendants, pair[0]);
        }
    }
    g_array_free(all, TRUE);
    g_array_remove_index(descendants, 0);
    return descendants;
}

/* Whether `pid` still runs; a zombie child is reaped here (GLib's watch may be gone). */
static gboolean alive(pid_t pid)
{
    pid_t parent;
    char state;
    if (!read_stat(pid, &parent, &state))
        return FALSE;
    if (state == 'Z') {
        if (parent == getpid())
            waitpid(pid, NULL, WNOHANG);
        return FALSE;
    }
    return TRUE;
}

static guint wait_for(GArray *pids, gint64 deadline)
{
    guint left;
    do {
        left = 0;
        for (guint i = 0; i < pids->len; i++)
            left += alive(g_array_index(pids, pid_t, i));
        if (left == 0 || g_get_monotonic_time() >= deadline)
            break;
        while (g_main_context_iteration(NULL, FALSE))
            ;
        g_usleep(10 * 1000);
    } while (TRUE);
    return left;
}

static void signal_all(GArray *pids, int signal_number)
{
    for (guint i = 0; i < pids->len; i++) {
        pid_t pid = g_array_index(pids, pid_t, i);
        if (alive(pid))
            kill(pid, signal_number);
    }
}

guint children_end(guint grace_ms)
{
    GArray *pids = children_list();
    gint64 grace = (gint64) grace_ms * 1000;
    guint signalled = wait_for(pids, g_get_monotonic_time() + grace);
    if (signalled > 0) {
        signal_all(pids, SIGTERM);
        if (wait_for(pids, g_get_monotonic_time() + grace) > 0) {
            signal_all(pids, SIGKILL);
            wait_for(pids, g_get_monotonic_time() + grace);
        }
    }
    g_array_free(pids, TRUE);
    return signalled;
}
