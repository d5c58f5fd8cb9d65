/* dvppd_dump: dump.dir, who may dump, folder names and retention
 * (dvppd_dump.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dvpp_log.h"
#include "dvppd_dump.h"

struct dvppd_dump {
    int root_fd;                 /* dump.dir, O_DIRECTORY */
    dvppd_dump_config cfg;
    atomic_uint_fast64_t counter;
    pthread_mutex_t mu;          /* retention and @active */
    /* The folders of dumps begun and not yet ended (dvppd_dump_end): never
     * pruned, since their requests still write into them. Under @mu. */
    char (*active)[DVPP_DUMP_NAME_LEN];
    size_t nactive, cap_active;
};

/* @name into the in-progress set (under @d->mu). */
static dvpp_status active_add(dvppd_dump *d, const char *name, dvpp_err *err)
{
    if (d->nactive == d->cap_active) {
        size_t nc = d->cap_active ? d->cap_active * 2 : 16;
        void *na = realloc(d->active, nc * sizeof(*d->active));
        if (!na)
            return dvpp_err_set(err, DVPP_ENOMEM, "dump", "out of memory");
        d->active = na, d->cap_active = nc;
    }
    memcpy(d->active[d->nactive++], name, DVPP_DUMP_NAME_LEN);
    return DVPP_OK;
}

/* @name out of the in-progress set (under @d->mu); absent is a no-op. */
static void active_remove(dvppd_dump *d, const char *name)
{
    for (size_t i = 0; i < d->nactive; i++) {
        if (!strcmp(d->active[i], name)) {
            memcpy(d->active[i], d->active[--d->nactive], DVPP_DUMP_NAME_LEN);
            return;
        }
    }
}

/* What retention keeps: a dump in progress, or the one just ended. */
typedef struct keep_ctx {
    const dvppd_dump *d;
    const char *ended;
} keep_ctx;

static bool keep_folder(void *ctx, const char *name)
{
    const keep_ctx *k = ctx;

    if (k->ended && !strcmp(name, k->ended))
        return true;
    for (size_t i = 0; i < k->d->nactive; i++)
        if (!strcmp(k->d->active[i], name))
            return true;
    return false;
}

/* dump.dir exists (or is made 0700) and is a private directory. */
static dvpp_status check_dir(const char *dir, dvpp_err *err)
{
    struct stat sb;

    if (lstat(dir, &sb) != 0 && errno == ENOENT && mkdir(dir, 0700) != 0)
        return dvpp_err_set(err, DVPP_EIO, "dump.dir", "dump.dir %.200s: cannot make it: %s",
                            dir, strerror(errno));
    if (lstat(dir, &sb) != 0)
        return dvpp_err_set(err, DVPP_EIO, "dump.dir", "dump.dir %.200s: %s", dir,
                            strerror(errno));
    if (S_ISLNK(sb.st_mode))
        return dvpp_err_set(err, DVPP_EINVAL, "dump.dir",
                            "dump.dir %.200s is a symbolic link: give the real directory",
                            dir);
    if (!S_ISDIR(sb.st_mode))
        return dvpp_err_set(err, DVPP_EINVAL, "dump.dir", "dump.dir %.200s is not a directory",
                            dir);
    if (sb.st_mode & S_IWOTH)
        return dvpp_err_set(err, DVPP_EINVAL, "dump.dir",
                            "dump.dir %.200s is writable by everyone: dumps hold request "
                            "pixels, use a private directory",
                            dir);
    return DVPP_OK;
}

