/* acl_rt_device.c: devices and contexts.
 *
 * Device i (0 <= i < settings.devices) is one libdvpp device, made by the
 * first aclrtSetDevice or aclrtCreateContext naming it, with the channel
 * counts and queue depth aclInit chose. aclrtSetDevice references are
 * counted; the first makes the device's default context (with its default
 * stream), and every call makes it current on the calling thread. When the
 * last reference goes (set references and explicit contexts), the device is
 * torn down: tasks still pending are canceled (their fini runs with
 * ACL_ERROR_RT_DEVICE_TASK_ABORT), streams and contexts are freed, private
 * streams (VDEC/VENC channels') are orphaned until acli_stream_destroy.
 *
 * The current context is per thread (a thread-local pointer plus the
 * context's serial): a destroyed context is noticed through the handle
 * registry, a new one at the same address by its serial.
 */
#include <stdlib.h>
#include <string.h>

#include "acl_rt_int.h"

static _Thread_local struct {
    acli_ctx *ctx;
    uint64_t serial;
} tl_current;

static void set_current(acli_ctx *c)
{
    tl_current.ctx = c;
    tl_current.serial = c ? c->serial : 0;
}

acli_ctx *acli_ctx_current_locked(void)
{
    acli_ctx *c = tl_current.ctx;

    if (!c)
        return NULL;
    if (!acli_handle_ok(c, (acli_kind)ACLI_RT_CONTEXT) || c->serial != tl_current.serial) {
        tl_current.ctx = NULL;
        return NULL;
    }
    return c;
}

/* Under mu: aclInit called and @id a configured device. */
static aclError check_device_locked(const char *fn, int32_t id)
{
    acli_process *P = acli_proc();

    if (!atomic_load(&P->initialized))
        return acli_fail(ACL_ERROR_UNINITIALIZE, "%s: aclInit has not been called", fn);
    if (id < 0 || (uint32_t)id >= P->settings.devices)
        return acli_fail(ACL_ERROR_RT_INVALID_DEVICEID,
                         "%s: device %d is not in [0, %u] (DVPP_ACL_DEVICES, dvpp.devices)", fn,
                         (int)id, P->settings.devices - 1);
    return ACL_SUCCESS;
}

/* --- the device ----------------------------------------------------------- */

static void device_free_struct(acli_device *dev)
{
    pthread_cond_destroy(&dev->cv);
    pthread_mutex_destroy(&dev->mu);
    free(dev);
}

/* The open device @id, made now if needed (under mu). */
static aclError device_open_locked(int32_t id, acli_device **out)
{
    acli_process *P = acli_proc();
    const acli_settings *s = &P->settings;
    dvpp_device_config cfg;
    acli_device *dev = P->devices[id];
    dvpp_err err;
    dvpp_status st;

    if (dev) {
        *out = dev;
        return ACL_SUCCESS;
    }
    dev = calloc(1, sizeof(*dev));
    if (!dev)
        return acli_fail(ACL_ERROR_BAD_ALLOC, "aclrtSetDevice: no memory for device %d", (int)id);
    dev->id = id;
    if (pthread_mutex_init(&dev->mu, NULL) != 0) {
        free(dev);
        return acli_fail(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "device %d: pthread_mutex_init",
                         (int)id);
    }
    if (acli_cond_init(&dev->cv) != 0) {
        pthread_mutex_destroy(&dev->mu);
        free(dev);
        return acli_fail(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "device %d: pthread_cond_init",
                         (int)id);
    }
    dvpp_device_config_default(&cfg);
    for (int e = 0; e < DVPP_ENGINE_COUNT; e++) {
        cfg.channels[e] = s->channels[e];
        /* acli_submit admits queue_depth tasks per engine, counting a task
         * until its completion callback; libdvpp frees the job's record a
         * moment after that callback, on the worker that ran it. One
         * spare record per channel covers that moment, so libdvpp never
         * refuses what acli_submit admitted. */
        cfg.queue_depth[e] = s->queue_depth + s->channels[e];
    }
    dev->depth = s->queue_depth;
    dvpp_err_clear(&err);
    st = dvpp_device_new(&cfg, &dev->dd, &err);
    if (st != DVPP_OK) {
        device_free_struct(dev);
        return acli_from_dvpp(st, err.msg);
    }
    P->devices[id] = dev;
    *out = dev;
    return ACL_SUCCESS;
}

/* A device just opened that nothing references (its first context could
 * not be made): no task was ever submitted. Under mu. */
static void device_drop_unused_locked(acli_device *dev)
{
    if (dev->set_refs || dev->explicit_ctxs || dev->ctxs)
        return;
    acli_proc()->devices[dev->id] = NULL;
    dvpp_device_free(dev->dd);
    device_free_struct(dev);
}

/* --- contexts -------------------------------------------------------------------- */

