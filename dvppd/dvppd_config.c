#include "dvppd_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dvppd_presets.h"

void dvppd_config_defaults(dvppd_config *c)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->http_addr, sizeof(c->http_addr), "127.0.0.1");
    c->http_port = 8080;
    snprintf(c->socket_path, sizeof(c->socket_path), "run/dvppd.sock");
    c->socket_mode = 0660;
    c->channels = 0;
    c->queue_depth = 256;
    c->max_pixels_in_flight = (uint64_t)256 << 20;
    c->max_bytes_in_flight = (uint64_t)1 << 30;
    c->idle_trim_ms = DVPP_DEVICE_IDLE_TRIM_MS;
    c->idle_keep_bytes = DVPP_DEVICE_IDLE_KEEP_BYTES;
    c->limits = dvpp_limits_default();
    c->sock.max_connections = 64;
    c->sock.max_inline = 64u << 10;
    c->sock.max_rings = 8;
    c->sock.max_slots = 1024;
    c->sock.max_ring_bytes = (uint64_t)1 << 30;
    c->sock.max_inflight = 256;
    c->sock.lease_timeout_ms = 10000;
    /* One channel per ring a connection may have (a decode needs a ring). */
    c->sock.max_video_channels = 8;
    /* One largest stream (limits.max_video_bytes) gathered or encoded at a
     * time per connection: 64 connections hold at most 16 GiB. */
    c->sock.max_video_buffer_bytes = (uint64_t)256 << 20;
    /* Ordered queues beyond the device's channels (CPU count, at most 8)
     * buy a client no concurrency. */
    c->sock.max_streams = 64;
    /* A waiter needs a job in flight on its stream: max_inflight. */
    c->sock.max_sync_waiters = 256;
    /* Decoding a limits.max_video_bytes stream, plus the time its consumer
     * takes to release slots: minutes, not hours. */
    c->sock.video_deadline_ms = 300000;
    c->http.threads = 2;
    c->http.max_connections = 1024;
    c->http.max_per_ip = 128;
    c->http.idle_timeout_s = 30;
    c->http.request_timeout_s = 60;
    c->http.connection_memory = 64u << 10;
    c->http.max_body_bytes = 0; /* = limits.max_encoded_bytes */
    c->http.max_batch_bytes = (uint64_t)256 << 20;
    c->http.max_body_memory = (uint64_t)1 << 30;
    c->http.max_batch_items = 256;
    c->http.max_jobs = 16;
    c->http.job_ttl_s = 600;
    c->http.console = DVPPD_CONSOLE_AUTO;
    c->dump.max_requests = 32;
    c->dump.max_bytes = (uint64_t)1 << 30;
    c->trace.keep = 64;
    c->trace.max_bytes = (uint64_t)64 << 20;
    c->trace.max_events = DVPPD_TRACE_DEFAULT_EVENTS;
    c->trace.capture_events = 1u << 18;
    c->trace.max_seconds = 60;
    c->log_level = DVPP_LOG_INFO;
    c->drain_timeout_s = 20;
    snprintf(c->source, sizeof(c->source), "built-in defaults");
}

dvpp_status dvppd_config_set_listen(dvppd_config *c, const char *addr,
                                    dvpp_err *err)
{
    const char *colon = strrchr(addr, ':');
    char *end;
    unsigned long port;

    if (!colon || colon == addr || (size_t)(colon - addr) >= sizeof(c->http_addr))
        return dvpp_err_set(err, DVPP_EINVAL, "http.listen",
                            "http.listen '%s' is not HOST:PORT", addr);
    errno = 0;
    port = strtoul(colon + 1, &end, 10);
    if (errno || *end || port > 65535)
        return dvpp_err_set(err, DVPP_EINVAL, "http.listen",
                            "http.listen port '%s' is not 0..65535", colon + 1);
    memcpy(c->http_addr, addr, (size_t)(colon - addr));
    c->http_addr[colon - addr] = '\0';
    c->http_port = (uint16_t)port;
    return DVPP_OK;
}

