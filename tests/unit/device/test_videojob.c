/* Unit tests for device/dvpp_videojob.c: a stream whose resolution changes
 * mid-stream (two H.264 Annex-B streams, 320x240 then 160x120, or the
 * other way, one after the other: each starts with its IDR and SPS).
 *
 * A pipeline whose output has a fixed size runs every frame with its own
 * geometry and fills every byte of every slice (two runs into outputs
 * filled with different canaries agree); a pipeline whose output follows
 * the frame size, and raw frames, are refused at the frame that changes
 * (DVPP_EUNSUPPORTED "video", the sizes named): a drop used to leave the
 * rest of each later slice unwritten and a rise failed with ENOSPC. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "device/dvpp_videojob.h"
#include "dvpp_mem.h"

#define N1 4 /* frames at the first size */
#define N2 4 /* at the second */

/* An NV12 frame @w x @h, a gradient moving with @n. */
static void make_frame(dvpp_image *img, uint32_t w, uint32_t h, unsigned n)
{
    dvpp_planes pl;

    assert_int_equal(dvpp_image_init(img, DVPP_PIXEL_NV12, w, h, 1, 1, NULL), DVPP_OK);
    assert_int_equal(dvpp_image_alloc(img, NULL), DVPP_OK);
    assert_int_equal(dvpp_image_planes(img, &pl, NULL), DVPP_OK);
    for (uint32_t y = 0; y < pl.p[0].rows; y++)
        for (uint32_t x = 0; x < pl.p[0].row_bytes; x++)
            dvpp_image_row(img, &pl, 0, y)[x] = (uint8_t)(x + 2 * y + 9 * n);
    for (uint32_t y = 0; y < pl.p[1].rows; y++)
        for (uint32_t x = 0; x < pl.p[1].row_bytes; x++)
            dvpp_image_row(img, &pl, 1, y)[x] = (uint8_t)(100 + (x & 1) * 50 + y);
}

/* Append @n frames of @w x @h as an H.264 Annex-B stream to @out. */
static void encode(dvpp_buf *out, uint32_t w, uint32_t h, unsigned n)
{
    dvpp_venc_opts o;
    dvpp_venc *e = NULL;
    dvpp_err err;

    dvpp_venc_opts_init(&o);
    o.codec = DVPP_VIDEO_H264;
    o.width = w, o.height = h;
    o.container = DVPP_VENC_ANNEXB;
    if (dvpp_venc_open(&o, out, &e, &err) != DVPP_OK)
        fail_msg("venc: %s", err.msg);
    for (unsigned i = 0; i < n; i++) {
        dvpp_image img;
        make_frame(&img, w, h, i);
        assert_int_equal(dvpp_venc_frame(e, &img, i == 0, &err), DVPP_OK);
        dvpp_image_free(&img);
    }
    assert_int_equal(dvpp_venc_finish(e, &err), DVPP_OK);
    dvpp_venc_close(e);
}

/* 320x240 then 160x120 (@rise: the other way). */
static dvpp_buf two_sizes(bool rise)
{
    dvpp_buf b;

    dvpp_buf_init(&b);
    encode(&b, rise ? 160 : 320, rise ? 120 : 240, N1);
    encode(&b, rise ? 320 : 160, rise ? 240 : 120, N2);
    return b;
}

static dvpp_worker *worker_new(void)
{
    dvpp_worker *w = malloc(sizeof(*w));

    assert_non_null(w);
    dvpp_worker_init(w, NULL);
    return w;
}

static void worker_del(dvpp_worker *w)
{
    dvpp_worker_fini(w);
    free(w);
}

static void add_resize(dvpp_pipeline *p, dvpp_resize_mode mode, uint32_t w, uint32_t h)
{
    dvpp_pipe_op op;

    memset(&op, 0, sizeof(op));
    op.kind = DVPP_PIPE_OP_RESIZE;
    op.u.resize.mode = mode;
    op.u.resize.w = w, op.u.resize.h = h;
    dvpp_resize_opts_init(&op.u.resize.opts);
    assert_int_equal(dvpp_pipeline_add_op(p, &op, NULL), DVPP_OK);
}

/* A request whose output has a fixed size: a stretch to a 64x48 tensor,
 * or a letterbox into a 100x100 image of @fmt (NV12 with VDEC strides). */