static aclError ctx_make_locked(acli_device *dev, bool is_default, acli_ctx **out)
{
    acli_process *P = acli_proc();
    acli_ctx *c = malloc(sizeof(*c));
    aclError rc;

    if (!c)
        return acli_fail(ACL_ERROR_BAD_ALLOC, "no memory for a context");
    *c = (acli_ctx){0};
    c->dev = dev;
    c->is_default = is_default;
    c->serial = P->next_serial++;
    if (!acli_handle_add(c, (acli_kind)ACLI_RT_CONTEXT)) {
        free(c);
        return acli_fail(ACL_ERROR_BAD_ALLOC, "no memory to register a context");
    }
    rc = acli_stream_make_locked(c, true, false, &c->def_stream);
    if (rc) {
        acli_handle_remove(c, (acli_kind)ACLI_RT_CONTEXT);
        free(c);
        return rc;
    }
    c->next = dev->ctxs;
    dev->ctxs = c;
    *out = c;
    return ACL_SUCCESS;
}

/* Take @c off its device's list and out of the registry, with its
 * program-visible streams (under mu); it goes onto *doomed. */
static void ctx_detach_locked(acli_ctx *c, acli_ctx **doomed)
{
    acli_device *dev = c->dev;
    acli_ctx **pp = &dev->ctxs;

    while (*pp && *pp != c)
        pp = &(*pp)->next;
    if (*pp)
        *pp = c->next;
    acli_handle_remove(c, (acli_kind)ACLI_RT_CONTEXT);
    for (acli_stream *s = c->streams; s; s = s->ctx_next) {
        if (!s->is_default && !s->is_private)
            acli_handle_remove(s, (acli_kind)ACLI_RT_STREAM);
    }
    if (dev->def_ctx == c)
        dev->def_ctx = NULL;
    else
        dev->explicit_ctxs--;
    c->next = *doomed;
    *doomed = c;
}

static void free_doomed(acli_ctx *doomed, bool device_gone)
{
    while (doomed) {
        acli_ctx *c = doomed;
        doomed = c->next;
        for (acli_stream *s = c->streams, *n; s; s = n) {
            n = s->ctx_next;
            if (device_gone)
                acli_stream_release_orphan(s);
            else
                acli_stream_close(s);
        }
        free(c);
    }
}

/* The end of a release (called with mu held, returns with it released):
 * @doomed contexts go; when the device has no reference left it goes too,
 * canceling what is pending, else the contexts' streams are drained. */
static void release_unlock(acli_device *dev, acli_ctx *doomed, bool cancel)
{
    acli_process *P = acli_proc();
    bool dies = dev->set_refs == 0 && dev->explicit_ctxs == 0;

    if (dies)
        P->devices[dev->id] = NULL;
    pthread_mutex_unlock(&P->mu);
    if (!dies) {
        free_doomed(doomed, false);
        return;
    }
    if (cancel) {
        acli_device_cancel_streams(dev);
        dvpp_device_free(dev->dd);
        free_doomed(doomed, true);
    } else {
        /* Drained stream by stream (aclrtDestroyContext), then nothing is
         * left on the device to cancel. */
        free_doomed(doomed, false);
        dvpp_device_free(dev->dd);
    }
    device_free_struct(dev);
}

/* --- devices: API ---------------------------------------------------------------------- */

aclError aclrtSetDevice(int32_t deviceId)
{
    acli_process *P = acli_proc();
    acli_device *dev;
    aclError rc;

    pthread_mutex_lock(&P->mu);
    rc = check_device_locked("aclrtSetDevice", deviceId);
    if (rc == ACL_SUCCESS)
        rc = device_open_locked(deviceId, &dev);
    if (rc == ACL_SUCCESS && !dev->def_ctx) {
        rc = ctx_make_locked(dev, true, &dev->def_ctx);
        if (rc)
            device_drop_unused_locked(dev);
    }
    if (rc == ACL_SUCCESS) {
        dev->set_refs++;
        set_current(dev->def_ctx);
    }
    pthread_mutex_unlock(&P->mu);
    return rc;
}

/* aclrtResetDevice (one reference) and aclrtResetDeviceForce (all, with
 * the explicit contexts). A device with no reference left is torn down. */
static aclError reset_device(const char *fn, int32_t id, bool force)
{
    acli_process *P = acli_proc();
    acli_ctx *doomed = NULL;
    acli_device *dev;
    aclError rc;

    pthread_mutex_lock(&P->mu);
    rc = check_device_locked(fn, id);
    dev = rc ? NULL : P->devices[id];
    if (!dev || (!force && dev->set_refs == 0)) {
        /* Nothing set here: nothing to release. */
        pthread_mutex_unlock(&P->mu);
        return rc;
    }
    dev->set_refs = force ? 0 : dev->set_refs - 1;
    if (dev->set_refs > 0) {
        pthread_mutex_unlock(&P->mu);
        return ACL_SUCCESS;
    }
    if (dev->def_ctx)
        ctx_detach_locked(dev->def_ctx, &doomed);
    while (force && dev->ctxs)
        ctx_detach_locked(dev->ctxs, &doomed);
    release_unlock(dev, doomed, true);
    return ACL_SUCCESS;
}

aclError aclrtResetDevice(int32_t deviceId)
{
    return reset_device("aclrtResetDevice", deviceId, false);
}

