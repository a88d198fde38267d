#define _GNU_SOURCE
#include "CInteractiveShims.h"

#include <errno.h>
#include <grp.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/random.h>
#include <unistd.h>

int interactive_accept_nonblocking(int fd) {
    return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int interactive_stream_socketpair(int fds[2]) {
    return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds);
}

long interactive_getrandom(void *buffer, size_t length) {
    return (long)getrandom(buffer, length, 0);
}

int interactive_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid) {
    struct ucred cred;
    socklen_t length = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0) {
        return -errno;
    }
    *pid = cred.pid;
    *uid = cred.uid;
    *gid = cred.gid;
    return 0;
}

int interactive_peer_groups(int fd, gid_t *groups, int capacity) {
#ifdef SO_PEERGROUPS
    socklen_t length = (socklen_t)(sizeof(gid_t) * (size_t)capacity);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &length) != 0) {
        return -errno;
    }
    return (int)(length / sizeof(gid_t));
#else
    (void)fd; (void)groups; (void)capacity;
    return -ENOPROTOOPT;
#endif
}

int interactive_user_groups(const char *user, gid_t group, gid_t *groups, int capacity) {
    int count = capacity;
    if (getgrouplist(user, group, groups, &count) < 0) {
        return -1;
    }
    return count;
}

int interactive_release_free_memory(void) {
    return malloc_trim(0);
}

size_t interactive_free_heap_bytes(void) {
    return mallinfo2().fordblks;
}

int interactive_notify_nonblocking(const char *state) {
    const char *path = getenv("NOTIFY_SOCKET");
    if (path == NULL || path[0] == '\0') {
        return 0;
    }
    struct sockaddr_un address;
    memset(&address, 0, sizeof(address));
    address.sun_family = AF_UNIX;
    size_t length = strlen(path);
    if ((path[0] != '/' && path[0] != '@') || length >= sizeof(address.sun_path)) {
        return -EAFNOSUPPORT;
    }
    memcpy(address.sun_path, path, length);
    if (path[0] == '@') {
        address.sun_path[0] = '\0';  // abstract namespace: the name's exact length, no terminator
    } else {
        length += 1;
    }
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        return -errno;
    }
    ssize_t sent = sendto(fd, state, strlen(state), MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&address,
                          (socklen_t)(offsetof(struct sockaddr_un, sun_path) + length));
    int result = sent < 0 ? -errno : 1;
    close(fd);
    return result;
}