static void fixed_output_request(dvpp_video_request *rq, bool tensor, dvpp_pixfmt fmt)
{
    dvpp_video_request_init(rq);
    rq->has_pipe = true;
    if (tensor) {
        add_resize(&rq->pipe, DVPP_RESIZE_STRETCH, 64, 48);
        rq->pipe.post = DVPP_PIPE_POST_NORM;
        rq->pipe.output = DVPP_PIPE_OUT_TENSOR;
        return;
    }
    add_resize(&rq->pipe, DVPP_RESIZE_LETTERBOX, 100, 100);
    rq->pipe.out_format = fmt;
    if (fmt == DVPP_PIXEL_NV12)
        rq->pipe.out_align_w = 16, rq->pipe.out_align_h = 2;
}

/* Output canary GROW: start from an empty output, which grows and moves
 * while frames arrive (an overlapped run must collect a frame before the
 * output moves). */
#define GROW (-1)

/* Decode @v with @rq into an output whose capacity (enough for the whole
 * batch, so it never moves) is filled with @canary first (GROW: see
 * above). */
static dvpp_status run(const dvpp_buf *v, const dvpp_video_request *rq, int canary,
                       dvpp_buf *out, dvpp_video_result *res, dvpp_err *err)
{
    dvpp_worker *w = worker_new();
    dvpp_status st;

    dvpp_buf_init(out);
    if (canary != GROW) {
        assert_int_equal(dvpp_buf_reserve(out, 8u << 20), DVPP_OK);
        memset(out->data, canary, out->cap);
    }
    dvpp_err_clear(err);
    st = dvpp_video_run(w, v->data, v->len, rq, out, res, err);
    worker_del(w);
    return st;
}

/* A fixed-size output (tensor: stretch to 64x48; image: letterbox into
 * 100x100 NV12 with VDEC strides) takes both streams: N1 + N2 slices, all
 * written, each frame with its own scale. */
static void test_fixed_output_takes_a_resolution_change(void **state)
{
    (void)state;
    for (int rise = 0; rise < 2; rise++)
        for (int tensor = 0; tensor < 2; tensor++) {
            dvpp_buf v = two_sizes(rise), out[2];
            dvpp_video_request rq;
            dvpp_video_result res[2];
            dvpp_err e;

            fixed_output_request(&rq, tensor, DVPP_PIXEL_NV12);
            for (int k = 0; k < 2; k++)
                if (run(&v, &rq, k ? 0x5A : 0xA5, &out[k], &res[k], &e) != DVPP_OK)
                    fail_msg("rise %d tensor %d: %s: %s", rise, tensor, e.field, e.msg);
            assert_int_equal(res[0].frames, N1 + N2);
            assert_int_equal(out[0].len, (N1 + N2) * res[0].slice_bytes);
            for (size_t i = 0; i < out[0].len; i++)
                if (out[0].data[i] != out[1].data[i])
                    fail_msg("rise %d tensor %d: byte %zu of %zu (frame %zu) unwritten", rise,
                             tensor, i, out[0].len, i / res[0].slice_bytes);
            for (unsigned t = 0; t < N1 + N2; t++) {
                /* 320 wide: x 0.2 (64) or 0.3125 (100); 160 wide: twice that */
                bool big = (t < N1) != (rise != 0);
                double want = (tensor ? 64.0 : 100.0) / (big ? 320 : 160);
                if (res[0].frame[t].geom.scale_x != want)
                    fail_msg("frame %u: scale %g, want %g", t, res[0].frame[t].geom.scale_x,
                             want);
            }
            assert_true(res[0].geom.scale_x == res[0].frame[0].geom.scale_x);
            for (int k = 0; k < 2; k++) {
                dvpp_video_result_fini(&res[k]);
                dvpp_buf_fini(&out[k]);
            }
            dvpp_buf_fini(&v);
        }
}

/* An output that follows the frame size (no resize; a border) or
 * raw frames: refused at the first frame of the new size, 4xx-mapped
 * (EUNSUPPORTED), naming both sizes. */
