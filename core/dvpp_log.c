#include "dvpp_log.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void stderr_sink(void *ctx, dvpp_log_level level, const char *line)
{
    static const char *const tags[8] = {"", "", "", "error", "warn", "", "info",
                                        "debug"};
    struct timespec ts;
    struct tm tm;
    char stamp[32];

    (void)ctx;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
    fprintf(stderr, "%s.%03ldZ %s: %s\n", stamp, ts.tv_nsec / 1000000,
            tags[level & 7], line);
}

/* The log dispatch table: the sink written only by dvpp_log_configure() at
 * start-up; the level also by dvpp_log_set_level() (a reload), atomically. */
static struct {
    atomic_int max;
    dvpp_log_sink sink;
    void *ctx;
} g_log = {DVPP_LOG_INFO, stderr_sink, NULL};

void dvpp_log_configure(dvpp_log_level max_level, dvpp_log_sink sink, void *ctx)
{
    atomic_store(&g_log.max, (int)max_level);
    g_log.sink = sink ? sink : stderr_sink;
    g_log.ctx = ctx;
}

void dvpp_log_set_level(dvpp_log_level max_level)
{
    atomic_store(&g_log.max, (int)max_level);
}

bool dvpp_log_enabled(dvpp_log_level level)
{
    return (int)level <= atomic_load_explicit(&g_log.max, memory_order_relaxed);
}

bool dvpp_log_level_parse(const char *s, dvpp_log_level *out)
{
    static const struct {
        const char *name;
        dvpp_log_level level;
    } names[] = {{"err", DVPP_LOG_ERR},   {"error", DVPP_LOG_ERR},
                 {"warn", DVPP_LOG_WARN}, {"warning", DVPP_LOG_WARN},
                 {"info", DVPP_LOG_INFO}, {"debug", DVPP_LOG_DEBUG}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(s, names[i].name) == 0) {
            *out = names[i].level;
            return true;
        }
    }
    return false;
}

void dvpp_log(dvpp_log_level level, const char *fmt, ...)
{
    char line[1024];
    va_list ap;

    if (!dvpp_log_enabled(level))
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    g_log.sink(g_log.ctx, level, line);
}
