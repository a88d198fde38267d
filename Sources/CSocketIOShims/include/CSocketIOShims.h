#ifndef CSOCKETIO_SHIMS_H
#define CSOCKETIO_SHIMS_H
#include <openssl/ssl.h>

/// SSL_CTX_set_min_proto_version (a macro). Returns 1 on success.
int sio_ssl_ctx_set_min_tls12(SSL_CTX *ctx);
/// SSL_set_tlsext_host_name (a macro): the SNI host name. Returns 1 on success.
int sio_ssl_set_sni(SSL *ssl, const char *host);
/// SSL_CTX_set_mode (a macro) with partial writes and moving write buffers allowed.
void sio_ssl_ctx_set_modes(SSL_CTX *ctx);
/// Verification of the peer against `host`: a DNS name (SSL_set1_host) or an IP literal
/// (X509_VERIFY_PARAM_set1_ip_asc). Returns 1 on success.
int sio_ssl_set_verify_host(SSL *ssl, const char *host, int is_ip);

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