static void test_size_following_output_is_refused(void **state)
{
    /* image output without resize, a border into a tensor, raw frames */
    static const int kinds[] = {1, 2, 0};

    (void)state;
    for (int rise = 0; rise < 2; rise++)
        for (int ki = 0; ki < 3; ki++) {
            int kind = kinds[ki];
            dvpp_buf v = two_sizes(rise), out;
            dvpp_video_request rq;
            dvpp_video_result res;
            dvpp_err e;
            dvpp_status st;

            dvpp_video_request_init(&rq);
            if (kind == 1) {
                rq.has_pipe = true;
                rq.pipe.out_format = DVPP_PIXEL_RGB;
            } else if (kind == 2) {
                dvpp_pipe_op op = {.kind = DVPP_PIPE_OP_BORDER,
                                   .u.border = {.top = 4, .bottom = 4, .left = 4, .right = 4}};
                rq.has_pipe = true;
                assert_int_equal(dvpp_pipeline_add_op(&rq.pipe, &op, NULL), DVPP_OK);
                rq.pipe.post = DVPP_PIPE_POST_NORM;
                rq.pipe.output = DVPP_PIPE_OUT_TENSOR;
            }
            st = run(&v, &rq, 0xA5, &out, &res, &e);
            if (st != DVPP_EUNSUPPORTED)
                fail_msg("rise %d kind %d: %s (%s: %s)", rise, kind, dvpp_status_name(st),
                         e.field, e.msg);
            assert_string_equal(e.field, "video");
            if (!strstr(e.msg, rise ? "320x240, the first 160x120"
                                    : "160x120, the first 320x240") ||
                !strstr(e.msg, "frame 4"))
                fail_msg("rise %d kind %d: %s", rise, kind, e.msg);
            assert_null(res.frame);
            dvpp_buf_fini(&out);
            dvpp_buf_fini(&v);
        }
}

/* The result's stream info names the first frame's size: libavformat's
 * probing ends at whichever SPS it parsed last, which said 160x120 for
 * the drop. With 320x240 then 320x232 (H.264 codes 232 rows as 240,
 * cropped), that last SPS handed to the decoder as the container's size
 * made libavcodec crop the first part's frames to 320x232 too: a stretch
 * to 64x48 had one geometry for all eight frames and raw frames were not
 * refused. Now each part keeps its size: the stretch scales the first four
 * rows by 48/240 and the rest by 48/232, every byte written, and raw
 * frames are refused at frame 4. */
static void test_result_names_the_first_frame(void **state)
{
    dvpp_buf v, out[2];
    dvpp_video_request rq;
    dvpp_video_result res[2];
    dvpp_err e;

    (void)state;
    for (int rise = 0; rise < 2; rise++) {
        dvpp_video_request_init(&rq);
        rq.has_pipe = true;
        add_resize(&rq.pipe, DVPP_RESIZE_STRETCH, 64, 48);
        rq.pipe.post = DVPP_PIPE_POST_NORM;
        rq.pipe.output = DVPP_PIPE_OUT_TENSOR;
        v = two_sizes(rise);
        assert_int_equal(run(&v, &rq, 0xA5, &out[0], &res[0], &e), DVPP_OK);
        if (res[0].info.width != (rise ? 160u : 320u) ||
            res[0].info.height != (rise ? 120u : 240u))
            fail_msg("rise %d: the stream is %ux%u", rise, res[0].info.width,
                     res[0].info.height);
        dvpp_video_result_fini(&res[0]);
        dvpp_buf_fini(&out[0]);
        dvpp_buf_fini(&v);
    }
    dvpp_buf_init(&v);
    encode(&v, 320, 240, N1);
    encode(&v, 320, 232, N2);
    for (int k = 0; k < 2; k++)
        if (run(&v, &rq, k ? 0x5A : 0xA5, &out[k], &res[k], &e) != DVPP_OK)
            fail_msg("%s: %s", e.field, e.msg);
    assert_int_equal(res[0].info.width, 320);
    assert_int_equal(res[0].info.height, 240);
    assert_int_equal(res[0].frames, N1 + N2);
    assert_int_equal(out[0].len, (N1 + N2) * res[0].slice_bytes);
    assert_memory_equal(out[0].data, out[1].data, out[0].len);
    for (unsigned t = 0; t < N1 + N2; t++) {
        double want = 48.0 / (t < N1 ? 240 : 232);
        if (res[0].frame[t].geom.scale_y != want || res[0].frame[t].geom.scale_x != 0.2)
            fail_msg("frame %u: scale %g x %g, want 0.2 x %g", t, res[0].frame[t].geom.scale_x,
                     res[0].frame[t].geom.scale_y, want);
    }
    for (int k = 0; k < 2; k++) {
        dvpp_video_result_fini(&res[k]);
        dvpp_buf_fini(&out[k]);
    }
    dvpp_video_request_init(&rq);
    assert_int_equal(run(&v, &rq, 0xA5, &out[0], &res[0], &e), DVPP_EUNSUPPORTED);
    assert_non_null(strstr(e.msg, "frame 4 (320x232, the first 320x240)"));
    dvpp_buf_fini(&out[0]);
    dvpp_buf_fini(&v);
}