dvpp_status dvppd_dump_new(const dvppd_dump_config *c, dvppd_dump **out, dvpp_err *err)
{
    dvppd_dump *d;
    dvpp_status st;

    *out = NULL;
    if (!c->dir[0])
        return DVPP_OK;
    st = check_dir(c->dir, err);
    if (st != DVPP_OK)
        return st;
    d = calloc(1, sizeof(*d));
    if (!d)
        return dvpp_err_set(err, DVPP_ENOMEM, "dump.dir", "out of memory");
    d->cfg = *c;
    atomic_init(&d->counter, 0);
    d->root_fd = open(c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (d->root_fd < 0) {
        st = dvpp_err_set(err, DVPP_EIO, "dump.dir", "dump.dir %.200s: %s", c->dir,
                          strerror(errno));
        free(d);
        return st;
    }
    pthread_mutex_init(&d->mu, NULL);
    *out = d;
    return DVPP_OK;
}

void dvppd_dump_free(dvppd_dump *d)
{
    if (!d)
        return;
    close(d->root_fd);
    pthread_mutex_destroy(&d->mu);
    free(d->active);
    free(d);
}

bool dvppd_dump_peer_allowed(const struct sockaddr *peer, bool remote)
{
    static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

    if (remote)
        return true;
    if (!peer)
        return false;
    if (peer->sa_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)peer;
        return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
    }
    if (peer->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)peer;
        const uint8_t *b = a->sin6_addr.s6_addr;
        if (IN6_IS_ADDR_LOOPBACK(&a->sin6_addr))
            return true;
        return !memcmp(b, v4mapped, sizeof(v4mapped)) && b[12] == 127;
    }
    return false;
}

dvpp_status dvppd_dump_flag(const char *value, bool *on, dvpp_err *err)
{
    *on = false;
    if (!value || !strcmp(value, "0") || !strcasecmp(value, "false") ||
        !strcasecmp(value, "no"))
        return DVPP_OK;
    if (!strcmp(value, "1") || !strcasecmp(value, "true") || !strcasecmp(value, "yes")) {
        *on = true;
        return DVPP_OK;
    }
    return dvpp_err_set(err, DVPP_EINVAL, "dump", "dump: want 1 or 0, not '%.32s'", value);
}

dvpp_status dvppd_dump_allow(const dvppd_dump *d, const struct sockaddr *peer,
                             dvpp_err *err)
{
    if (!d)
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "dump",
                            "dumps are off on this daemon (dump.dir is not set)");
    if (!dvppd_dump_peer_allowed(peer, d->cfg.remote))
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "dump",
                            "dumps are for loopback callers only (dump.remote is false)");
    return DVPP_OK;
}

dvpp_status dvppd_dump_begin(dvppd_dump *d, dvpp_dump *out, char *name, dvpp_err *err)
{
    struct timespec ts;
    dvpp_status st;

    clock_gettime(CLOCK_REALTIME, &ts);
    dvpp_dump_name(name, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
                   atomic_fetch_add(&d->counter, 1));
    /* In the set before the folder exists, so no retention sees it unkept. */
    pthread_mutex_lock(&d->mu);
    st = active_add(d, name, err);
    pthread_mutex_unlock(&d->mu);
    if (st != DVPP_OK)
        return st;
    st = dvpp_dump_open(out, d->root_fd, name, false, d->cfg.max_bytes, err);
    if (st != DVPP_OK) {
        pthread_mutex_lock(&d->mu);
        active_remove(d, name);
        pthread_mutex_unlock(&d->mu);
    }
    return st;
}

void dvppd_dump_end(dvppd_dump *d, const char *name)
{
    dvpp_err err;
    unsigned removed = 0;
    keep_ctx k = {.d = d, .ended = name};

    dvpp_err_clear(&err);
    pthread_mutex_lock(&d->mu);
    active_remove(d, name);
    if (dvpp_dump_prune(d->root_fd, d->cfg.max_requests, d->cfg.max_bytes, keep_folder, &k,
                        &removed, &err) != DVPP_OK)
        dvpp_log(DVPP_LOG_WARN, "dump: retention: %s", err.msg);
    pthread_mutex_unlock(&d->mu);
    if (removed)
        dvpp_log(DVPP_LOG_DEBUG, "dump: retention removed %u folder(s)", removed);
}
