#include "CInteractiveShims.h"

#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

// libcurl is loaded on the first REST call, not at start: it brings some 27 libraries (TLS,
// Kerberos, LDAP, ...) that an idle daemon has no use for.
static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    void (*easy_cleanup)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} curl;
static int curl_loaded;
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_load_once(void) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return;
    *(void **)&curl.global_init = dlsym(library, "curl_global_init");
    *(void **)&curl.easy_init = dlsym(library, "curl_easy_init");
    *(void **)&curl.easy_setopt = dlsym(library, "curl_easy_setopt");
    *(void **)&curl.easy_perform = dlsym(library, "curl_easy_perform");
    *(void **)&curl.easy_getinfo = dlsym(library, "curl_easy_getinfo");
    *(void **)&curl.easy_cleanup = dlsym(library, "curl_easy_cleanup");
    *(void **)&curl.easy_strerror = dlsym(library, "curl_easy_strerror");
    *(void **)&curl.slist_append = dlsym(library, "curl_slist_append");
    *(void **)&curl.slist_free_all = dlsym(library, "curl_slist_free_all");
    if (!curl.global_init || !curl.easy_init || !curl.easy_setopt || !curl.easy_perform || !curl.easy_getinfo ||
        !curl.easy_cleanup || !curl.easy_strerror || !curl.slist_append || !curl.slist_free_all) return;
    if (curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return;
    curl_loaded = 1;
}

/// Bodies larger than this are refused (a REST reply is small JSON).
#define MAX_BODY (16u << 20)

static size_t collect(char *data, size_t size, size_t count, void *user) {
    interactive_http_response *response = user;
    size_t length = size * count;
    if (response->body_length + length > MAX_BODY) return 0;
    char *grown = realloc(response->body, response->body_length + length + 1);
    if (grown == NULL) return 0;
    memcpy(grown + response->body_length, data, length);
    response->body = grown;
    response->body_length += length;
    grown[response->body_length] = 0;
    return length;
}

void interactive_http_perform(const char *method, const char *url, const char *headers,
                              const void *body, size_t body_length, long timeout_ms, const char *ca_file,
                              int insecure, interactive_http_response *response) {
    memset(response, 0, sizeof(*response));
    pthread_once(&curl_once, curl_load_once);
    if (!curl_loaded) {
        response->curl_code = CURLE_FAILED_INIT;
        strncpy(response->error, "libcurl (libcurl.so.4) cannot be loaded", sizeof(response->error) - 1);
        return;
    }
    CURL *handle = curl.easy_init();
    if (handle == NULL) {
        response->curl_code = CURLE_FAILED_INIT;
        strncpy(response->error, "cannot initialise libcurl", sizeof(response->error) - 1);
        return;
    }
    struct curl_slist *list = NULL;
    char *lines = strdup(headers != NULL ? headers : "");
    char *save = NULL;
    for (char *line = strtok_r(lines, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        list = curl.slist_append(list, line);
    }
    free(lines);
    char error[CURL_ERROR_SIZE] = {0};
    curl.easy_setopt(handle, CURLOPT_URL, url);
    curl.easy_setopt(handle, CURLOPT_CUSTOMREQUEST, method);
    curl.easy_setopt(handle, CURLOPT_HTTPHEADER, list);
    curl.easy_setopt(handle, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl.easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl.easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    curl.easy_setopt(handle, CURLOPT_ERRORBUFFER, error);
    curl.easy_setopt(handle, CURLOPT_WRITEFUNCTION, collect);
    curl.easy_setopt(handle, CURLOPT_WRITEDATA, response);
    curl.easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
    curl.easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 0L);
    if (body != NULL) {
        curl.easy_setopt(handle, CURLOPT_POSTFIELDS, (const char *)body);
        curl.easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_length);
    }
    if (ca_file != NULL) curl.easy_setopt(handle, CURLOPT_CAINFO, ca_file);
    if (insecure) {
        curl.easy_setopt(handle, CURLOPT_SSL_VERIFYPEER, 0L);
        curl.easy_setopt(handle, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    CURLcode code = curl.easy_perform(handle);
    response->curl_code = (int)code;
    response->timed_out = code == CURLE_OPERATION_TIMEDOUT;
    if (code == CURLE_OK) {
        curl.easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &response->status);
    } else {
        strncpy(response->error, error[0] ? error : curl.easy_strerror(code), sizeof(response->error) - 1);
    }
    curl.slist_free_all(list);
    curl.easy_cleanup(handle);
}

void interactive_http_response_free(interactive_http_response *response) {
    free(response->body);
    response->body = NULL;
    response->body_length = 0;
}