/* @n frames of @w x @h with a key frame every 5 (so frame threads have
 * references to wait on). */
static dvpp_buf one_size(uint32_t w, uint32_t h, unsigned n)
{
    dvpp_venc_opts o;
    dvpp_venc *e = NULL;
    dvpp_buf b;
    dvpp_err err;

    dvpp_buf_init(&b);
    dvpp_venc_opts_init(&o);
    o.codec = DVPP_VIDEO_H264;
    o.width = w, o.height = h;
    o.gop = 5;
    o.container = DVPP_VENC_ANNEXB;
    if (dvpp_venc_open(&o, &b, &e, &err) != DVPP_OK)
        fail_msg("venc: %s", err.msg);
    for (unsigned i = 0; i < n; i++) {
        dvpp_image img;
        make_frame(&img, w, h, i);
        assert_int_equal(dvpp_venc_frame(e, &img, false, &err), DVPP_OK);
        dvpp_image_free(&img);
    }
    assert_int_equal(dvpp_venc_finish(e, &err), DVPP_OK);
    dvpp_venc_close(e);
    return b;
}

/* The overlapped video job (frame threads, each frame's pipeline on a
 * helper) against the plain one: the same frames in the same order, every
 * byte equal, each frame's own geometry, for tensors and images, every
 * frame or every 3rd, a pre-sized output (canaries: every byte written)
 * and a growing one, and a stream whose resolution changes. */
static void test_overlap_is_byte_identical(void **state)
{
    (void)state;
    for (int stream = 0; stream < 2; stream++)
        for (int tensor = 0; tensor < 2; tensor++)
            for (int every = 1; every <= 3; every += 2)
                for (int grow = 0; grow < 2; grow++) {
                    dvpp_buf v = stream ? two_sizes(true) : one_size(176, 144, 23);
                    dvpp_buf out[2];
                    dvpp_video_request rq;
                    dvpp_video_result res[2];
                    dvpp_err e;

                    fixed_output_request(&rq, tensor, DVPP_PIXEL_RGB);
                    rq.vdec.every = (uint32_t)every;
                    for (int k = 0; k < 2; k++) {
                        dvpp_status st;
                        rq.overlap = k == 1;
                        rq.vdec.threads = k ? 3 : 1;
                        st = run(&v, &rq, grow ? GROW : k ? 0x5A : 0xA5, &out[k], &res[k], &e);
                        if (st != DVPP_OK)
                            fail_msg("stream %d tensor %d every %d grow %d overlap %d: %s: %s",
                                     stream, tensor, every, grow, k, e.field, e.msg);
                    }
                    assert_int_equal(res[1].frames, res[0].frames);
                    assert_true(res[0].frames >= 2);
                    assert_int_equal(out[1].len, out[0].len);
                    assert_int_equal(out[0].len, res[0].frames * res[0].slice_bytes);
                    for (size_t i = 0; i < out[0].len; i++)
                        if (out[0].data[i] != out[1].data[i])
                            fail_msg("stream %d tensor %d every %d grow %d: byte %zu (frame "
                                     "%zu) differs", stream, tensor, every, grow, i,
                                     i / res[0].slice_bytes);
                    for (uint64_t t = 0; t < res[0].frames; t++) {
                        const dvpp_video_frame_info *a = &res[0].frame[t], *b = &res[1].frame[t];
                        if (a->index != b->index || a->pts != b->pts ||
                            a->geom.scale_x != b->geom.scale_x ||
                            a->geom.scale_y != b->geom.scale_y ||
                            a->geom.pad_x != b->geom.pad_x || a->geom.pad_y != b->geom.pad_y)
                            fail_msg("frame %llu: index %llu/%llu, scale %g/%g",
                                     (unsigned long long)t, (unsigned long long)a->index,
                                     (unsigned long long)b->index, a->geom.scale_x,
                                     b->geom.scale_x);
                        assert_int_equal(a->index, t * (uint64_t)every);
                    }
                    for (int k = 0; k < 2; k++) {
                        dvpp_video_result_fini(&res[k]);
                        dvpp_buf_fini(&out[k]);
                    }
                    dvpp_buf_fini(&v);
                }
}

