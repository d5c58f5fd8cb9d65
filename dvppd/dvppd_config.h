/* dvppd_config: the daemon's configuration.
 *
 * Built-in defaults need no file (HTTP on 127.0.0.1:8080, socket
 * run/dvppd.sock, channels = CPU count, the dvpp_limits defaults). A JSON
 * file (--config FILE, else /etc/dvppd/dvppd.conf when it exists) overrides
 * them; command-line flags override the file. Unknown keys, wrong types and
 * out-of-range values are errors naming the key path ("device.channels").
 * Lines whose first non-blank character is '#' are comments (the shipped
 * /etc/dvppd/dvppd.conf explains every key that way).
 * docs/configuration.md lists every key with its default.
 */
#ifndef DVPPD_CONFIG_H
#define DVPPD_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "device/dvpp_device.h"
#include "dvpp_limits.h"
#include "dvpp_log.h"
#include "dvpp_status.h"
#include "dvppd_trace.h"

#define DVPPD_DEFAULT_CONFIG "/etc/dvppd/dvppd.conf"

#define DVPPD_MAX_AIPP_CONFIGS 32

/* Room for the config's presets (dvppd_presets.h: at most 64 KiB). */
#define DVPPD_PRESETS_TEXT_CAP (65536 + 1)

/* A named server-side ATC aipp_op config (aipp.configs: {"name": "path"}). */
typedef struct dvppd_aipp_entry {
    char name[64];
    char path[256];
} dvppd_aipp_entry;

/* The HTTP front end's serving limits (http.*). */
typedef struct dvppd_http_config {
    uint32_t threads;            /* libmicrohttpd poll() worker threads */
    uint32_t max_connections;
    uint32_t max_per_ip;         /* max_connections_per_ip, 0 = unlimited */
    uint32_t idle_timeout_s;     /* inactivity before a connection is closed */
    uint32_t request_timeout_s;  /* absolute deadline from headers to answer */
    uint32_t connection_memory;  /* bytes per connection (headers) */
    uint64_t max_body_bytes;     /* single-image bodies; 0 = limits.max_encoded_bytes */
    uint64_t max_batch_bytes;    /* batch and job bodies */
    uint64_t max_body_memory;    /* bodies being received, all connections */
    uint32_t max_batch_items;
    uint32_t max_jobs;           /* jobs kept at once (running or finished) */
    uint32_t job_ttl_s;          /* how long a finished job is kept */
    /* http.console: the web console (GET /, /console/...). DVPPD_CONSOLE_AUTO
     * until the file says true or false; dvppd_config_console_on resolves it. */
    int32_t console;
} dvppd_http_config;

#define DVPPD_CONSOLE_AUTO (-1)

#define DVPPD_MAX_IDS 16

/* The socket front end's limits (socket.*). */
typedef struct dvppd_sock_config {
    uint32_t allow_uids[DVPPD_MAX_IDS], n_uids; /* empty: own uid and root */
    uint32_t allow_gids[DVPPD_MAX_IDS], n_gids;
    /* socket.allow_groups: group names, resolved to gids at load; a peer
     * whose primary or supplementary groups include one is allowed. */
    char allow_groups[DVPPD_MAX_IDS][32];
    uint32_t group_gids[DVPPD_MAX_IDS], n_groups;
    uint32_t max_connections;
    uint64_t max_inline;         /* inline inputs and outputs */
    uint32_t max_rings;          /* per connection */
    uint32_t max_slots;          /* per ring */
    uint64_t max_ring_bytes;     /* per ring */
    uint32_t max_inflight;       /* jobs per connection */
    uint32_t lease_timeout_ms;
    uint32_t max_video_channels; /* open video channels per connection */
    uint64_t max_video_buffer_bytes; /* video bytes a connection's channels hold */
    uint32_t max_streams;        /* client streams per connection */
    uint32_t max_sync_waiters;   /* StreamSyncs waiting at once per connection */
    uint32_t video_deadline_ms;  /* a socket video decode's longest run */
} dvppd_sock_config;

/* Dumps of a request's intermediates (dump.*, docs/dump.md); restart-only. */
typedef struct dvppd_dump_config {
    char dir[256];               /* dump.dir; "" = dumps off */
    uint32_t max_requests;       /* dump.max_requests: folders kept */
    uint64_t max_bytes;          /* dump.max_bytes: all folders together */
    bool remote;                 /* dump.remote: non-loopback callers may dump */
} dvppd_dump_config;

typedef struct dvppd_config {
    char http_addr[64];          /* http.listen host */
    uint16_t http_port;          /* http.listen port; 0 disables HTTP */
    dvppd_http_config http;      /* http.* serving limits */
    dvppd_aipp_entry aipp[DVPPD_MAX_AIPP_CONFIGS]; /* aipp.configs */
    uint32_t naipp;
    char socket_path[108];       /* socket.path; "" disables the socket */
    uint32_t socket_mode;        /* socket.mode, octal permissions */
    dvppd_sock_config sock;      /* socket.* limits */
    uint32_t channels;           /* device.channels per engine; 0 = CPUs */
    /* device.engine_channels: one engine's own count, 0 = device.channels */
    uint32_t engine_channels[DVPP_ENGINE_COUNT];
    uint32_t queue_depth;        /* device.queue_depth per engine */
    uint64_t max_pixels_in_flight; /* device.max_pixels_in_flight */
    uint64_t max_bytes_in_flight;  /* device.max_bytes_in_flight */
    uint32_t idle_trim_ms;         /* device.idle_trim_ms; 0 = never */
    uint64_t idle_keep_bytes;      /* device.idle_keep_bytes */
    dvpp_limits limits;          /* limits.* */
    dvpp_log_level log_level;    /* log.level */
    uint32_t drain_timeout_s;    /* service.drain_timeout_s: stop waits this long */
    uint32_t drain_delay_s;      /* service.drain_delay_s: /readyz 503 this long first */
    dvppd_dump_config dump;      /* dump.* */
    dvppd_trace_config trace;    /* trace.* (dvppd_trace.h) */
    /* presets: the config's named specs as compact JSON ("" none), checked
     * for shape here and parsed into the settings' dvppd_preset_set
     * (dvppd_presets.h); a value, so the config stays copyable. */
    char presets[DVPPD_PRESETS_TEXT_CAP];
    char source[256];            /* where it came from, for the log */
} dvppd_config;

/* The built-in defaults. */
void dvppd_config_defaults(dvppd_config *c);

/* Merge the JSON file at @path into @c. DVPP_EIO if unreadable,
 * DVPP_EINVAL with "FILE: key.path: reason" otherwise. */
dvpp_status dvppd_config_load(dvppd_config *c, const char *path, dvpp_err *err);

/* "HOST:PORT" into the config. */
dvpp_status dvppd_config_set_listen(dvppd_config *c, const char *addr,
                                    dvpp_err *err);

/* Whether the web console is served: http.console when the file set it,
 * else on only for a loopback http.listen host (127.0.0.0/8, ::1,
 * localhost), so a daemon listening on a public address shows no page
 * unless asked to. */
bool dvppd_config_console_on(const dvppd_config *c);

/* The effective configuration as JSON (for --check-config); caller frees. */
char *dvppd_config_dump(const dvppd_config *c);

#endif
