#define _GNU_SOURCE
#include "CSocketIOShims.h"
#include <pthread.h>

#include <sys/epoll.h>
#include <sys/eventfd.h>

int sio_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int sio_epoll_add(int epfd, int fd) {
    struct epoll_event event = {0};
    event.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    event.data.fd = fd;
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &event);
}

int sio_epoll_add_level_read(int epfd, int fd) {
    struct epoll_event event = {0};
    event.events = EPOLLIN;
    event.data.fd = fd;
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &event);
}

int sio_epoll_remove(int epfd, int fd) {
    struct epoll_event event = {0};
    return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, &event);
}

int sio_epoll_wait(int epfd, int *fds, unsigned *events, int max, int timeout_ms) {
    struct epoll_event ready[64];
    if (max > 64) max = 64;
    int count = epoll_wait(epfd, ready, max, timeout_ms);
    for (int i = 0; i < count; i++) {
        unsigned bits = 0;
        if (ready[i].events & (EPOLLIN | EPOLLRDHUP)) bits |= SIO_EV_READ;
        if (ready[i].events & EPOLLOUT) bits |= SIO_EV_WRITE;
        if (ready[i].events & (EPOLLERR | EPOLLHUP)) bits |= SIO_EV_ERROR;
        fds[i] = ready[i].data.fd;
        events[i] = bits;
    }
    return count;
}

int sio_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

void sio_set_thread_name(const char *name) { pthread_setname_np(pthread_self(), name); }

static __thread int on_reactor_thread;
void sio_mark_reactor_thread(void) { on_reactor_thread = 1; }
int sio_on_reactor_thread(void) { return on_reactor_thread; }
