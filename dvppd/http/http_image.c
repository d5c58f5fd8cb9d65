/* http_image: the single-image routes. POST /v1/preprocess (a tensor),
 * /v1/image (an encoded JPEG/PNG) and /v1/decode (pixels), and the answer
 * of a tensor delivered into a named ring (?ring=NAME, also /v1/batch's).
 *
 * On the HTTP thread: the spec, the validator, the image's header probe
 * (no pixel decoded) and the plan give the output's exact size; the result
 * buffer (or ring slot) is taken, then one dvpp_pipejob on a stream of the
 * request's own. A VPC worker runs the pipeline, writing the tensor or the
 * pixels straight after the .npy header; its completion calls http_finish.
 * The answer hands the result buffer (or the encoded image) to
 * libmicrohttpd as it is. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "http_int.h"

static dvppd_spec_kind image_spec_kind(dvppd_route r)
{
    return r == DVPPD_ROUTE_IMAGE ? DVPPD_SPEC_IMAGE
                                  : r == DVPPD_ROUTE_DECODE ? DVPPD_SPEC_DECODE
                                                            : DVPPD_SPEC_TENSOR;
}

dvpp_status http_tensor_destination(http_req *r, dvpp_tensor *t, dvpp_err *err)
{
    char hdr[DVPP_NPY_HEADER_MAX];
    uint8_t *dest;
    dvpp_status rs;

    if (r->spec.ring[0]) {
        dvpp_status st = dvppd_sock_ring_reserve(r->h->sock, r->spec.ring, t->bytes,
                                                 &r->ticket, &dest, err);
        t->data = dest;
        return st;
    }
    r->header_len = r->spec.raw_out ? 0
                                    : dvpp_npy_header(hdr, dvpp_dtype_npy(t->dtype),
                                                      t->shape, t->ndim);
    r->result_len = r->header_len + t->bytes;
    rs = http_result_get(r->h, &r->set->cfg.limits, r->result_len, (void **)&r->result, err);
    if (rs != DVPP_OK)
        return rs;
    memcpy(r->result, hdr, r->header_len);
    t->data = r->result + r->header_len;
    return DVPP_OK;
}

static dvpp_status image_tensor_alloc(http_req *r, const dvpp_pipeline_plan *pl,
                                      dvpp_err *err)
{
    dvpp_tensor *t = &r->out.tensor;
    dvpp_status st = dvpp_tensor_init(t, pl->dtype, pl->layout, 1, pl->c, pl->h, pl->w,
                                      err);

    r->out.n = 0;
    return st == DVPP_OK ? http_tensor_destination(r, t, err) : st;
}

/* The image geometry a decode run will fill (for the .npy header). */
static dvpp_status image_pixels_alloc(http_req *r, const dvpp_pipeline_plan *pl,
                                      dvpp_err *err)
{
    char hdr[DVPP_NPY_HEADER_MAX];
    dvpp_image img;
    dvpp_planes planes;
    int64_t shape[3];
    dvpp_status st;

    st = dvpp_image_init(&img, pl->out_format, pl->img_w, pl->img_h,
                         r->spec.pipe.out_align_w, r->spec.pipe.out_align_h, err);
    if (st == DVPP_OK)
        st = dvpp_image_planes(&img, &planes, err);
    if (st != DVPP_OK)
        return st;
    r->header_len = r->spec.raw_out
                        ? 0
                        : dvpp_npy_header(hdr, "|u1", shape,
                                          dvpp_npy_image_shape(&img, &planes, shape));
    r->result_len = r->header_len + pl->out_bytes;
    st = http_result_get(r->h, &r->set->cfg.limits, r->result_len, (void **)&r->result, err);
    if (st != DVPP_OK)
        return st;
    memcpy(r->result, hdr, r->header_len);
    r->out.image.data = r->result + r->header_len;
    r->out.image.size = pl->out_bytes;
    return DVPP_OK;
}

/* The pipeline job's completion, on a VPC worker. */
static void image_job_done(void *ctx, dvpp_status st, const dvpp_err *err)
{
    http_finish(ctx, st, err);
}