bool dvppd_config_console_on(const dvppd_config *c)
{
    struct in_addr v4;
    struct in6_addr v6;

    if (c->http.console != DVPPD_CONSOLE_AUTO)
        return c->http.console != 0;
    if (!strcmp(c->http_addr, "localhost"))
        return true;
    if (inet_pton(AF_INET, c->http_addr, &v4) == 1)
        return (ntohl(v4.s_addr) >> 24) == 127;
    return inet_pton(AF_INET6, c->http_addr, &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

/* One accepted key: where it is, and how to store it. */
typedef enum key_kind {
    KEY_U64, KEY_U32, KEY_STR, KEY_LISTEN, KEY_LEVEL, KEY_MODE, KEY_AIPP, KEY_IDS,
    KEY_GROUPS, KEY_ENGINES, KEY_BOOL,
    KEY_AUTO_BOOL /* an int32_t: DVPPD_CONSOLE_AUTO until set, then 0 or 1 */
} key_kind;

typedef struct key_def {
    const char *section;
    const char *name;
    key_kind kind;
    size_t offset;      /* into dvppd_config */
    size_t size;        /* for strings */
    uint64_t min, max;  /* for numbers */
} key_def;

#define OFF(f) offsetof(dvppd_config, f)

static const key_def k_keys[] = {
    {"http", "listen", KEY_LISTEN, 0, 0, 0, 0},
    {"http", "threads", KEY_U32, OFF(http.threads), 0, 1, 256},
    {"http", "max_connections", KEY_U32, OFF(http.max_connections), 0, 1, 1u << 20},
    {"http", "max_connections_per_ip", KEY_U32, OFF(http.max_per_ip), 0, 0, 1u << 20},
    {"http", "idle_timeout_s", KEY_U32, OFF(http.idle_timeout_s), 0, 1, 86400},
    {"http", "request_timeout_s", KEY_U32, OFF(http.request_timeout_s), 0, 1, 86400},
    {"http", "connection_memory", KEY_U32, OFF(http.connection_memory), 0, 32768, 1u << 26},
    {"http", "max_body_bytes", KEY_U64, OFF(http.max_body_bytes), 0, 0, (uint64_t)1 << 34},
    {"http", "max_batch_bytes", KEY_U64, OFF(http.max_batch_bytes), 0, 1, (uint64_t)1 << 36},
    {"http", "max_body_memory", KEY_U64, OFF(http.max_body_memory), 0, 1, (uint64_t)1 << 40},
    {"http", "max_batch_items", KEY_U32, OFF(http.max_batch_items), 0, 1, 65536},
    {"http", "max_jobs", KEY_U32, OFF(http.max_jobs), 0, 1, 4096},
    {"http", "job_ttl_s", KEY_U32, OFF(http.job_ttl_s), 0, 1, 7 * 86400},
    {"http", "console", KEY_AUTO_BOOL, OFF(http.console), 0, 0, 0},
    {"aipp", "configs", KEY_AIPP, 0, 0, 0, 0},
    {"socket", "path", KEY_STR, OFF(socket_path), sizeof(((dvppd_config *)0)->socket_path), 0, 0},
    {"socket", "mode", KEY_MODE, OFF(socket_mode), 0, 0, 0777},
    {"socket", "allow_uids", KEY_IDS, OFF(sock.allow_uids), 0, 0, 0},
    {"socket", "allow_gids", KEY_IDS, OFF(sock.allow_gids), 0, 0, 0},
    {"socket", "allow_groups", KEY_GROUPS, 0, 0, 0, 0},
    {"socket", "max_connections", KEY_U32, OFF(sock.max_connections), 0, 1, 65536},
    {"socket", "max_inline", KEY_U64, OFF(sock.max_inline), 0, 1024, 1u << 17},
    {"socket", "max_rings", KEY_U32, OFF(sock.max_rings), 0, 1, 1024},
    {"socket", "max_slots", KEY_U32, OFF(sock.max_slots), 0, 1, 1u << 16},
    {"socket", "max_ring_bytes", KEY_U64, OFF(sock.max_ring_bytes), 0, 4096, (uint64_t)1 << 40},
    {"socket", "max_inflight", KEY_U32, OFF(sock.max_inflight), 0, 1, 1u << 16},
    {"socket", "lease_timeout_ms", KEY_U32, OFF(sock.lease_timeout_ms), 0, 10, 86400000},
    {"socket", "max_video_channels", KEY_U32, OFF(sock.max_video_channels), 0, 1, 1024},
    {"socket", "max_video_buffer_bytes", KEY_U64, OFF(sock.max_video_buffer_bytes), 0, 4096,
     (uint64_t)1 << 40},
    {"socket", "max_streams", KEY_U32, OFF(sock.max_streams), 0, 1, 1u << 16},
    {"socket", "max_sync_waiters", KEY_U32, OFF(sock.max_sync_waiters), 0, 1, 1u << 20},
    {"socket", "video_deadline_ms", KEY_U32, OFF(sock.video_deadline_ms), 0, 100, 86400000},
    {"device", "channels", KEY_U32, OFF(channels), 0, 0, 256},
    {"device", "engine_channels", KEY_ENGINES, 0, 0, 0, 256},
    {"device", "queue_depth", KEY_U32, OFF(queue_depth), 0, 1, 1u << 20},
    {"device", "max_pixels_in_flight", KEY_U64, OFF(max_pixels_in_flight), 0, 1, UINT64_MAX},
    {"device", "max_bytes_in_flight", KEY_U64, OFF(max_bytes_in_flight), 0, 1, UINT64_MAX},
    {"device", "idle_trim_ms", KEY_U32, OFF(idle_trim_ms), 0, 0, 86400000},
    {"device", "idle_keep_bytes", KEY_U64, OFF(idle_keep_bytes), 0, 0, UINT64_MAX},
    {"limits", "max_encoded_bytes", KEY_U64, OFF(limits.max_encoded_bytes), 0, 1, UINT64_MAX},
    {"limits", "max_pixels", KEY_U64, OFF(limits.max_pixels), 0, 1, UINT64_MAX},
    {"limits", "max_side", KEY_U32, OFF(limits.max_side), 0, 1, 65535},
    {"limits", "max_jpeg_scans", KEY_U32, OFF(limits.max_jpeg_scans), 0, 1, 100000},
    {"limits", "max_png_chunk", KEY_U32, OFF(limits.max_png_chunk), 0, 1, UINT32_MAX},
    {"limits", "max_png_chunks", KEY_U32, OFF(limits.max_png_chunks), 0, 1, UINT32_MAX},
    {"limits", "max_decode_memory", KEY_U64, OFF(limits.max_decode_memory), 0, 1, UINT64_MAX},
    {"limits", "max_video_bytes", KEY_U64, OFF(limits.max_video_bytes), 0, 1, UINT64_MAX},
    {"limits", "max_video_frames", KEY_U32, OFF(limits.max_video_frames), 0, 1, UINT32_MAX},
    {"limits", "max_output_bytes", KEY_U64, OFF(limits.max_output_bytes), 0, 1, UINT64_MAX},
    {"log", "level", KEY_LEVEL, 0, 0, 0, 0},
    {"service", "drain_timeout_s", KEY_U32, OFF(drain_timeout_s), 0, 1, 3600},
    {"service", "drain_delay_s", KEY_U32, OFF(drain_delay_s), 0, 0, 3600},
    {"dump", "dir", KEY_STR, OFF(dump.dir), sizeof(((dvppd_config *)0)->dump.dir), 0, 0},
    {"dump", "max_requests", KEY_U32, OFF(dump.max_requests), 0, 1, 1u << 20},
    {"dump", "max_bytes", KEY_U64, OFF(dump.max_bytes), 0, 4096, (uint64_t)1 << 44},
    {"dump", "remote", KEY_BOOL, OFF(dump.remote), 0, 0, 0},
    {"trace", "keep", KEY_U32, OFF(trace.keep), 0, 1, 1u << 16},
    {"trace", "max_bytes", KEY_U64, OFF(trace.max_bytes), 0, 4096, (uint64_t)1 << 34},
    {"trace", "max_events", KEY_U32, OFF(trace.max_events), 0, 16, 1u << 20},
    {"trace", "capture_events", KEY_U32, OFF(trace.capture_events), 0, 16, 1u << 24},
    {"trace", "max_seconds", KEY_U32, OFF(trace.max_seconds), 0, 1, 3600},
};

static const key_def *find_key(const char *section, const char *name)
{
    for (size_t i = 0; i < sizeof(k_keys) / sizeof(k_keys[0]); i++)
        if (strcmp(k_keys[i].section, section) == 0 &&
            strcmp(k_keys[i].name, name) == 0)
            return &k_keys[i];
    return NULL;
}

static dvpp_status set_number(dvppd_config *c, const key_def *k, json_t *v,
                              const char *path, dvpp_err *err)
{
    json_int_t n;

    if (!json_is_integer(v) || (n = json_integer_value(v)) < 0 ||
        (uint64_t)n < k->min || (uint64_t)n > k->max)
        return dvpp_err_set(err, DVPP_EINVAL, k->name,
                            "%s.%s: want an integer in [%llu, %llu]", path,
                            k->name, (unsigned long long)k->min,
                            (unsigned long long)k->max);
    if (k->kind == KEY_U64)
        *(uint64_t *)((char *)c + k->offset) = (uint64_t)n;
    else
        *(uint32_t *)((char *)c + k->offset) = (uint32_t)n;
    return DVPP_OK;
}

/* aipp.configs: {"name": "path", ...}; the files are read at start. */
static dvpp_status set_aipp(dvppd_config *c, json_t *v, dvpp_err *err)
{
    const char *name;
    json_t *path;

    if (!json_is_object(v))
        return dvpp_err_set(err, DVPP_EINVAL, "configs",
                            "aipp.configs: want {\"name\": \"path\"}");
    c->naipp = 0;
    json_object_foreach(v, name, path) {
        dvppd_aipp_entry *e = &c->aipp[c->naipp];
        const char *s = json_string_value(path);
        if (c->naipp == DVPPD_MAX_AIPP_CONFIGS)
            return dvpp_err_set(err, DVPP_EINVAL, "configs",
                                "aipp.configs: at most %d", DVPPD_MAX_AIPP_CONFIGS);
        if (!*name || strlen(name) >= sizeof(e->name) || !s || !*s ||
            strlen(s) >= sizeof(e->path))
            return dvpp_err_set(err, DVPP_EINVAL, "configs",
                                "aipp.configs.%s: want a name below %zu bytes and "
                                "a path string below %zu bytes", name,
                                sizeof(e->name), sizeof(e->path));
        memcpy(e->name, name, strlen(name) + 1);
        memcpy(e->path, s, strlen(s) + 1);
        c->naipp++;
    }
    return DVPP_OK;
}

/* socket.allow_uids / allow_gids: arrays of ids (the count follows the
 * array in dvppd_sock_config). */
static dvpp_status set_ids(dvppd_config *c, const key_def *k, json_t *v, const char *path,
                          dvpp_err *err)
{
    uint32_t *ids = (uint32_t *)((char *)c + k->offset);
    uint32_t *n = ids + DVPPD_MAX_IDS;
    size_t i;
    json_t *x;

    if (!json_is_array(v) || json_array_size(v) > DVPPD_MAX_IDS)
        return dvpp_err_set(err, DVPP_EINVAL, k->name, "%s.%s: want an array of at most "
                            "%d ids", path, k->name, DVPPD_MAX_IDS);
    json_array_foreach(v, i, x) {
        if (!json_is_integer(x) || json_integer_value(x) < 0 ||
            json_integer_value(x) > UINT32_MAX - 1)
            return dvpp_err_set(err, DVPP_EINVAL, k->name, "%s.%s[%zu]: want an id",
                                path, k->name, i);
        ids[i] = (uint32_t)json_integer_value(x);
    }
    *n = (uint32_t)json_array_size(v);
    return DVPP_OK;
}

/* socket.allow_groups: group names, each resolved now (a name the host
 * does not know is an error, not a silently empty allow list). */
static dvpp_status set_groups(dvppd_sock_config *c, json_t *v, dvpp_err *err)
{
    size_t i;
    json_t *x;

    if (!json_is_array(v) || json_array_size(v) > DVPPD_MAX_IDS)
        return dvpp_err_set(err, DVPP_EINVAL, "allow_groups", "socket.allow_groups: want "
                            "an array of at most %d group names", DVPPD_MAX_IDS);
    json_array_foreach(v, i, x) {
        const char *name = json_string_value(x);
        struct group *g;
        if (!name || !*name || strlen(name) >= sizeof(c->allow_groups[0]))
            return dvpp_err_set(err, DVPP_EINVAL, "allow_groups", "socket.allow_groups"
                                "[%zu]: want a group name below %zu bytes", i,
                                sizeof(c->allow_groups[0]));
        g = getgrnam(name);
        if (!g)
            return dvpp_err_set(err, DVPP_EINVAL, "allow_groups", "socket.allow_groups"
                                "[%zu]: no group named '%s' on this host", i, name);
        memcpy(c->allow_groups[i], name, strlen(name) + 1);
        c->group_gids[i] = (uint32_t)g->gr_gid;
    }
    c->n_groups = (uint32_t)json_array_size(v);
    return DVPP_OK;
}

/* device.engine_channels: {"vdec": 1, ...}, an engine's own channel count
 * (0 = device.channels); engines not named keep device.channels. */
static dvpp_status set_engines(dvppd_config *c, const key_def *k, json_t *v, dvpp_err *err)
{
    const char *name;
    json_t *n;

    if (!json_is_object(v))
        return dvpp_err_set(err, DVPP_EINVAL, k->name, "device.engine_channels: want "
                            "{\"engine\": channels}");
    memset(c->engine_channels, 0, sizeof(c->engine_channels));
    json_object_foreach(v, name, n) {
        int e = 0;
        while (e < DVPP_ENGINE_COUNT && strcmp(dvpp_engine_name(e), name))
            e++;
        if (e == DVPP_ENGINE_COUNT)
            return dvpp_err_set(err, DVPP_EINVAL, k->name, "device.engine_channels.%.32s: "
                                "no such engine (jpegd, jpege, pngd, vpc, aipp, vdec, venc)",
                                name);
        if (!json_is_integer(n) || json_integer_value(n) < 0 ||
            (uint64_t)json_integer_value(n) > k->max)
            return dvpp_err_set(err, DVPP_EINVAL, k->name, "device.engine_channels.%s: want "
                                "an integer in [0, %llu]", name, (unsigned long long)k->max);
        c->engine_channels[e] = (uint32_t)json_integer_value(n);
    }
    return DVPP_OK;
}

static dvpp_status set_key(dvppd_config *c, const key_def *k, json_t *v,
                           const char *path, dvpp_err *err)
{
    dvpp_log_level lvl;
    const char *s = json_string_value(v);

    switch (k->kind) {
    case KEY_U64:
    case KEY_U32:
        return set_number(c, k, v, path, err);
    case KEY_MODE:
        /* An octal string ("0660") or a number as JSON has no octal. */
        if (s) {
            char *end;
            unsigned long m = strtoul(s, &end, 8);
            if (*end || m > 0777)
                break;
            c->socket_mode = (uint32_t)m;
            return DVPP_OK;
        }
        return set_number(c, k, v, path, err);
    case KEY_STR:
        if (!s || strlen(s) >= k->size)
            break;
        memcpy((char *)c + k->offset, s, strlen(s) + 1);
        return DVPP_OK;
    case KEY_LISTEN:
        if (!s)
            break;
        return dvppd_config_set_listen(c, s, err);
    case KEY_LEVEL:
        if (!s || !dvpp_log_level_parse(s, &lvl))
            break;
        c->log_level = lvl;
        return DVPP_OK;
    case KEY_AIPP:
        return set_aipp(c, v, err);
    case KEY_IDS:
        return set_ids(c, k, v, path, err);
    case KEY_GROUPS:
        return set_groups(&c->sock, v, err);
    case KEY_ENGINES:
        return set_engines(c, k, v, err);
    case KEY_BOOL:
        if (!json_is_boolean(v))
            break;
        *(bool *)((char *)c + k->offset) = json_is_true(v);
        return DVPP_OK;
    case KEY_AUTO_BOOL: /* true, false or "auto" (what --check-config shows) */
        if (json_is_string(v) && !strcmp(json_string_value(v), "auto")) {
            *(int32_t *)((char *)c + k->offset) = DVPPD_CONSOLE_AUTO;
            return DVPP_OK;
        }
        if (!json_is_boolean(v))
            break;
        *(int32_t *)((char *)c + k->offset) = json_is_true(v) ? 1 : 0;
        return DVPP_OK;
    }
    return dvpp_err_set(err, DVPP_EINVAL, k->name, "%s.%s: bad value", path,
                        k->name);
}

static dvpp_status apply_json(dvppd_config *c, json_t *root, dvpp_err *err)
{
    const char *section, *name;
    json_t *obj, *v;

    if (!json_is_object(root))
        return dvpp_err_set(err, DVPP_EINVAL, "", "the top level is not an object");
    json_object_foreach(root, section, obj) {
        if (!strcmp(section, "presets")) { /* names are the user's, not keys */
            dvpp_status st = dvppd_preset_config_take(obj, c->presets,
                                                      sizeof(c->presets), err);
            if (st != DVPP_OK)
                return st;
            continue;
        }
        if (!json_is_object(obj))
            return dvpp_err_set(err, DVPP_EINVAL, section,
                                "%s: want an object of keys", section);
        json_object_foreach(obj, name, v) {
            const key_def *k = find_key(section, name);
            dvpp_status st;
            if (!k)
                return dvpp_err_set(err, DVPP_EINVAL, name,
                                    "%s.%s: unknown key", section, name);
            st = set_key(c, k, v, section, err);
            if (st != DVPP_OK)
                return st;
        }
    }
    return DVPP_OK;
}

/* A configuration file is small; anything larger is a mistake. */
#define CONFIG_MAX_BYTES (1u << 20)

/* The file's text with every '#' comment line blanked (spaces keep the
 * line and column numbers of JSON errors right). Caller frees. */
static char *read_config_text(const char *path, size_t *len, dvpp_err *err)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    size_t n = 0;

    if (!f) {
        dvpp_err_set(err, DVPP_EIO, "config", "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    text = malloc(CONFIG_MAX_BYTES + 1);
    if (text)
        n = fread(text, 1, CONFIG_MAX_BYTES + 1, f);
    if (!text || ferror(f) || n > CONFIG_MAX_BYTES) {
        dvpp_err_set(err, text && n > CONFIG_MAX_BYTES ? DVPP_ELIMIT : DVPP_EIO, "config",
                     "cannot read %s: %s", path,
                     text && n > CONFIG_MAX_BYTES ? "larger than 1 MiB" : strerror(errno));
        free(text);
        fclose(f);
        return NULL;
    }
    fclose(f);
    text[n] = '\0';
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && (text[j] == ' ' || text[j] == '\t'))
            j++;
        bool comment = j < n && text[j] == '#';
        while (j < n && text[j] != '\n') {
            if (comment)
                text[j] = ' ';
            j++;
        }
        i = j + 1;
    }
    *len = n;
    return text;
}

dvpp_status dvppd_config_load(dvppd_config *c, const char *path, dvpp_err *err)
{
    json_error_t je;
    json_t *root;
    dvpp_status st;
    char msg[DVPP_ERR_LEN];
    size_t len = 0;
    char *text = read_config_text(path, &len, err);

    if (!text)
        return err ? err->status : DVPP_EIO;
    root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!root)
        return dvpp_err_set(err, DVPP_EINVAL, "config", "%s:%d: %s", path,
                            je.line, je.text);
    st = apply_json(c, root, err);
    json_decref(root);
    if (st != DVPP_OK) {
        if (err) {
            memcpy(msg, err->msg, sizeof(msg));
            dvpp_err_set(err, st, err->field, "%s: %s", path, msg);
        }
        return st;
    }
    snprintf(c->source, sizeof(c->source), "%s", path);
    return DVPP_OK;
}

