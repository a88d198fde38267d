/*
 * burst_sender: a minimal Engine.IO v4 / Socket.IO v5 server on 127.0.0.1 that sends bursts of
 * pre-encoded 1 KiB tracked `overlay` events as fast as each receiver's TCP window allows
 * (Benchmarks/overlay-cost.sh builds it with gcc and drives it; see Benchmarks/README.md).
 *
 * It plays the Interactive backend's live side and nothing else, on one port:
 *   - WebSocket upgrade on /socket.io/ (RFC 6455, no extensions), the Engine.IO open packet,
 *     the `40{"sid":…}` CONNECT reply, a PING (`2`) every 25 s to every connection;
 *   - acks `join-room` (the connection joins the room of its `mediaId`) and `emit-ack` at once
 *     with `{"ok":true}`; any other event with an ack id gets the same; counts emit-ack stages;
 *   - plain HTTP GETs of the REST calls a joined daemon makes: /api/interactive-status/…
 *     (`{"answered":[]}`) and /api/public/vip-status (`{"vip":false,"bet":false}`); 404 else.
 *
 * Commands on stdin, one line each, each answered by one JSON line on stdout:
 *   burst ROOM TAG COUNT [WINDOW]
 *                          encode COUNT overlays (timelineId TAG-N, _trackingId t-TAG-N), each a
 *                          Socket.IO packet of exactly 1024 bytes, and queue them to every
 *                          connection joined to ROOM; the answer gives the SHA-256 of the event
 *                          arguments' text in order (what a client that re-serializes each
 *                          argument compactly, keys in wire order, must get). With WINDOW, an
 *                          overlay is written only while fewer than WINDOW overlays of the burst
 *                          wait for their `received` emit-ack on that connection (so the acks'
 *                          answers never queue behind more than WINDOW overlays), resuming once a
 *                          quarter of the window is free; without, as fast as the receiver's TCP
 *                          window allows;
 *   stats                  connections, rooms, emit-acks by stage, REST requests by path, bursts;
 *   quit                   exit (so does the end of stdin).
 * Options: --port N (default: any free port), --ping-ms N (default 25000). Prints `READY PORT`
 * once listening. Loopback only; bounded connections and buffers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNECTIONS 64
#define MAX_MESSAGE (16u << 20)   /* a client frame or HTTP request larger than this closes the connection */
#define PACKET_BYTES 1024       /* the Socket.IO packet of each overlay: 42["overlay",{…}] */
#define MAX_COUNT 1000000
#define MAX_NAMES 32

static void die(const char *message) {
    fprintf(stderr, "burst_sender: %s: %s\n", message, strerror(errno));
    exit(1);
}

static void *checked_realloc(void *pointer, size_t size) {
    void *grown = realloc(pointer, size);
    if (grown == NULL) {
        fprintf(stderr, "burst_sender: out of memory (%zu bytes)\n", size);
        exit(1);
    }
    return grown;
}

static double monotonic_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static long long wall_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* A growable byte buffer; `start` is how much of it was consumed (written or parsed). */
typedef struct {
    char *bytes;
    size_t length, capacity, start;
} Buffer;

static void buffer_append(Buffer *buffer, const void *bytes, size_t count) {
    if (buffer->length + count > buffer->capacity) {
        size_t capacity = buffer->capacity ? buffer->capacity : 4096;
        while (capacity < buffer->length + count) capacity *= 2;
        buffer->bytes = checked_realloc(buffer->bytes, capacity);
        buffer->capacity = capacity;
    }
    memcpy(buffer->bytes + buffer->length, bytes, count);
    buffer->length += count;
}

static void buffer_printf(Buffer *buffer, const char *format, ...) {
    char small[1024];
    va_list arguments;
    va_start(arguments, format);
    int count = vsnprintf(small, sizeof small, format, arguments);
    va_end(arguments);
    if (count < 0) return;
    if ((size_t)count < sizeof small) {
        buffer_append(buffer, small, (size_t)count);
        return;
    }
    char *large = checked_realloc(NULL, (size_t)count + 1);
    va_start(arguments, format);
    vsnprintf(large, (size_t)count + 1, format, arguments);
    va_end(arguments);
    buffer_append(buffer, large, (size_t)count);
    free(large);
}

