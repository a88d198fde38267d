#ifndef C_INTERACTIVE_SHIMS_H
#define C_INTERACTIVE_SHIMS_H

#include <sys/types.h>
#include <sys/socket.h>
#include <stddef.h>

/// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC (a GNU extension Swift's Glibc does not show).
int interactive_accept_nonblocking(int fd);

/// socketpair(2) of AF_UNIX stream sockets with SOCK_CLOEXEC: 0, or -1 with errno.
int interactive_stream_socketpair(int fds[2]);

/// getrandom(2): fills `buffer`; returns the byte count or -1.
long interactive_getrandom(void *buffer, size_t length);

/// The credentials of the peer of a connected Unix socket (SO_PEERCRED). Returns 0 or -errno.
int interactive_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);

/// The supplementary groups of the peer (SO_PEERGROUPS). Returns the number of groups written to
/// `groups` (at most `capacity`), or -errno (-ENOPROTOOPT where the kernel lacks SO_PEERGROUPS).
int interactive_peer_groups(int fd, gid_t *groups, int capacity);

/// The groups of `user` with primary group `group` (getgrouplist). Returns the count written, or -1.
int interactive_user_groups(const char *user, gid_t group, gid_t *groups, int capacity);

/// Sends `state` to the service manager's $NOTIFY_SOCKET (a path or an abstract "@name") without
/// ever blocking: a full queue drops the message. Returns 1 when sent, 0 without $NOTIFY_SOCKET,
/// or -errno (-EAGAIN: the queue is full).
int interactive_notify_nonblocking(const char *state);

#endif

/// Installs handlers for `signals` that write each signal's number (one byte) to a non-blocking
/// pipe, unblocks them in the calling thread, and returns the pipe's read end (or -errno).
int interactive_signal_pipe(const int *signals, int count);


/// Returns freed heap memory to the kernel (glibc's malloc_trim(0), declared in <malloc.h>,
/// which Swift's Glibc module does not import); 1 when memory was released.
int interactive_release_free_memory(void);

/// Bytes of the heap that are free but still held by the process (mallinfo2's fordblks).
size_t interactive_free_heap_bytes(void);

