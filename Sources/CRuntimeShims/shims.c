#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "CRuntimeShims.h"

int runtime_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

void runtime_set_thread_name(const char *name) {
    char short_name[16];
    strncpy(short_name, name, sizeof short_name - 1);
    short_name[sizeof short_name - 1] = '\0';
    pthread_setname_np(pthread_self(), short_name);
}

int runtime_set_thread_nice(int nice) {
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice);
}