static void add_http_dump(json_t *h, const dvppd_http_config *c)
{
    json_object_set_new(h, "threads", json_integer(c->threads));
    json_object_set_new(h, "max_connections", json_integer(c->max_connections));
    json_object_set_new(h, "max_connections_per_ip", json_integer(c->max_per_ip));
    json_object_set_new(h, "idle_timeout_s", json_integer(c->idle_timeout_s));
    json_object_set_new(h, "request_timeout_s", json_integer(c->request_timeout_s));
    json_object_set_new(h, "connection_memory", json_integer(c->connection_memory));
    json_object_set_new(h, "max_body_bytes", json_integer((json_int_t)c->max_body_bytes));
    json_object_set_new(h, "max_batch_bytes", json_integer((json_int_t)c->max_batch_bytes));
    json_object_set_new(h, "max_body_memory", json_integer((json_int_t)c->max_body_memory));
    json_object_set_new(h, "max_batch_items", json_integer(c->max_batch_items));
    json_object_set_new(h, "max_jobs", json_integer(c->max_jobs));
    json_object_set_new(h, "job_ttl_s", json_integer(c->job_ttl_s));
    json_object_set_new(h, "console", c->console == DVPPD_CONSOLE_AUTO ? json_string("auto")
                                                                       : json_boolean(c->console));
}

