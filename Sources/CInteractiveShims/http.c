#include "CInteractiveShims.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

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
    pthread_once(&curl_once, curl_init_once);
    CURL *curl = curl_easy_init();
    if (curl == NULL) {
        response->curl_code = CURLE_FAILED_INIT;
        strncpy(response->error, "cannot initialise libcurl", sizeof(response->error) - 1);
        return;
    }
    struct curl_slist *list = NULL;
    char *lines = strdup(headers != NULL ? headers : "");
    char *save = NULL;
    for (char *line = strtok_r(lines, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        list = curl_slist_append(list, line);
    }
    free(lines);
    char error[CURL_ERROR_SIZE] = {0};
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, response);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    if (body != NULL) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, (const char *)body);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_length);
    }
    if (ca_file != NULL) curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file);
    if (insecure) {
        curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    CURLcode code = curl_easy_perform(curl);
    response->curl_code = (int)code;
    response->timed_out = code == CURLE_OPERATION_TIMEDOUT;
    if (code == CURLE_OK) {
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response->status);
    } else {
        strncpy(response->error, error[0] ? error : curl_easy_strerror(code), sizeof(response->error) - 1);
    }
    curl_slist_free_all(list);
    curl_easy_cleanup(curl);
}

void interactive_http_response_free(interactive_http_response *response) {
    free(response->body);
    response->body = NULL;
    response->body_length = 0;
}
