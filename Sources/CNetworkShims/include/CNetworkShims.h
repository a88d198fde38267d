#ifndef C_NETWORK_SHIMS_H
#define C_NETWORK_SHIMS_H
#include <openssl/ssl.h>

/// SSL_CTX_set_min_proto_version (a macro). Returns 1 on success.
int net_ssl_ctx_set_min_tls12(SSL_CTX *ctx);
/// SSL_set_tlsext_host_name (a macro): the SNI host name. Returns 1 on success.
int net_ssl_set_sni(SSL *ssl, const char *host);
/// SSL_CTX_set_mode (a macro) with partial writes and moving write buffers allowed.
void net_ssl_ctx_set_modes(SSL_CTX *ctx);
/// Verification of the peer against `host`: a DNS name (SSL_set1_host) or an IP literal
/// (X509_VERIFY_PARAM_set1_ip_asc). Returns 1 on success.
int net_ssl_set_verify_host(SSL *ssl, const char *host, int is_ip);
#endif