static json_t *ids_json(const uint32_t *ids, uint32_t n)
{
    json_t *a = json_array();

    for (uint32_t i = 0; a && i < n; i++)
        json_array_append_new(a, json_integer(ids[i]));
    return a;
}

static void add_sock_dump(json_t *s, const dvppd_sock_config *c)
{
    json_object_set_new(s, "allow_uids", ids_json(c->allow_uids, c->n_uids));
    json_object_set_new(s, "allow_gids", ids_json(c->allow_gids, c->n_gids));
    json_t *groups = json_array();
    for (uint32_t i = 0; groups && i < c->n_groups; i++)
        json_array_append_new(groups, json_string(c->allow_groups[i]));
    json_object_set_new(s, "allow_groups", groups ? groups : json_array());
    json_object_set_new(s, "max_connections", json_integer(c->max_connections));
    json_object_set_new(s, "max_inline", json_integer((json_int_t)c->max_inline));
    json_object_set_new(s, "max_rings", json_integer(c->max_rings));
    json_object_set_new(s, "max_slots", json_integer(c->max_slots));
    json_object_set_new(s, "max_ring_bytes", json_integer((json_int_t)c->max_ring_bytes));
    json_object_set_new(s, "max_inflight", json_integer(c->max_inflight));
    json_object_set_new(s, "lease_timeout_ms", json_integer(c->lease_timeout_ms));
    json_object_set_new(s, "max_video_channels", json_integer(c->max_video_channels));
    json_object_set_new(s, "max_video_buffer_bytes",
                        json_integer((json_int_t)c->max_video_buffer_bytes));
    json_object_set_new(s, "max_streams", json_integer(c->max_streams));
    json_object_set_new(s, "max_sync_waiters", json_integer(c->max_sync_waiters));
    json_object_set_new(s, "video_deadline_ms", json_integer(c->video_deadline_ms));
}