/* Overlapped, a refusal at frame 4 (the previous frame still on the
 * helper) ends the run with the same error, nothing leaked. */
static void test_overlap_refusal_mid_stream(void **state)
{
    dvpp_buf v, out;
    dvpp_video_request rq;
    dvpp_video_result res;
    dvpp_err e;
    dvpp_pipe_op op = {.kind = DVPP_PIPE_OP_BORDER,
                       .u.border = {.top = 4, .bottom = 4, .left = 4, .right = 4}};

    (void)state;
    v = two_sizes(false);
    dvpp_video_request_init(&rq);
    rq.has_pipe = true;
    rq.overlap = true;
    rq.vdec.threads = 3;
    assert_int_equal(dvpp_pipeline_add_op(&rq.pipe, &op, NULL), DVPP_OK);
    rq.pipe.post = DVPP_PIPE_POST_NORM;
    rq.pipe.output = DVPP_PIPE_OUT_TENSOR;
    assert_int_equal(run(&v, &rq, GROW, &out, &res, &e), DVPP_EUNSUPPORTED);
    assert_string_equal(e.field, "video");
    assert_non_null(strstr(e.msg, "frame 4"));
    assert_null(res.frame);
    dvpp_buf_fini(&out);
    dvpp_buf_fini(&v);
}

/* Pipelines to a tensor read the decoder's own I420 frames (no NV12
 * conversion): the same tensor, byte for byte, as from the conversion
 * (dvpp_video_request.convert_frames), for a stretch, a letterbox, a crop
 * at odd offsets, Pillow's antialiased resize and a colour conversion op,
 * every frame or every 3rd, plain and overlapped, and a stream whose
 * resolution changes; an image output, AIPP-free or not, stays on the
 * conversion. */
static void direct_pipeline(dvpp_video_request *rq, int kind)
{
    dvpp_pipe_op op;

    dvpp_video_request_init(rq);
    rq->has_pipe = true;
    rq->pipe.post = DVPP_PIPE_POST_NORM;
    rq->pipe.output = DVPP_PIPE_OUT_TENSOR;
    memset(&op, 0, sizeof(op));
    switch (kind) {
    case 0:
        add_resize(&rq->pipe, DVPP_RESIZE_STRETCH, 64, 48);
        break;
    case 1:
        add_resize(&rq->pipe, DVPP_RESIZE_LETTERBOX, 100, 100);
        break;
    case 2:
        op.kind = DVPP_PIPE_OP_CROP;
        op.u.crop = (dvpp_roi){3, 5, 103, 81}; /* inclusive: 101 x 77 at (3, 5) */
        assert_int_equal(dvpp_pipeline_add_op(&rq->pipe, &op, NULL), DVPP_OK);
        add_resize(&rq->pipe, DVPP_RESIZE_STRETCH, 57, 43);
        break;
    case 3:
        add_resize(&rq->pipe, DVPP_RESIZE_STRETCH, 70, 50);
        rq->pipe.ops[0].u.resize.opts.parity = DVPP_PARITY_PIL;
        break;
    default:
        op.kind = DVPP_PIPE_OP_CONVERT;
        op.u.convert = DVPP_PIXEL_BGR;
        assert_int_equal(dvpp_pipeline_add_op(&rq->pipe, &op, NULL), DVPP_OK);
        add_resize(&rq->pipe, DVPP_RESIZE_STRETCH, 40, 30);
        break;
    }
}

