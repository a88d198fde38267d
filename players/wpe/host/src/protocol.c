#include "protocol.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* A command line longer than this is dropped (reported to on_line as NULL). */
#define MAX_LINE (16 * 1024 * 1024)

struct Protocol {
    int in_fd;
    int out_fd;
    int listen_fd;
    char *socket_path;
    guint in_watch;
    guint listen_watch;
    GString *input;
    gboolean discarding;
    /* Socket mode: what was sent before the client connected. */
    GString *pending;
    gboolean closed;
    ProtocolLineFunc on_line;
    ProtocolClosedFunc on_closed;
    gpointer data;
};

static void protocol_close(Protocol *protocol)
{
    if (protocol->closed)
        return;
    protocol->closed = TRUE;
    if (protocol->in_watch) {
        g_source_remove(protocol->in_watch);
        protocol->in_watch = 0;
    }
    protocol->on_closed(protocol->data);
}

static void deliver_lines(Protocol *protocol)
{
    char *newline;
    while (!protocol->closed && (newline = memchr(protocol->input->str, '\n', protocol->input->len))) {
        gsize length = (gsize) (newline - protocol->input->str);
        if (protocol->discarding) {
            protocol->discarding = FALSE;
        } else {
            char *line = g_strndup(protocol->input->str, length);
            protocol->on_line(line, protocol->data);
            g_free(line);
        }
        g_string_erase(protocol->input, 0, (gssize) length + 1);
    }
    if (protocol->input->len > MAX_LINE) {
        g_string_truncate(protocol->input, 0);
        if (!protocol->discarding)
            protocol->on_line(NULL, protocol->data);
        protocol->discarding = TRUE;
    }
}

static gboolean on_input(int fd, GIOCondition condition, gpointer data)
{
    Protocol *protocol = data;
    char buffer[65536];
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return G_SOURCE_CONTINUE;
    if (n <= 0) {
        /* EOF (or an error): a last line without its newline still counts. */
        if (protocol->input->len > 0 && !protocol->discarding) {
            g_string_append_c(protocol->input, '\n');
            deliver_lines(protocol);
        }
        protocol->in_watch = 0;
        protocol_close(protocol);
        return G_SOURCE_REMOVE;
    }
    (void) condition;
    g_string_append_len(protocol->input, buffer, n);
    deliver_lines(protocol);
    return G_SOURCE_CONTINUE;
}

static gboolean write_all(int fd, const char *data, gsize length)
{
    while (length > 0) {
        ssize_t n = write(fd, data, length);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return FALSE;
        }
        data += n;
        length -= (gsize) n;
    }
    return TRUE;
}

static Protocol *protocol_alloc(ProtocolLineFunc on_line, ProtocolClosedFunc on_closed, gpointer data)
{
    Protocol *protocol = g_new0(Protocol, 1);
    protocol->in_fd = -1;
    protocol->out_fd = -1;
    protocol->listen_fd = -1;
    protocol->input = g_string_new(NULL);
    protocol->on_line = on_line;
    protocol->on_closed = on_closed;
    protocol->data = data;
    return protocol;
}

Protocol *protocol_new_stdio(ProtocolLineFunc on_line, ProtocolClosedFunc on_closed, gpointer data,
                             GError **error)
{
    int in_fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
    int out_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in_fd < 0 || out_fd < 0 || null_fd < 0 || dup2(null_fd, STDIN_FILENO) < 0
        || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "cannot take stdin/stdout: %s",
                    g_strerror(errno));
        return NULL;
    }
    close(null_fd);
    Protocol *protocol = protocol_alloc(on_line, on_closed, data);
    protocol->in_fd = in_fd;
    protocol->out_fd = out_fd;
    protocol->in_watch = g_unix_fd_add(in_fd, G_IO_IN | G_IO_HUP | G_IO_ERR, on_input, protocol);
    return protocol;
}

static gboolean on_connection(int fd, GIOCondition condition, gpointer data)
{
    Protocol *protocol = data;
    (void) condition;
    int client = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
    if (client < 0)
        return errno == EINTR || errno == EAGAIN || errno == ECONNABORTED ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
    protocol->in_fd = client;
    protocol->out_fd = client;
    protocol->listen_watch = 0;
    if (!write_all(client, protocol->pending->str, protocol->pending->len)) {
        protocol_close(protocol);
        return G_SOURCE_REMOVE;
    }
    g_string_free(protocol->pending, TRUE);
    protocol->pending = NULL;
    protocol->in_watch = g_unix_fd_add(client, G_IO_IN | G_IO_HUP | G_IO_ERR, on_input, protocol);
    return G_SOURCE_REMOVE;
}

Protocol *protocol_new_socket(const char *path, ProtocolLineFunc on_line, ProtocolClosedFunc on_closed,
                              gpointer data, GError **error)
{
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof address.sun_path) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "socket path too long: %s", path);
        return NULL;
    }
    strcpy(address.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    unlink(path);
    if (fd < 0 || bind(fd, (struct sockaddr *) &address, sizeof address) < 0 || listen(fd, 1) < 0) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "cannot listen on %s: %s", path,
                    g_strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    Protocol *protocol = protocol_alloc(on_line, on_closed, data);
    protocol->listen_fd = fd;
    protocol->socket_path = g_strdup(path);
    protocol->pending = g_string_new(NULL);
    protocol->listen_watch = g_unix_fd_add(fd, G_IO_IN, on_connection, protocol);
    return protocol;
}

void protocol_send(Protocol *protocol, JsonObject *object)
{
    if (protocol->closed)
        return;
    JsonNode *node = json_node_new(JSON_NODE_OBJECT);
    json_node_set_object(node, object);
    gsize length = 0;
    JsonGenerator *generator = json_generator_new();
    json_generator_set_root(generator, node);
    char *text = json_generator_to_data(generator, &length);
    g_object_unref(generator);
    json_node_unref(node);
    char *line = g_strconcat(text, "\n", NULL);
    g_free(text);
    if (protocol->pending)
        g_string_append_len(protocol->pending, line, (gssize) length + 1);
    else if (!write_all(protocol->out_fd, line, length + 1))
        protocol_close(protocol);
    g_free(line);
}

void protocol_free(Protocol *protocol)
{
    if (protocol->in_watch)
        g_source_remove(protocol->in_watch);
    if (protocol->listen_watch)
        g_source_remove(protocol->listen_watch);
    if (protocol->in_fd >= 0)
        close(protocol->in_fd);
    if (protocol->out_fd >= 0 && protocol->out_fd != protocol->in_fd)
        close(protocol->out_fd);
    if (protocol->listen_fd >= 0)
        close(protocol->listen_fd);
    if (protocol->socket_path) {
        unlink(protocol->socket_path);
        g_free(protocol->socket_path);
    }
    if (protocol->pending)
        g_string_free(protocol->pending, TRUE);
    g_string_free(protocol->input, TRUE);
    g_free(protocol);
}