/* Drops the consumed prefix (keeps the buffer from growing across a long connection). */
static void buffer_compact(Buffer *buffer) {
    if (buffer->start == 0) return;
    memmove(buffer->bytes, buffer->bytes + buffer->start, buffer->length - buffer->start);
    buffer->length -= buffer->start;
    buffer->start = 0;
}

static void buffer_free(Buffer *buffer) {
    free(buffer->bytes);
    memset(buffer, 0, sizeof *buffer);
}

/* The header of an unmasked server frame (FIN set) carrying `length` bytes of opcode `opcode`. */
static size_t frame_header(unsigned char header[10], int opcode, size_t length) {
    header[0] = (unsigned char)(0x80 | opcode);
    if (length < 126) {
        header[1] = (unsigned char)length;
        return 2;
    }
    if (length < 65536) {
        header[1] = 126;
        header[2] = (unsigned char)(length >> 8);
        header[3] = (unsigned char)length;
        return 4;
    }
    header[1] = 127;
    for (int i = 0; i < 8; i++) header[2 + i] = (unsigned char)((uint64_t)length >> (56 - 8 * i));
    return 10;
}

/* A burst: its frames back to back, and where each frame starts (offsets[count] = total). */
typedef struct {
    char tag[64];
    char *bytes;
    size_t *offsets;
    size_t count;
    int references;
    int connections;
    double queued_at;
    double last_written_at;
} Burst;

typedef struct {
    char name[128];
    long count;
} Counter;

typedef struct {
    Counter items[MAX_NAMES];
    int used;
    long overflow;
} Counters;

static void count_name(Counters *counters, const char *name, size_t length) {
    if (length >= sizeof counters->items[0].name) length = sizeof counters->items[0].name - 1;
    for (int i = 0; i < counters->used; i++) {
        if (strlen(counters->items[i].name) == length && memcmp(counters->items[i].name, name, length) == 0) {
            counters->items[i].count++;
            return;
        }
    }
    if (counters->used == MAX_NAMES) {
        counters->overflow++;
        return;
    }
    memcpy(counters->items[counters->used].name, name, length);
    counters->items[counters->used].name[length] = 0;
    counters->items[counters->used].count = 1;
    counters->used++;
}

static void counters_json(Buffer *out, const Counters *counters) {
    buffer_printf(out, "{");
    for (int i = 0; i < counters->used; i++) {
        buffer_printf(out, "%s\"%s\":%ld", i ? "," : "", counters->items[i].name, counters->items[i].count);
    }
    if (counters->overflow) buffer_printf(out, "%s\"(other)\":%ld", counters->used ? "," : "", counters->overflow);
    buffer_printf(out, "}");
}

typedef enum { HTTP, WEBSOCKET } Protocol;

typedef struct {
    int fd;
    Protocol protocol;
    Buffer input;
    Buffer control;      /* whole frames: handshake, acks, pings; sent between burst frames */
    Buffer fragments;    /* a fragmented client message being reassembled */
    Burst *burst;        /* the burst being written, NULL when none */
    size_t burst_position, burst_frame;
    long burst_window;   /* 0, or at most this many overlays of the burst without their `received` ack */
    long received_acks, received_acks_at_burst;
    int closing;         /* close once `control` is written (a close frame was answered) */
    int engine_open;     /* Socket.IO CONNECT answered */
    char sid[24];
    char room[64];
} Connection;

static Connection connections[MAX_CONNECTIONS];
static int connection_count;
static Counters stages, event_names, rest_paths;
static long acks_sent, pings_sent, pongs_received, websockets_opened;
static int ping_interval_ms = 25000; /* --ping-ms */
static Burst *finished_bursts[256];
static int finished_count;
static unsigned sid_counter;

static void send_control_frame(Connection *connection, int opcode, const char *text, size_t length) {
    unsigned char header[10];
    size_t header_length = frame_header(header, opcode, length);
    buffer_append(&connection->control, header, header_length);
    buffer_append(&connection->control, text, length);
}

static void send_text(Connection *connection, const char *text) {
    send_control_frame(connection, 1, text, strlen(text));
}

