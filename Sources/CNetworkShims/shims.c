#include "CNetworkShims.h"
#include <openssl/x509v3.h>

int net_ssl_ctx_set_min_tls12(SSL_CTX *ctx) {
    return (int)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
}

int net_ssl_set_sni(SSL *ssl, const char *host) {
    return (int)SSL_set_tlsext_host_name(ssl, host);
}

void net_ssl_ctx_set_modes(SSL_CTX *ctx) {
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
}

int net_ssl_set_verify_host(SSL *ssl, const char *host, int is_ip) {
    if (is_ip) {
        X509_VERIFY_PARAM *param = SSL_get0_param(ssl);
        return X509_VERIFY_PARAM_set1_ip_asc(param, host);
    }
    SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    return SSL_set1_host(ssl, host);
}