aclError aclrtResetDeviceForce(int32_t deviceId)
{
    return reset_device("aclrtResetDeviceForce", deviceId, true);
}

void acli_devices_reset_all(void)
{
    acli_process *P = acli_proc();

    for (uint32_t id = 0; id < ACLI_MAX_DEVICES; id++) {
        acli_ctx *doomed = NULL;
        acli_device *dev;

        pthread_mutex_lock(&P->mu);
        dev = P->devices[id];
        if (!dev) {
            pthread_mutex_unlock(&P->mu);
            continue;
        }
        dev->set_refs = 0;
        while (dev->ctxs)
            ctx_detach_locked(dev->ctxs, &doomed);
        release_unlock(dev, doomed, true);
    }
}

aclError aclrtGetDevice(int32_t *deviceId)
{
    acli_process *P = acli_proc();
    acli_ctx *c;

    if (!deviceId)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice: deviceId is NULL");
    pthread_mutex_lock(&P->mu);
    c = acli_ctx_current_locked();
    if (c)
        *deviceId = c->dev->id;
    pthread_mutex_unlock(&P->mu);
    if (!c)
        return acli_fail(ACL_ERROR_RT_CONTEXT_NULL,
                         "aclrtGetDevice: the thread has no current context");
    return ACL_SUCCESS;
}

aclError aclrtGetDeviceCount(uint32_t *count)
{
    acli_process *P = acli_proc();
    acli_settings s;
    aclError rc = ACL_SUCCESS;

    if (!count)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount: count is NULL");
    pthread_mutex_lock(&P->mu);
    if (atomic_load(&P->initialized))
        *count = P->settings.devices;
    else if ((rc = acli_settings_from_env(&s)) == ACL_SUCCESS)
        *count = s.devices;
    pthread_mutex_unlock(&P->mu);
    return rc;
}

aclError aclrtSynchronizeDevice(void)
{
    acli_process *P = acli_proc();
    acli_device *dev = NULL;
    acli_ctx *c;

    pthread_mutex_lock(&P->mu);
    c = acli_ctx_current_locked();
    if (c)
        dev = c->dev;
    pthread_mutex_unlock(&P->mu);
    if (!dev)
        return acli_fail(ACL_ERROR_RT_CONTEXT_NULL,
                         "aclrtSynchronizeDevice: the thread has no current context");
    return acli_device_sync(dev);
}

/* --- contexts: API --------------------------------------------------------------------------- */

aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId)
{
    acli_process *P = acli_proc();
    acli_device *dev;
    acli_ctx *c;
    aclError rc;

    if (!context)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateContext: context is NULL");
    *context = NULL;
    pthread_mutex_lock(&P->mu);
    rc = check_device_locked("aclrtCreateContext", deviceId);
    if (rc == ACL_SUCCESS)
        rc = device_open_locked(deviceId, &dev);
    if (rc == ACL_SUCCESS) {
        rc = ctx_make_locked(dev, false, &c);
        if (rc) {
            device_drop_unused_locked(dev);
        } else {
            dev->explicit_ctxs++;
            set_current(c);
            *context = c;
        }
    }
    pthread_mutex_unlock(&P->mu);
    return rc;
}

aclError aclrtDestroyContext(aclrtContext context)
{
    acli_process *P = acli_proc();
    acli_ctx *c = context, *doomed = NULL;

    pthread_mutex_lock(&P->mu);
    if (!acli_handle_ok(c, (acli_kind)ACLI_RT_CONTEXT)) {
        pthread_mutex_unlock(&P->mu);
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "aclrtDestroyContext: %p is not a live context", context);
    }
    if (c->is_default) {
        pthread_mutex_unlock(&P->mu);
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "aclrtDestroyContext: the default context goes with aclrtResetDevice");
    }
    ctx_detach_locked(c, &doomed);
    if (tl_current.ctx == c)
        set_current(NULL);
    release_unlock(c->dev, doomed, false);
    return ACL_SUCCESS;
}

aclError aclrtSetCurrentContext(aclrtContext context)
{
    acli_process *P = acli_proc();
    aclError rc = ACL_SUCCESS;

    pthread_mutex_lock(&P->mu);
    if (acli_handle_ok(context, (acli_kind)ACLI_RT_CONTEXT))
        set_current(context);
    else
        rc = acli_fail(ACL_ERROR_INVALID_PARAM,
                       "aclrtSetCurrentContext: %p is not a live context", context);
    pthread_mutex_unlock(&P->mu);
    return rc;
}

aclError aclrtGetCurrentContext(aclrtContext *context)
{
    acli_process *P = acli_proc();
    acli_ctx *c;

    if (!context)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetCurrentContext: context is NULL");
    pthread_mutex_lock(&P->mu);
    c = acli_ctx_current_locked();
    pthread_mutex_unlock(&P->mu);
    *context = c;
    if (!c)
        return acli_fail(ACL_ERROR_RT_CONTEXT_NULL,
                         "aclrtGetCurrentContext: the thread has no current context");
    return ACL_SUCCESS;
}