static void release_burst(Burst *burst) {
    if (--burst->references > 0) return;
    if (finished_count < (int)(sizeof finished_bursts / sizeof finished_bursts[0])) {
        free(burst->bytes);
        free(burst->offsets);
        burst->bytes = NULL;
        burst->offsets = NULL;
        finished_bursts[finished_count++] = burst;
    } else {
        free(burst->bytes);
        free(burst->offsets);
        free(burst);
    }
}

static void close_connection(int index) {
    Connection *connection = &connections[index];
    close(connection->fd);
    buffer_free(&connection->input);
    buffer_free(&connection->control);
    buffer_free(&connection->fragments);
    if (connection->burst) release_burst(connection->burst);
    connections[index] = connections[--connection_count];
}

/* Finds `key` (e.g. `"stage":"`) in text and returns the span of the string that follows it. */
static int string_after(const char *text, size_t length, const char *key, const char **value, size_t *value_length) {
    const char *found = memmem(text, length, key, strlen(key));
    if (!found) return 0;
    const char *start = found + strlen(key);
    const char *end = memchr(start, '"', (size_t)(text + length - start));
    if (!end) return 0;
    *value = start;
    *value_length = (size_t)(end - start);
    return 1;
}

/* A Socket.IO packet from a client (the text after the Engine.IO `4`). */
static void socketio_packet(Connection *connection, const char *packet, size_t length) {
    if (length == 0) return;
    char type = packet[0];
    const char *cursor = packet + 1, *end = packet + length;
    if (cursor < end && *cursor == '/') { /* a namespace: only "/" is served, so it is skipped */
        const char *comma = memchr(cursor, ',', (size_t)(end - cursor));
        cursor = comma ? comma + 1 : end;
    }
    if (type == '0') {
        snprintf(connection->sid, sizeof connection->sid, "s%08x%06x", (unsigned)wall_ms(), ++sid_counter);
        char reply[64];
        snprintf(reply, sizeof reply, "40{\"sid\":\"%s\"}", connection->sid);
        send_text(connection, reply);
        connection->engine_open = 1;
        return;
    }
    if (type != '2') return; /* DISCONNECT, ACK or binary packets: nothing to answer */
    long ack_id = -1;
    if (cursor < end && *cursor >= '0' && *cursor <= '9') {
        ack_id = 0;
        while (cursor < end && *cursor >= '0' && *cursor <= '9' && ack_id < 1000000000L) {
            ack_id = ack_id * 10 + (*cursor++ - '0');
        }
    }
    const char *name = NULL;
    size_t name_length = 0;
    if (cursor + 2 < end && cursor[0] == '[' && cursor[1] == '"') {
        name = cursor + 2;
        const char *quote = memchr(name, '"', (size_t)(end - name));
        name_length = quote ? (size_t)(quote - name) : 0;
    }
    if (name_length == 9 && memcmp(name, "join-room", 9) == 0) {
        const char *media = memmem(cursor, (size_t)(end - cursor), "\"mediaId\":", 10);
        if (media) {
            media += 10;
            if (media < end && *media == '"') media++;
            size_t room_length = 0;
            while (media + room_length < end && room_length + 1 < sizeof connection->room &&
                   media[room_length] != '"' && media[room_length] != ',' && media[room_length] != '}') room_length++;
            memcpy(connection->room, media, room_length);
            connection->room[room_length] = 0;
        }
    } else if (name_length == 8 && memcmp(name, "emit-ack", 8) == 0) {
        const char *stage;
        size_t stage_length;
        if (string_after(cursor, (size_t)(end - cursor), "\"stage\":\"", &stage, &stage_length)) {
            count_name(&stages, stage, stage_length);
            if (stage_length == 8 && memcmp(stage, "received", 8) == 0) connection->received_acks++;
        } else {
            count_name(&stages, "(none)", 6);
        }
    }
    count_name(&event_names, name ? name : "(unnamed)", name ? name_length : 9);
    if (ack_id >= 0) {
        char reply[48];
        snprintf(reply, sizeof reply, "43%ld[{\"ok\":true}]", ack_id);
        send_text(connection, reply);
        acks_sent++;
    }
}

/* One whole WebSocket text message: an Engine.IO packet. */
static void engineio_packet(Connection *connection, const char *packet, size_t length) {
    if (length == 0) return;
    switch (packet[0]) {
    case '2': send_text(connection, "3"); break;        /* a v3-style client ping */
    case '3': pongs_received++; break;
    case '4': socketio_packet(connection, packet + 1, length - 1); break;
    case '1': connection->closing = 1; break;
    default: break;
    }
}

