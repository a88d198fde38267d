#ifndef CSOCKETIO_SHIMS_H
#define CSOCKETIO_SHIMS_H
/// epoll and eventfd (not exported by Swift's Glibc module; epoll_event is a packed union).
/// Events are SIO_EV_* bits.
enum {
    SIO_EV_READ = 1,
    SIO_EV_WRITE = 2,
    SIO_EV_ERROR = 4,
};
int sio_epoll_create(void);
/// Adds `fd` edge-triggered for reading and writing. Returns 0 on success, -1 with errno.
int sio_epoll_add(int epfd, int fd);
int sio_epoll_add_level_read(int epfd, int fd);
int sio_epoll_remove(int epfd, int fd);
/// Waits up to `timeout_ms` (-1: forever); fills `fds` and `events` (SIO_EV_* bits).
int sio_epoll_wait(int epfd, int *fds, unsigned *events, int max, int timeout_ms);
int sio_eventfd(void);
/// Names the calling thread (15 bytes at most; shown by ps, top and perf).
void sio_set_thread_name(const char *name);
/// Marks the calling thread as the reactor's; `sio_on_reactor_thread` tells whether the caller is it.
void sio_mark_reactor_thread(void);
int sio_on_reactor_thread(void);
#endif
