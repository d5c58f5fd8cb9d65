/* http_ops: the operations endpoints, answered at once on the HTTP thread:
 * GET /healthz (the process serves), /readyz (200 until a stop begins: HTTP
 * is started last, once everything else is up), /metrics (Prometheus text, dvppd_metrics) and /v1/info
 * (version, SIMD level, engines, limits, what the daemon can do). */
#include <jansson.h>

#include "dvpp_cpu.h"
#include "dvpp_jpeg.h"
#include "http_int.h"

static enum MHD_Result ops_metrics(http_req *r)
{
    dvppd_build_info bi = {DVPP_VERSION, dvpp_simd_name(dvpp_simd_active()),
                           dvpp_jpeg_library()};
    struct MHD_Response *resp;
    dvpp_buf b;

    dvpp_buf_init(&b);
    if (dvppd_metrics_render(r->h->metrics, r->h->device, &bi, &b) != DVPP_OK) {
        dvpp_buf_fini(&b);
        return http_answer_status(r, DVPP_ENOMEM, NULL, "out of memory");
    }
    resp = MHD_create_response_from_buffer(b.len, b.data, MHD_RESPMEM_MUST_COPY);
    dvpp_buf_fini(&b);
    if (!resp)
        return MHD_NO;
    http_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; version=0.0.4");
    return http_answer(r, 200, resp);
}

static json_t *names_json(const char *const *names, size_t n)
{
    json_t *a = json_array();

    for (size_t i = 0; a && i < n; i++)
        json_array_append_new(a, json_string(names[i]));
    return a;
}

static enum MHD_Result ops_info(http_req *r)
{
    static const char *const profiles[] = {"native", "ascend310", "ascend310p"};
    static const char *const parities[] = {"cv2", "pil", "tf", "ascend"};
    static const char *const modes[] = {"stretch", "fit", "fill", "letterbox",
                                        "shorter", "longer"};
    static const char *const codecs[] = {"jpeg-decode", "jpeg-encode", "png-decode",
                                         "png-encode",  "h264-decode", "h265-decode",
                                         "h264-encode", "h265-encode"};
    const dvpp_limits *l = &r->set->cfg.limits;
    json_t *engines = json_array(), *aipp = json_array(), *o;

    /* Each engine's own channels (device.engine_channels may set them apart). */
    for (int e = 0; engines && e < DVPP_ENGINE_COUNT; e++)
        json_array_append_new(
            engines, json_pack("{s:s, s:I, s:I}", "name", dvpp_engine_name(e), "channels",
                               (json_int_t)dvpp_device_channels(r->h->device, (dvpp_engine)e),
                               "queue_depth", (json_int_t)r->h->queue_depth));
    for (unsigned i = 0; aipp && i < r->set->aipp.n; i++)
        json_array_append_new(aipp, json_string(r->set->aipp.names[i]));
    o = json_pack("{s:s, s:s, s:s, s:o, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}, s:o, "
                  "s:o, s:o, "
                  "s:o, s:o, s:{s:I, s:I, s:I, s:I}}",
                  "version", DVPP_VERSION, "simd", dvpp_simd_name(dvpp_simd_active()),
                  "jpeg", dvpp_jpeg_library(), "engines", engines ? engines : json_array(),
                  "limits", "max_encoded_bytes", (json_int_t)l->max_encoded_bytes,
                  "max_pixels", (json_int_t)l->max_pixels, "max_side",
                  (json_int_t)l->max_side, "max_jpeg_scans", (json_int_t)l->max_jpeg_scans,
                  "max_body_bytes", (json_int_t)http_max_body(r->set), "max_batch_bytes",
                  (json_int_t)r->set->cfg.http.max_batch_bytes, "max_video_bytes",
                  (json_int_t)l->max_video_bytes, "max_video_frames",
                  (json_int_t)l->max_video_frames,
                  "profiles", names_json(profiles, 3), "parities", names_json(parities, 4),
                  "resize_modes", names_json(modes, 6), "codecs",
                  names_json(codecs, sizeof(codecs) / sizeof(codecs[0])),
                  "aipp_configs", aipp ? aipp : json_array(),
                  "http", "threads", (json_int_t)r->h->cfg.threads, "max_batch_items",
                  (json_int_t)r->set->cfg.http.max_batch_items, "request_timeout_s",
                  (json_int_t)r->set->cfg.http.request_timeout_s, "max_jobs",
                  (json_int_t)r->h->cfg.max_jobs);
    if (o) { /* the names; GET /v1/presets has their specs */
        json_t *names = json_array();
        for (unsigned i = 0; names && i < r->set->presets.n; i++)
            json_array_append_new(names, json_string(r->set->presets.p[i].name));
        json_object_set_new(o, "presets", names ? names : json_array());
    }
    return http_answer_json(r, 200, o);
}

enum MHD_Result http_ops_serve(http_req *r)
{
    switch (r->route) {
    case DVPPD_ROUTE_HEALTHZ:
        return http_answer_json(r, 200, json_pack("{s:s}", "status", "ok"));
    case DVPPD_ROUTE_READYZ: {
        bool ready = !atomic_load(&r->h->leaving) && !atomic_load(&r->h->draining);
        return http_answer_json(r, ready ? 200 : 503, json_pack("{s:b}", "ready", ready));
    }
    case DVPPD_ROUTE_METRICS:
        return ops_metrics(r);
    case DVPPD_ROUTE_INFO:
        return ops_info(r);
    default:
        return http_answer_status(r, DVPP_ENOTFOUND, "path", "no such endpoint");
    }
}