/* Parses whole frames out of the input; returns -1 when the connection must close. */
static int websocket_input(Connection *connection) {
    Buffer *input = &connection->input;
    for (;;) {
        unsigned char *frame = (unsigned char *)input->bytes + input->start;
        size_t available = input->length - input->start;
        if (available < 2) break;
        int fin = frame[0] & 0x80, opcode = frame[0] & 0x0F, masked = frame[1] & 0x80;
        uint64_t length = frame[1] & 0x7F;
        size_t header = 2;
        if (length == 126) {
            if (available < 4) break;
            length = ((uint64_t)frame[2] << 8) | frame[3];
            header = 4;
        } else if (length == 127) {
            if (available < 10) break;
            length = 0;
            for (int i = 0; i < 8; i++) length = (length << 8) | frame[2 + i];
            header = 10;
        }
        if (!masked || length > MAX_MESSAGE) return -1; /* RFC 6455 §5.1: client frames are masked */
        if (available < header + 4 + length) break;
        unsigned char *mask = frame + header, *payload = frame + header + 4;
        for (uint64_t i = 0; i < length; i++) payload[i] ^= mask[i & 3];
        input->start += header + 4 + (size_t)length;
        switch (opcode) {
        case 0x0:
        case 0x1:
        case 0x2:
            if (opcode != 0x0 && connection->fragments.length) return -1;
            if (fin && connection->fragments.length == 0) {
                engineio_packet(connection, (char *)payload, (size_t)length);
            } else {
                buffer_append(&connection->fragments, payload, (size_t)length);
                if (connection->fragments.length > MAX_MESSAGE) return -1;
                if (fin) {
                    engineio_packet(connection, connection->fragments.bytes, connection->fragments.length);
                    connection->fragments.length = 0;
                }
            }
            break;
        case 0x8:
            send_control_frame(connection, 0x8, (char *)payload, length >= 2 ? 2 : 0);
            connection->closing = 1;
            return 0;
        case 0x9: send_control_frame(connection, 0xA, (char *)payload, (size_t)length); break;
        default: break;
        }
    }
    buffer_compact(input);
    return 0;
}

/* Sec-WebSocket-Accept for `key` (RFC 6455 §4.2.2). */
static void websocket_accept(const char *key, size_t key_length, char accept[64]) {
    static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    char joined[256];
    if (key_length > sizeof joined - sizeof guid) key_length = sizeof joined - sizeof guid;
    memcpy(joined, key, key_length);
    memcpy(joined + key_length, guid, sizeof guid - 1);
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_length = 0;
    EVP_Digest(joined, key_length + sizeof guid - 1, digest, &digest_length, EVP_sha1(), NULL);
    EVP_EncodeBlock((unsigned char *)accept, digest, (int)digest_length);
}

/* The value of header `name` in a request head, or NULL. */
static const char *header_value(const char *head, size_t head_length, const char *name, size_t *value_length) {
    size_t name_length = strlen(name);
    const char *line = memchr(head, '\n', head_length);
    while (line && (size_t)(line + 1 - head) < head_length) {
        line++;
        const char *end = memchr(line, '\n', (size_t)(head + head_length - line));
        if (!end) break;
        if ((size_t)(end - line) > name_length && strncasecmp(line, name, name_length) == 0 && line[name_length] == ':') {
            const char *value = line + name_length + 1;
            while (value < end && (*value == ' ' || *value == '\t')) value++;
            const char *value_end = end;
            while (value_end > value && (value_end[-1] == '\r' || value_end[-1] == ' ')) value_end--;
            *value_length = (size_t)(value_end - value);
            return value;
        }
        line = end;
    }
    return NULL;
}

static void http_reply(Connection *connection, int status, const char *body) {
    buffer_printf(&connection->control,
                  "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s", status,
                  status == 200 ? "OK" : "Not Found", strlen(body), body);
}

