/* dvpp_log: a small leveled logger.
 *
 * One sink for the process (stderr by default, the daemon may install a
 * journald sink), configured once at start-up before threads run. Lines
 * are formatted into a stack buffer and handed to the sink whole, so lines
 * from different threads never interleave.
 */
#ifndef DVPP_LOG_H
#define DVPP_LOG_H

#include <stdarg.h>
#include <stdbool.h>

typedef enum dvpp_log_level {
    DVPP_LOG_ERR = 3, /* syslog priorities, so a journald sink maps 1:1 */
    DVPP_LOG_WARN = 4,
    DVPP_LOG_INFO = 6,
    DVPP_LOG_DEBUG = 7,
} dvpp_log_level;

/* Receives one complete line without the trailing newline. */
typedef void (*dvpp_log_sink)(void *ctx, dvpp_log_level level, const char *line);

/* Install @sink (NULL = stderr) and the most verbose level to emit.
 * Not thread-safe: call during start-up. */
void dvpp_log_configure(dvpp_log_level max_level, dvpp_log_sink sink, void *ctx);

/* Change the level while threads log (a reload); thread-safe. */
void dvpp_log_set_level(dvpp_log_level max_level);

/* True when @level would be emitted (skip building expensive messages). */
bool dvpp_log_enabled(dvpp_log_level level);

/* Parse "err", "warn", "info", "debug". */
bool dvpp_log_level_parse(const char *s, dvpp_log_level *out);

void dvpp_log(dvpp_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
