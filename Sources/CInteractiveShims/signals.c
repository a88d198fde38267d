#define _GNU_SOURCE
#include "CInteractiveShims.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

static int signal_write_fd = -1;

static void on_signal(int number) {
    int saved = errno;
    unsigned char byte = (unsigned char)number;
    (void)write(signal_write_fd, &byte, 1);
    errno = saved;
}

int interactive_signal_pipe(const int *signals, int count) {
    int fds[2];
    if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) return -errno;
    signal_write_fd = fds[1];
    sigset_t unblock;
    sigemptyset(&unblock);
    for (int i = 0; i < count; i++) {
        struct sigaction action;
        memset(&action, 0, sizeof(action));
        action.sa_handler = on_signal;
        action.sa_flags = SA_RESTART;
        sigemptyset(&action.sa_mask);
        if (sigaction(signals[i], &action, NULL) != 0) return -errno;
        sigaddset(&unblock, signals[i]);
    }
    pthread_sigmask(SIG_UNBLOCK, &unblock, NULL);
    return fds[0];
}