/* Requests on a connection that has not upgraded; returns -1 when it must close. */
static int http_input(Connection *connection) {
    Buffer *input = &connection->input;
    while (connection->protocol == HTTP) {
        const char *head = input->bytes + input->start;
        size_t available = input->length - input->start;
        const char *end = available >= 4 ? memmem(head, available, "\r\n\r\n", 4) : NULL;
        if (!end) return available > 65536 ? -1 : 0;
        size_t head_length = (size_t)(end - head) + 4;
        size_t body_length = 0, value_length;
        const char *value = header_value(head, head_length, "Content-Length", &value_length);
        if (value) body_length = strtoul(value, NULL, 10);
        if (body_length > MAX_MESSAGE) return -1;
        if (available < head_length + body_length) return 0;
        const char *path = memchr(head, ' ', head_length);
        if (!path) return -1;
        path++;
        const char *path_end = path;
        while (path_end < head + head_length && *path_end != ' ' && *path_end != '?') path_end++;
        size_t path_length = (size_t)(path_end - path);
        const char *key = header_value(head, head_length, "Sec-WebSocket-Key", &value_length);
        if (path_length >= 11 && memcmp(path, "/socket.io/", 11) == 0 && key) {
            char accept[64];
            websocket_accept(key, value_length, accept);
            buffer_printf(&connection->control,
                          "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          "Sec-WebSocket-Accept: %s\r\n\r\n", accept);
            char open[160];
            snprintf(open, sizeof open,
                     "0{\"sid\":\"e%08x%06x\",\"upgrades\":[],\"pingInterval\":%d,\"pingTimeout\":20000,"
                     "\"maxPayload\":1000000}", (unsigned)wall_ms(), ++sid_counter, ping_interval_ms);
            send_text(connection, open);
            connection->protocol = WEBSOCKET;
            websockets_opened++;
        } else {
            count_name(&rest_paths, path, path_length);
            if (path_length > 24 && memcmp(path, "/api/interactive-status/", 24) == 0) {
                http_reply(connection, 200, "{\"answered\":[]}");
            } else if (path_length == 22 && memcmp(path, "/api/public/vip-status", 22) == 0) {
                http_reply(connection, 200, "{\"vip\":false,\"bet\":false}");
            } else {
                http_reply(connection, 404, "{\"error\":\"not served by burst_sender\"}");
            }
        }
        input->start += head_length + body_length;
    }
    buffer_compact(input);
    return 0;
}

/* Reads what the socket has; returns -1 when the connection ended. */
static int connection_readable(Connection *connection) {
    for (;;) {
        char chunk[65536];
        ssize_t count = read(connection->fd, chunk, sizeof chunk);
        if (count == 0) return -1;
        if (count < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
            return -1;
        }
        buffer_append(&connection->input, chunk, (size_t)count);
        if (connection->input.length > MAX_MESSAGE + 16) return -1;
        if (connection->protocol == HTTP && http_input(connection) < 0) return -1;
        if (connection->protocol == WEBSOCKET && websocket_input(connection) < 0) return -1;
    }
}

/* The frame of its burst the connection may not start yet (the window), or the burst's count. */
static size_t burst_limit(const Connection *connection) {
    size_t count = connection->burst->count;
    if (connection->burst_window <= 0) return count;
    long acked = connection->received_acks - connection->received_acks_at_burst;
    size_t allowed = (size_t)(acked + connection->burst_window);
    return allowed < count ? allowed : count;
}

/*
 * Whether the burst may go on: a frame begun is always finished; with a window, the next frames
 * go once a quarter of the window (or the rest of the burst) is free, so that the sender does
 * not wake and write for every single ack.
 */
static int burst_may_write(const Connection *connection) {
    const Burst *burst = connection->burst;
    if (!burst) return 0;
    if (connection->burst_position != burst->offsets[connection->burst_frame]) return 1;
    size_t limit = burst_limit(connection), left = burst->count - connection->burst_frame;
    size_t batch = connection->burst_window > 0 ? (size_t)(connection->burst_window + 3) / 4 : 1;
    if (batch > left) batch = left;
    return limit >= connection->burst_frame + batch;
}

/* Whether the connection has bytes it may write now. */
static int wants_to_write(const Connection *connection) {
    return connection->control.length > connection->control.start || burst_may_write(connection);
}

/*
 * Writes what it can. Control frames go between burst frames: a partly written control buffer
 * is finished first, a burst frame partly written is finished next, then pending control
 * frames, then the burst (in chunks that end on a frame boundary, within the window). Returns
 * -1 on a write error.
 */
static int connection_writable(Connection *connection) {
    for (;;) {
        Buffer *control = &connection->control;
        Burst *burst = connection->burst;
        int burst_mid_frame = burst && connection->burst_position != burst->offsets[connection->burst_frame];
        int control_pending = control->length > control->start;
        const char *from;
        size_t count;
        int writing_control;
        if (control_pending && (control->start > 0 || !burst_mid_frame)) {
            from = control->bytes + control->start;
            count = control->length - control->start;
            writing_control = 1;
        } else if (burst_may_write(connection)) {
            size_t last = connection->burst_frame + 256, limit = burst_limit(connection);
            if (last > limit) last = limit;
            if (last <= connection->burst_frame) last = connection->burst_frame + 1; /* finish the frame begun */
            from = burst->bytes + connection->burst_position;
            count = burst->offsets[last] - connection->burst_position;
            writing_control = 0;
        } else {
            return 0;
        }
        ssize_t written = write(connection->fd, from, count);
        if (written < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
            return -1;
        }
        if (writing_control) {
            control->start += (size_t)written;
            if (control->start == control->length) control->start = control->length = 0;
        } else {
            connection->burst_position += (size_t)written;
            while (connection->burst_frame < burst->count &&
                   burst->offsets[connection->burst_frame + 1] <= connection->burst_position) connection->burst_frame++;
            if (connection->burst_frame == burst->count) {
                burst->last_written_at = monotonic_seconds();
                connection->burst = NULL;
                release_burst(burst);
            }
        }
    }
}

/* Encodes COUNT overlays for TAG. The argument of each event is hashed into `digest`. */
static Burst *encode_burst(const char *tag, size_t count, char digest_hex[65]) {
    Burst *burst = checked_realloc(NULL, sizeof *burst);
    memset(burst, 0, sizeof *burst);
    snprintf(burst->tag, sizeof burst->tag, "%s", tag);
    burst->count = count;
    burst->bytes = checked_realloc(NULL, count * (PACKET_BYTES + 4));
    burst->offsets = checked_realloc(NULL, (count + 1) * sizeof *burst->offsets);
    EVP_MD_CTX *hash = EVP_MD_CTX_new();
    EVP_DigestInit_ex(hash, EVP_sha256(), NULL);
    long long now = wall_ms();
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    char packet[PACKET_BYTES + 1], description[PACKET_BYTES];
    size_t total = 0;
    for (size_t number = 0; number < count; number++) {
        const char *format =
            "42[\"overlay\",{\"data\":{\"timelineId\":\"%s-%zu\",\"typeTimeline\":1,"
            "\"url\":\"http://127.0.0.1/templates/quiz.html?id=%s-%zu\","
            "\"position\":{\"alignment\":%zu,\"width\":36,\"height\":45},\"duration\":15,\"targets\":[\"all\"],"
            "\"traceLock\":false,\"requireVip\":false,\"requireBet\":false,\"requireFanclub\":false,\"betAmount\":0,"
            "\"sentAt\":%lld,\"description\":\"%s\"},\"_trackingId\":\"t-%s-%zu\",\"_emitTimestamp\":%lld}]";
        int bare = snprintf(packet, sizeof packet, format, tag, number, tag, number, number % 9, now, "", tag, number, now);
        size_t padding = bare > 0 && bare < PACKET_BYTES ? (size_t)(PACKET_BYTES - bare) : 0;
        for (size_t i = 0; i < padding; i++) description[i] = alphabet[(number + i) % (sizeof alphabet - 1)];
        description[padding] = 0;
        int length = snprintf(packet, sizeof packet, format, tag, number, tag, number, number % 9, now, description,
                              tag, number, now);
        if (length <= 0 || length >= (int)sizeof packet) {
            fprintf(stderr, "burst_sender: tag %s is too long for a %d-byte packet\n", tag, PACKET_BYTES);
            exit(1);
        }
        /* The event's argument: after `42["overlay",`, without the closing `]`. */
        size_t prefix = strlen("42[\"overlay\",");
        EVP_DigestUpdate(hash, packet + prefix, (size_t)length - prefix - 1);
        unsigned char header[10];
        size_t header_length = frame_header(header, 1, (size_t)length);
        burst->offsets[number] = total;
        memcpy(burst->bytes + total, header, header_length);
        memcpy(burst->bytes + total + header_length, packet, (size_t)length);
        total += header_length + (size_t)length;
    }
    burst->offsets[count] = total;
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_length = 0;
    EVP_DigestFinal_ex(hash, digest, &digest_length);
    EVP_MD_CTX_free(hash);
    for (unsigned i = 0; i < digest_length && i < 32; i++) snprintf(digest_hex + 2 * i, 3, "%02x", digest[i]);
    return burst;
}

static void answer(Buffer *out) {
    buffer_append(out, "\n", 1);
    fwrite(out->bytes, 1, out->length, stdout);
    fflush(stdout);
    buffer_free(out);
}

static void command_burst(const char *room, const char *tag, long count, long window) {
    Buffer out = {0};
    if (count <= 0 || count > MAX_COUNT || window < 0 || strlen(tag) > 40 || strchr(tag, '-') || strchr(tag, '"') ||
        strchr(tag, '\\')) {
        buffer_printf(&out, "{\"error\":\"burst ROOM TAG COUNT [WINDOW]: COUNT 1..%d, WINDOW ≥ 0, TAG without '-', "
                      "quotes or backslashes\"}", MAX_COUNT);
        answer(&out);
        return;
    }
    for (int i = 0; i < connection_count; i++) {
        if (connections[i].burst && strcmp(connections[i].room, room) == 0) {
            buffer_printf(&out, "{\"error\":\"a burst is still being written to room %s\"}", room);
            answer(&out);
            return;
        }
    }
    char digest[65] = {0};
    double started = monotonic_seconds();
    Burst *burst = encode_burst(tag, (size_t)count, digest);
    double encoded = monotonic_seconds();
    burst->queued_at = encoded;
    burst->references = 1;
    for (int i = 0; i < connection_count; i++) {
        Connection *connection = &connections[i];
        if (connection->protocol != WEBSOCKET || !connection->engine_open || strcmp(connection->room, room) != 0) continue;
        connection->burst = burst;
        connection->burst_position = 0;
        connection->burst_frame = 0;
        connection->burst_window = window;
        connection->received_acks_at_burst = connection->received_acks;
        burst->references++;
        burst->connections++;
    }
    buffer_printf(&out, "{\"tag\":\"%s\",\"room\":\"%s\",\"connections\":%d,\"count\":%ld,\"window\":%ld,"
                  "\"packetBytes\":%d,\"bytes\":%zu,\"sha256\":\"%s\",\"encodeSeconds\":%.4f}",
                  tag, room, burst->connections, count, window, PACKET_BYTES, burst->offsets[burst->count], digest,
                  encoded - started);
    release_burst(burst);
    answer(&out);
}

static void command_stats(void) {
    Buffer out = {0};
    buffer_printf(&out, "{\"connections\":%d,\"websocketsOpened\":%ld,\"rooms\":{", connection_count, websockets_opened);
    int first = 1;
    for (int i = 0; i < connection_count; i++) {
        if (!connections[i].room[0]) continue;
        int seen = 0;
        for (int j = 0; j < i; j++) seen |= strcmp(connections[j].room, connections[i].room) == 0;
        if (seen) continue;
        int members = 0;
        for (int j = 0; j < connection_count; j++) members += strcmp(connections[j].room, connections[i].room) == 0;
        buffer_printf(&out, "%s\"%s\":%d", first ? "" : ",", connections[i].room, members);
        first = 0;
    }
    buffer_printf(&out, "},\"stages\":");
    counters_json(&out, &stages);
    buffer_printf(&out, ",\"events\":");
    counters_json(&out, &event_names);
    buffer_printf(&out, ",\"rest\":");
    counters_json(&out, &rest_paths);
    buffer_printf(&out, ",\"acksSent\":%ld,\"pingsSent\":%ld,\"pongs\":%ld,\"bursts\":[", acks_sent, pings_sent,
                  pongs_received);
    for (int i = 0; i < finished_count; i++) {
        Burst *burst = finished_bursts[i];
        buffer_printf(&out, "%s{\"tag\":\"%s\",\"connections\":%d,\"writeSeconds\":%.4f}", i ? "," : "", burst->tag,
                      burst->connections, burst->connections ? burst->last_written_at - burst->queued_at : 0.0);
    }
    buffer_printf(&out, "]}");
    answer(&out);
}

/* Handles the complete lines read from stdin; returns 0 on `quit`. */
static int commands(Buffer *input) {
    for (;;) {
        char *line = input->bytes + input->start;
        char *newline = memchr(line, '\n', input->length - input->start);
        if (!newline) break;
        *newline = 0;
        input->start = (size_t)(newline + 1 - input->bytes);
        char room[64], tag[64];
        long count, window = 0;
        if (sscanf(line, "burst %63s %63s %ld %ld", room, tag, &count, &window) >= 3) {
            command_burst(room, tag, count, window);
        } else if (strncmp(line, "stats", 5) == 0) {
            command_stats();
        } else if (strncmp(line, "quit", 4) == 0) {
            return 0;
        } else {
            printf("{\"error\":\"unknown command\"}\n");
            fflush(stdout);
        }
    }
    buffer_compact(input);
    return 1;
}

int main(int argc, char **argv) {
    int port = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--port") == 0) port = atoi(argv[i + 1]);
        if (strcmp(argv[i], "--ping-ms") == 0 && atoi(argv[i + 1]) > 0) ping_interval_ms = atoi(argv[i + 1]);
    }
    signal(SIGPIPE, SIG_IGN);
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listener < 0) die("socket");
    int one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(listener, (struct sockaddr *)&address, sizeof address) < 0) die("bind 127.0.0.1");
    if (listen(listener, 64) < 0) die("listen");
    socklen_t length = sizeof address;
    getsockname(listener, (struct sockaddr *)&address, &length);
    printf("READY %d\n", ntohs(address.sin_port));
    fflush(stdout);
    fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);

    Buffer stdin_buffer = {0};
    double next_ping = monotonic_seconds() + ping_interval_ms / 1000.0;
    struct pollfd polled[MAX_CONNECTIONS + 2];
    for (;;) {
        polled[0] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
        polled[1] = (struct pollfd){.fd = listener, .events = connection_count < MAX_CONNECTIONS ? POLLIN : 0};
        for (int i = 0; i < connection_count; i++) {
            Connection *connection = &connections[i];
            short wanted = POLLIN;
            if (wants_to_write(connection)) wanted |= POLLOUT;
            polled[2 + i] = (struct pollfd){.fd = connection->fd, .events = wanted};
        }
        int polled_connections = connection_count;
        int timeout = (int)((next_ping - monotonic_seconds()) * 1000) + 1;
        if (poll(polled, (nfds_t)(2 + polled_connections), timeout < 0 ? 0 : timeout) < 0) {
            if (errno == EINTR) continue;
            die("poll");
        }
        if (monotonic_seconds() >= next_ping) {
            for (int i = 0; i < connection_count; i++) {
                if (connections[i].protocol == WEBSOCKET) {
                    send_text(&connections[i], "2");
                    pings_sent++;
                }
            }
            next_ping += ping_interval_ms / 1000.0;
        }
        if (polled[0].revents) {
            char chunk[4096];
            ssize_t count = read(STDIN_FILENO, chunk, sizeof chunk);
            if (count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR)) break;
            if (count > 0) {
                buffer_append(&stdin_buffer, chunk, (size_t)count);
                if (!commands(&stdin_buffer)) break;
            }
        }
        /* Connections from the last poll, from the end, so that closing one (the last takes its
           place) never skips another. */
        for (int i = polled_connections - 1; i >= 0; i--) {
            Connection *connection = &connections[i];
            short events = polled[2 + i].revents;
            int failed = 0;
            if (events & (POLLIN | POLLHUP | POLLERR)) failed = connection_readable(connection) < 0;
            if (!failed) failed = connection_writable(connection) < 0;
            if (!failed && connection->closing && connection->control.length == connection->control.start) failed = 1;
            if (failed) close_connection(i);
        }
        if (polled[1].revents & POLLIN) {
            for (;;) {
                int fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0) break;
                if (connection_count == MAX_CONNECTIONS) {
                    close(fd);
                    break;
                }
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                memset(&connections[connection_count], 0, sizeof connections[0]);
                connections[connection_count].fd = fd;
                connections[connection_count].protocol = HTTP;
                connection_count++;
            }
        }
    }
    return 0;
}
