#ifndef C_RUNTIME_SHIMS_H
#define C_RUNTIME_SHIMS_H

#include <sys/epoll.h>

/// An eventfd (close-on-exec, non-blocking) for waking the event loop; -1 with errno on failure.
int runtime_eventfd(void);

/// Names the calling thread (at most 15 bytes are kept, as the kernel allows).
void runtime_set_thread_name(const char *name);

/// Sets the calling thread's nice value; 0 on success, -1 with errno (e.g. a seccomp filter).
int runtime_set_thread_nice(int nice);

#endif