static void add_engines_dump(json_t *dev, const dvppd_config *c)
{
    json_t *o = json_object();

    for (int e = 0; o && e < DVPP_ENGINE_COUNT; e++)
        if (c->engine_channels[e])
            json_object_set_new(o, dvpp_engine_name(e), json_integer(c->engine_channels[e]));
    json_object_set_new(dev, "engine_channels", o ? o : json_object());
}

static void add_aipp_dump(json_t *root, const dvppd_config *c)
{
    json_t *cfgs = json_object();

    for (uint32_t i = 0; i < c->naipp; i++)
        json_object_set_new(cfgs, c->aipp[i].name, json_string(c->aipp[i].path));
    json_object_set_new(root, "aipp", json_pack("{s:o}", "configs", cfgs));
}

char *dvppd_config_dump(const dvppd_config *c)
{
    static const char *const levels[8] = {"", "", "", "err", "warn", "", "info",
                                           "debug"};
    char listen[96], mode[8];
    json_t *j;
    char *s;

    snprintf(listen, sizeof(listen), "%s:%u", c->http_addr, c->http_port);
    snprintf(mode, sizeof(mode), "%04o", c->socket_mode);
    j = json_pack("{s:{s:s}, s:{s:s, s:s}, s:{s:I, s:I, s:I, s:I, s:I, s:I}, "
                  "s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I}, s:{s:s}}",
                  "http", "listen", listen,
                  "socket", "path", c->socket_path, "mode", mode,
                  "device", "channels", (json_int_t)c->channels, "queue_depth",
                  (json_int_t)c->queue_depth, "max_pixels_in_flight",
                  (json_int_t)c->max_pixels_in_flight, "max_bytes_in_flight",
                  (json_int_t)c->max_bytes_in_flight, "idle_trim_ms",
                  (json_int_t)c->idle_trim_ms, "idle_keep_bytes",
                  (json_int_t)c->idle_keep_bytes,
                  "limits", "max_encoded_bytes",
                  (json_int_t)c->limits.max_encoded_bytes, "max_pixels",
                  (json_int_t)c->limits.max_pixels, "max_side",
                  (json_int_t)c->limits.max_side, "max_jpeg_scans",
                  (json_int_t)c->limits.max_jpeg_scans, "max_png_chunk",
                  (json_int_t)c->limits.max_png_chunk, "max_png_chunks",
                  (json_int_t)c->limits.max_png_chunks, "max_decode_memory",
                  (json_int_t)c->limits.max_decode_memory,
                  "log", "level", levels[c->log_level & 7]);
    if (!j)
        return NULL;
    add_http_dump(json_object_get(j, "http"), &c->http);
    json_object_set_new(json_object_get(j, "limits"), "max_video_bytes",
                        json_integer((json_int_t)c->limits.max_video_bytes));
    json_object_set_new(json_object_get(j, "limits"), "max_video_frames",
                        json_integer((json_int_t)c->limits.max_video_frames));
    json_object_set_new(json_object_get(j, "limits"), "max_output_bytes",
                        json_integer((json_int_t)c->limits.max_output_bytes));
    add_sock_dump(json_object_get(j, "socket"), &c->sock);
    add_aipp_dump(j, c);
    add_engines_dump(json_object_get(j, "device"), c);
    json_object_set_new(j, "service", json_pack("{s:I, s:I}", "drain_timeout_s",
                                                 (json_int_t)c->drain_timeout_s,
                                                 "drain_delay_s",
                                                 (json_int_t)c->drain_delay_s));
    json_object_set_new(j, "dump", json_pack("{s:s, s:I, s:I, s:b}", "dir", c->dump.dir,
                                              "max_requests",
                                              (json_int_t)c->dump.max_requests, "max_bytes",
                                              (json_int_t)c->dump.max_bytes, "remote",
                                              c->dump.remote));
    json_object_set_new(j, "trace", json_pack("{s:I, s:I, s:I, s:I, s:I}", "keep",
                                               (json_int_t)c->trace.keep, "max_bytes",
                                               (json_int_t)c->trace.max_bytes, "max_events",
                                               (json_int_t)c->trace.max_events,
                                               "capture_events",
                                               (json_int_t)c->trace.capture_events,
                                               "max_seconds",
                                               (json_int_t)c->trace.max_seconds));
    json_object_set_new(j, "presets", c->presets[0] ? json_loads(c->presets, 0, NULL)
                                                     : json_object());
    s = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
    json_decref(j);
    return s;
}
