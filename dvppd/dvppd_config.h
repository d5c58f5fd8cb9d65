/* dvppd_config: the daemon's configuration.
 *
 * Built-in defaults need no file (HTTP on 127.0.0.1:8080, socket
 * run/dvppd.sock, channels = CPU count, the dvpp_limits defaults). A JSON
 * file (--config FILE, else /etc/dvppd/dvppd.conf when it exists) overrides
 * them; command-line flags override the file. Unknown keys, wrong types and
 * out-of-range values are errors naming the key path ("device.channels").
 * docs/configuration.md lists every key with its default.
 */
#ifndef DVPPD_CONFIG_H
#define DVPPD_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "dvpp_limits.h"
#include "dvpp_log.h"
#include "dvpp_status.h"

#define DVPPD_DEFAULT_CONFIG "/etc/dvppd/dvppd.conf"

typedef struct dvppd_config {
    char http_addr[64];          /* http.listen host */
    uint16_t http_port;          /* http.listen port; 0 disables HTTP */
    char socket_path[108];       /* socket.path; "" disables the socket */
    uint32_t socket_mode;        /* socket.mode, octal permissions */
    uint32_t channels;           /* device.channels per engine; 0 = CPUs */
    uint32_t queue_depth;        /* device.queue_depth per engine */
    uint64_t max_pixels_in_flight; /* device.max_pixels_in_flight */
    uint64_t max_bytes_in_flight;  /* device.max_bytes_in_flight */
    dvpp_limits limits;          /* limits.* */
    dvpp_log_level log_level;    /* log.level */
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

/* The effective configuration as JSON (for --check-config); caller frees. */
char *dvppd_config_dump(const dvppd_config *c);

#endif
