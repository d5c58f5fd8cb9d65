/* dvpp_avlib: FFmpeg's libraries, loaded with dlopen on first use. */
#define DVPP_AVLIB_FILL /* the names stay FFmpeg's own here */
#include "dvpp_avlib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <libavutil/macros.h>
#include <libswscale/version.h>

enum { LIB_avutil, LIB_swscale, LIB_avcodec, LIB_avformat, LIB_COUNT };

/* Sonames of the major versions the headers are (in load order: each
 * needs the ones before it). */
static const char *const k_soname[LIB_COUNT] = {
    "libavutil.so." AV_STRINGIFY(LIBAVUTIL_VERSION_MAJOR),
    "libswscale.so." AV_STRINGIFY(LIBSWSCALE_VERSION_MAJOR),
    "libavcodec.so." AV_STRINGIFY(LIBAVCODEC_VERSION_MAJOR),
    "libavformat.so." AV_STRINGIFY(LIBAVFORMAT_VERSION_MAJOR),
};

/* The loaded table and the outcome: written once under pthread_once. */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static dvpp__avlib g_av;
static char g_why[200]; /* "" when loaded */

static void *resolve(void *const *handle, int lib, const char *name)
{
    void *p = handle[lib] ? dlsym(handle[lib], name) : NULL;

    if (!p && !g_why[0])
        snprintf(g_why, sizeof(g_why), "%s has no %s", k_soname[lib], name);
    return p;
}

static void load_once(void)
{
    void *handle[LIB_COUNT] = {0};
    void *p;

    for (int i = 0; i < LIB_COUNT && !g_why[0]; i++) {
        handle[i] = dlopen(k_soname[i], RTLD_NOW | RTLD_LOCAL);
        if (!handle[i]) {
            const char *e = dlerror();
            snprintf(g_why, sizeof(g_why), "cannot load %s (%s)", k_soname[i],
                     e ? e : "not found");
        }
    }
    /* memcpy: dlsym's object pointer into a function pointer, as POSIX
     * defines it, without a cast ISO C leaves undefined */
#define DVPP__AV_LOAD(lib, fn)                                       \
    p = resolve(handle, LIB_##lib, #fn);                             \
    memcpy(&g_av.fn, &p, sizeof(p));
    if (!g_why[0]) {
        DVPP_AV_FUNCS(DVPP__AV_LOAD)
    }
#undef DVPP__AV_LOAD
    /* the handles stay open for the life of the process */
}

dvpp_status dvpp__avlib_load(dvpp_err *err)
{
    pthread_once(&g_once, load_once);
    if (g_why[0])
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "video",
                            "video needs FFmpeg's libraries: %s", g_why);
    return DVPP_OK;
}

const dvpp__avlib *dvpp__av(void)
{
    return &g_av;
}