static void test_direct_frames_make_the_same_tensor(void **state)
{
    (void)state;
    for (int stream = 0; stream < 2; stream++)
        for (int kind = 0; kind < 5; kind++)
            for (int every = 1; every <= 3; every += 2)
                for (int overlap = 0; overlap < 2; overlap++) {
                    dvpp_buf v = stream ? two_sizes(true) : one_size(176, 144, 23);
                    dvpp_buf out[2];
                    dvpp_video_request rq;
                    dvpp_video_result res[2];
                    dvpp_err e;

                    direct_pipeline(&rq, kind);
                    rq.vdec.every = (uint32_t)every;
                    rq.overlap = overlap;
                    rq.vdec.threads = overlap ? 3 : 1;
                    for (int k = 0; k < 2; k++) {
                        rq.convert_frames = k == 0;
                        if (run(&v, &rq, k ? 0x5A : 0xA5, &out[k], &res[k], &e) != DVPP_OK)
                            fail_msg("stream %d kind %d convert %d: %s: %s", stream, kind,
                                     k == 0, e.field, e.msg);
                    }
                    assert_int_equal(res[0].direct_frames, 0);
                    assert_int_equal(res[1].direct_frames, res[1].frames);
                    assert_int_equal(res[1].frames, res[0].frames);
                    assert_true(res[0].frames >= 2);
                    assert_int_equal(out[1].len, out[0].len);
                    assert_int_equal(out[0].len, res[0].frames * res[0].slice_bytes);
                    if (memcmp(out[0].data, out[1].data, out[0].len) != 0)
                        fail_msg("stream %d kind %d every %d overlap %d: the tensors differ",
                                 stream, kind, every, overlap);
                    for (int k = 0; k < 2; k++) {
                        dvpp_video_result_fini(&res[k]);
                        dvpp_buf_fini(&out[k]);
                    }
                    dvpp_buf_fini(&v);
                }
}

/* An image output hands out the last op's bytes as laid out: its frames
 * are converted as asked, never the decoder's I420. */
static void test_image_output_keeps_the_conversion(void **state)
{
    dvpp_buf v = one_size(176, 144, 8), out;
    dvpp_video_request rq;
    dvpp_video_result res;
    dvpp_err e;

    (void)state;
    fixed_output_request(&rq, false, DVPP_PIXEL_RGB);
    assert_int_equal(run(&v, &rq, 0xA5, &out, &res, &e), DVPP_OK);
    assert_int_equal(res.frames, 8);
    assert_int_equal(res.direct_frames, 0);
    dvpp_video_result_fini(&res);
    dvpp_buf_fini(&out);
    dvpp_buf_fini(&v);
}

/* The spread rule: channels free give frame threads (one per channel
 * used) and the overlap; none free leaves the request alone; a
 * request's own thread count is kept. */
static void test_spread_rule(void **state)
{
    dvpp_vdec_opts o;

    (void)state;
    dvpp_vdec_opts_init(&o);
    assert_false(dvpp_video_spread(&o, true, 0));
    assert_int_equal(o.threads, 0);
    assert_true(dvpp_video_spread(&o, true, 1));
    assert_int_equal(o.threads, 2);
    /* tiny frames stay on one thread; from 320x240 on they get them all */
    assert_int_equal(dvpp_vdec_threads(&o, 16, 16), 1);
    assert_int_equal(dvpp_vdec_threads(&o, 320, 239), 1);
    assert_int_equal(dvpp_vdec_threads(&o, 320, 240), 2);
    assert_int_equal(dvpp_vdec_threads(&o, 1920, 1080), 2);
    o.threads = 0;
    assert_false(dvpp_video_spread(&o, false, 3));
    assert_int_equal(o.threads, 4);
    o.threads = 2;
    o.threads_min_pixels = 0;
    assert_true(dvpp_video_spread(&o, true, 7));
    assert_int_equal(o.threads, 2);
    assert_int_equal(dvpp_vdec_threads(&o, 16, 16), 2); /* the request's own count stands */
    o.threads = 0;
    dvpp_video_spread(&o, true, 100);
    assert_int_equal(o.threads, DVPP_VIDEO_SPREAD_MAX_THREADS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_output_takes_a_resolution_change),
        cmocka_unit_test(test_size_following_output_is_refused),
        cmocka_unit_test(test_result_names_the_first_frame),
        cmocka_unit_test(test_overlap_is_byte_identical),
        cmocka_unit_test(test_overlap_refusal_mid_stream),
        cmocka_unit_test(test_direct_frames_make_the_same_tensor),
        cmocka_unit_test(test_image_output_keeps_the_conversion),
        cmocka_unit_test(test_spread_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