dvpp_status http_image_submit(http_req *r, dvpp_err *err)
{
    dvpp_pipeline *p = &r->spec.pipe;
    dvpp_pipe_source src;
    dvpp_pipeline_plan plan;
    const uint8_t *in = NULL;
    size_t len = 0;
    dvpp_status st;

    st = http_spec_build(r, image_spec_kind(r->route), err);
    if (st == DVPP_OK && r->route == DVPPD_ROUTE_DECODE && !r->spec.raw_out &&
        dvpp_pixfmt_get(p->out_format) && dvpp_pixfmt_get(p->out_format)->planes == 1)
        p->out_align_w = p->out_align_h = 0; /* .npy of packed pixels has no padding */
    if (st == DVPP_OK)
        st = dvpp_pipeline_validate(p, &r->set->cfg.limits, err);
    if (st == DVPP_OK)
        st = http_body_input(r, &in, &len, err);
    if (st == DVPP_OK)
        st = dvpp_pipeline_probe(p, in, len, &r->set->cfg.limits, &src, err);
    if (st == DVPP_OK) /* ?dump=1: before the plan, which then sees the watch */
        st = http_dump_start(r, &src, len, err);
    if (st == DVPP_OK) /* ?trace=1 / a capture: wraps the dump's watch, if any */
        http_trace_watch(r, p);
    if (st == DVPP_OK)
        st = dvpp_pipeline_plan_make(p, &src, &plan, err);
    if (st == DVPP_OK && p->output == DVPP_PIPE_OUT_TENSOR)
        st = image_tensor_alloc(r, &plan, err);
    else if (st == DVPP_OK && p->encoding == DVPP_PIPE_ENC_NONE)
        st = image_pixels_alloc(r, &plan, err);
    else if (st == DVPP_OK) /* encoded: bounded by the image it encodes */
        st = dvpp_limits_check_output(&r->set->cfg.limits, plan.out_bytes, err);
    if (st == DVPP_OK)
        st = dvpp_stream_new(r->h->device, 0, &r->stream, err);
    if (st != DVPP_OK)
        return st;
    r->pj = (dvpp_pipejob){
        .pipe = p,
        .input = in,
        .len = len,
        .out = &r->out,
        .pixels = src.is_jpeg ? (uint64_t)src.jpeg.width * src.jpeg.height
                              : (uint64_t)src.width * src.height,
        .bytes = len, /* the result buffer holds its own bytes (http_result_get) */
        .deadline_ns = r->deadline,
        .done = image_job_done,
        .ctx = r,
    };
    r->t_submit = dvpp_now_ns();
    return dvpp_pipejob_submit(r->stream, &r->pj, NULL, err);
}

/* --- the answer ---------------------------------------------------------------------- */

/* Stage times into the metrics and the X-Dvpp-Timing header. */
static void image_timing_headers(http_req *r, struct MHD_Response *resp)
{
    dvppd_metrics *m = r->h->metrics;
    const uint64_t *s = r->out.stage_ns;
    uint64_t now = dvpp_now_ns();
    uint64_t read = r->t_read - r->t_start;
    uint64_t queue = r->pj.started_ns > r->t_submit ? r->pj.started_ns - r->t_submit : 0;

    dvppd_metrics_stage(m, DVPPD_STAGE_READ, read);
    dvppd_metrics_stage(m, DVPPD_STAGE_QUEUE, queue);
    dvppd_metrics_stage(m, DVPPD_STAGE_DECODE, s[DVPP_PIPE_STAGE_DECODE]);
    dvppd_metrics_stage(m, DVPPD_STAGE_VPC, s[DVPP_PIPE_STAGE_VPC]);
    dvppd_metrics_stage(m, DVPPD_STAGE_POST, s[DVPP_PIPE_STAGE_POST]);
    dvppd_metrics_stage(m, DVPPD_STAGE_TOTAL, now - r->t_start);
    http_header_printf(resp, "X-Dvpp-Timing",
                       "read=%" PRIu64 ";queue=%" PRIu64 ";decode=%" PRIu64 ";vpc=%" PRIu64
                       ";post=%" PRIu64 ";total=%" PRIu64,
                       http_us(read), http_us(queue), http_us(s[DVPP_PIPE_STAGE_DECODE]),
                       http_us(s[DVPP_PIPE_STAGE_VPC]), http_us(s[DVPP_PIPE_STAGE_POST]),
                       http_us(now - r->t_start));
}

/* The encoded image, moved out of the request into libmicrohttpd's
 * response (no copy). */
static struct MHD_Response *encoded_image_response(http_req *r)
{
    http_vout *o = calloc(1, sizeof(*o));
    struct MHD_Response *resp;

