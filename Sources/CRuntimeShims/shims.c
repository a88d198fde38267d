#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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

int runtime_spawn(const char *path, char *const argv[], char *const envp[], const int *sources, const int *targets,
                  int count, int null_stdin, pid_t *pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int error = posix_spawn_file_actions_init(&actions);
    if (error != 0) return error;
    error = posix_spawnattr_init(&attributes);
    if (error != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return error;
    }
    if (null_stdin) error = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    int highest = 2;
    for (int i = 0; i < count && error == 0; i++) {
        // A dup2 onto the same number clears close-on-exec too (glibc 2.29 and later).
        error = posix_spawn_file_actions_adddup2(&actions, sources[i], targets[i]);
        if (targets[i] > highest) highest = targets[i];
    }
    if (error == 0) error = posix_spawn_file_actions_addclosefrom_np(&actions, highest + 1);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    if (error == 0) error = posix_spawnattr_setsigmask(&attributes, &none);
    if (error == 0) error = posix_spawnattr_setsigdefault(&attributes, &all);
    if (error == 0) error = posix_spawnattr_setpgroup(&attributes, 0);
    if (error == 0) error = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    if (error == 0) error = posix_spawn(pid, path, &actions, &attributes, argv, envp);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return error;
}

int runtime_pidfd_open(pid_t pid) {
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0) return -1;
    // pidfd_open's only flag (PIDFD_NONBLOCK) needs Linux 5.10; O_NONBLOCK is what it sets.
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int runtime_pidfd_send_signal(int pidfd, int signal) {
    return (int)syscall(SYS_pidfd_send_signal, pidfd, signal, NULL, 0);
}

int runtime_reap(pid_t pid, int block, int *exited, int *code) {
    int status = 0;
    pid_t result;
    do {
        result = waitpid(pid, &status, block ? 0 : WNOHANG);
    } while (result < 0 && errno == EINTR);
    if (result < 0) return -1;
    if (result == 0) return 0;
    *exited = WIFEXITED(status) ? 1 : 0;
    *code = WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status);
    return 1;
}
