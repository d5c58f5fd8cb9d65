/* dvppd_live: the settings a reload may replace, as reference-counted
 * snapshots.
 *
 * A snapshot holds the effective configuration and the named AIPP configs
 * loaded from it. Front ends take one per request (HTTP) or per job and per
 * socket-thread wake-up (socket) and read every live-changeable value from
 * it, so a request runs start to end under one consistent set of settings:
 * a reload never changes a limit or an AIPP config under a request in
 * flight. dvppd_live_publish swaps the current snapshot; the old one is
 * freed when its last holder puts it.
 *
 * Restart-only keys (listen address, threads, socket path, ...) cannot
 * change in a running process: dvppd_settings_carry copies them from the
 * running snapshot into the new one and names the ones the file changed.
 *
 * Thread-safety: every function may be called from any thread.
 * Ownership: dvppd_live owns the current snapshot; each dvppd_live_get
 * reference is the caller's until dvppd_settings_put.
 */
#ifndef DVPPD_LIVE_H
#define DVPPD_LIVE_H

#include <stdatomic.h>
#include <stdint.h>

#include "dvppd_aipp.h"
#include "dvppd_config.h"
#include "dvppd_presets.h"

typedef struct dvppd_settings {
    dvppd_config cfg;          /* effective: restart-only keys as running */
    dvppd_aipp_set aipp;       /* owned */
    dvppd_preset_set presets;  /* owned: shipped + cfg.presets */
    uint64_t generation;       /* 1 for the start-up settings, +1 per reload */
    atomic_uint refs;
} dvppd_settings;

typedef struct dvppd_live dvppd_live;

/* Settings from @c: the AIPP files it names are read and parsed now, then
 * the presets (shipped + @c->presets, each spec parsed).
 * DVPP_EIO / DVPP_EINVAL naming the file or presets.NAME...; DVPP_ENOMEM.
 * One reference. */
dvpp_status dvppd_settings_new(const dvppd_config *c, dvppd_settings **out, dvpp_err *err);

/* Drop a reference (NULL is a no-op). */
void dvppd_settings_put(const dvppd_settings *s);

/* Copy every restart-only key of @running into @next; the dotted names of
 * those @next's file had changed go to @changed (at most @cap, each a
 * static string). Returns how many changed. */
unsigned dvppd_settings_carry(const dvppd_config *running, dvppd_config *next,
                              const char **changed, unsigned cap);

/* The holder, starting with @first (taken). */
dvpp_status dvppd_live_new(dvppd_settings *first, dvppd_live **out, dvpp_err *err);
void dvppd_live_free(dvppd_live *l);

/* A reference to the current settings. */
const dvppd_settings *dvppd_live_get(dvppd_live *l);

/* The current generation (cheap: an atomic load), to notice a reload. */
uint64_t dvppd_live_generation(dvppd_live *l);

/* Make @next (taken) the current settings, generation + 1. */
void dvppd_live_publish(dvppd_live *l, dvppd_settings *next);

#endif