    if (!o)
        return NULL;
    o->body = r->out.encoded;
    dvpp_buf_init(&r->out.encoded);
    resp = http_vout_response(r->h, &o);
    http_vout_free(o); /* NULL once handed over */
    return resp;
}

struct MHD_Response *http_ring_response(http_req *r, const dvpp_tensor *t,
                                        const dvpp_pipe_geom *g, dvpp_err *err)
{
    ipc_slot_meta m;
    uint32_t gen = 0;
    uint32_t slot = r->ticket.slot, id = r->ticket.ring_id;
    uint64_t offset = r->ticket.offset;
    json_t *shape = json_array();

    dvppd_slot_meta_tensor(&m, t, g);
    if (dvppd_sock_ring_deliver(r->h->sock, &r->ticket, true, &m, &gen) != DVPP_OK) {
        json_decref(shape);
        dvpp_err_set(err, DVPP_ECANCELED, "ring", "the ring closed before the job finished");
        return NULL;
    }
    for (unsigned i = 0; shape && i < t->ndim; i++)
        json_array_append_new(shape, json_integer(t->shape[i]));
    return http_json_response(json_pack(
        "{s:s, s:I, s:I, s:I, s:I, s:o, s:s, s:s, s:I, s:f, s:f, s:f, s:f}", "ring",
        r->spec.ring, "ring_id", (json_int_t)id, "slot", (json_int_t)slot, "generation",
        (json_int_t)gen, "offset", (json_int_t)offset, "shape", shape ? shape : json_array(),
        "dtype", dvpp_dtype_name(t->dtype), "layout", dvpp_layout_name(t->layout),
        "bytes", (json_int_t)t->bytes, "scale_x", g ? g->scale_x : 1.0, "scale_y",
        g ? g->scale_y : 1.0, "pad_x", g ? g->pad_x : 0.0, "pad_y", g ? g->pad_y : 0.0));
}

enum MHD_Result http_image_answer(http_req *r)
{
    const dvpp_pipeline *p = &r->spec.pipe;
    struct MHD_Response *resp;
    const dvpp_image *img = &r->out.image;

    http_dump_finish(r); /* while the result, slot and encoded image are still ours */
    if (r->status != DVPP_OK)
        return http_answer_error(r, &r->err);
    if (r->ticket.ring) {
        resp = http_ring_response(r, &r->out.tensor, &r->out.geom, &r->err);
        if (!resp)
            return http_answer_error(r, &r->err);
        http_dump_header(r, resp);
        image_timing_headers(r, resp);
        http_tensor_headers(resp, &r->out.tensor);
        return http_answer(r, 200, resp);
    }
    if (p->output == DVPP_PIPE_OUT_TENSOR || p->encoding == DVPP_PIPE_ENC_NONE)
        resp = http_req_result_response(r);
    else
        resp = encoded_image_response(r);
    if (!resp)
        return MHD_NO;
    http_dump_header(r, resp);
    image_timing_headers(r, resp);
    http_geometry_headers(resp, &r->out.geom);
    if (p->output == DVPP_PIPE_OUT_TENSOR) {
        http_tensor_headers(resp, &r->out.tensor);
        http_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                    r->spec.raw_out ? "application/octet-stream" : "application/x-npy");
        dvppd_metrics_pixels(r->h->metrics, (uint64_t)r->out.plan.h * r->out.plan.w);
        return http_answer(r, 200, resp);
    }
    http_header_printf(resp, "X-Dvpp-Width", "%u", r->out.plan.img_w);
    http_header_printf(resp, "X-Dvpp-Height", "%u", r->out.plan.img_h);
    dvppd_metrics_pixels(r->h->metrics, (uint64_t)r->out.plan.img_w * r->out.plan.img_h);
    if (p->encoding != DVPP_PIPE_ENC_NONE) {
        http_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                    p->encoding == DVPP_PIPE_ENC_PNG ? "image/png" : "image/jpeg");
        return http_answer(r, 200, resp);
    }
    http_header(resp, "X-Dvpp-Format", dvpp_pixfmt_name(img->format));
    http_header_printf(resp, "X-Dvpp-Width-Stride", "%u", img->width_stride);
    http_header_printf(resp, "X-Dvpp-Height-Stride", "%u", img->height_stride);
    http_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                r->spec.raw_out ? "application/octet-stream" : "application/x-npy");
    return http_answer(r, 200, resp);
}
