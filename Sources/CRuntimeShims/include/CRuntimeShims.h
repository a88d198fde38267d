#ifndef C_RUNTIME_SHIMS_H
#define C_RUNTIME_SHIMS_H

#include <sys/epoll.h>
#include <sys/types.h>

/// An eventfd (close-on-exec, non-blocking) for waking the event loop; -1 with errno on failure.
int runtime_eventfd(void);

/// Names the calling thread (at most 15 bytes are kept, as the kernel allows).
void runtime_set_thread_name(const char *name);

/// Sets the calling thread's nice value; 0 on success, -1 with errno (e.g. a seccomp filter).
int runtime_set_thread_nice(int nice);

/// Starts `path` with posix_spawn: `argv` and `envp` NULL-terminated; descriptor `sources[i]` of
/// the caller becomes `targets[i]` in the child (close-on-exec cleared), every other descriptor
/// above 2 and the targets is closed, standard input is /dev/null when `null_stdin`, the signal
/// mask is empty and every signal has its default action, and the child leads a process group
/// of its own. 0 and `*pid`, or an errno value.
int runtime_spawn(const char *path, char *const argv[], char *const envp[], const int *sources, const int *targets,
                  int count, int null_stdin, pid_t *pid);

/// pidfd_open(2): a close-on-exec, non-blocking descriptor that becomes readable when `pid`
/// exits; -1 with errno (ENOSYS before Linux 5.3).
int runtime_pidfd_open(pid_t pid);

/// pidfd_send_signal(2): sends `signal` to the process of `pidfd` (never to a reused pid).
int runtime_pidfd_send_signal(int pidfd, int signal);

/// Reaps `pid` if it ended (`block`: waits until it does): 1 with `*exited` (1: exited, 0:
/// killed by a signal) and `*code` (its status or the signal), 0 when it still runs, -1 with errno.
int runtime_reap(pid_t pid, int block, int *exited, int *code);

#endif
