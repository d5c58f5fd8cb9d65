/* dvppctl's AIPP commands: aipp, aipp-check, preprocess. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "ctl_remote.h"
#include "dvpp_aipp.h"
#include "dvpp_mem.h"
#include "dvpp_npy.h"

dvpp_status ctl_write_tensor(const char *path, const dvpp_tensor *t, dvpp_err *err)
{
    char hdr[DVPP_NPY_HEADER_MAX];
    size_t hlen = dvpp_npy_header(hdr, dvpp_dtype_npy(t->dtype), t->shape, t->ndim);
    dvpp_buf b;
    dvpp_status st;

    dvpp_buf_init(&b);
    st = dvpp_buf_append(&b, hdr, hlen);
    if (st == DVPP_OK)
        st = dvpp_buf_append(&b, t->data, t->bytes);
    if (st == DVPP_OK)
        st = dvpp_write_file(path, b.data, b.len, err);
    else
        dvpp_err_set(err, st, "output", "cannot build the .npy output");
    dvpp_buf_fini(&b);
    return st;
}

static dvpp_status load_config(const char *path, dvpp_aipp_config *cfg,
                               dvpp_err *err)
{
    dvpp_buf b;
    dvpp_status st;

    dvpp_buf_init(&b);
    st = dvpp_buf_read_file(&b, path, 1u << 20, err);
    if (st == DVPP_OK)
        st = dvpp_aipp_parse((const char *)b.data, b.len, cfg, err);
    dvpp_buf_fini(&b);
    return st;
}

int ctl_cmd_aipp_check(int argc, char **argv)
{
    dvpp_aipp_config *cfg;
    dvpp_err err;
    char text[8192];

    if (argc != 2) {
        fprintf(stderr, "usage: dvppctl aipp-check aipp.cfg\n");
        return 2;
    }
    cfg = malloc(sizeof(*cfg));
    if (!cfg)
        return 1;
    dvpp_err_clear(&err);
    if (load_config(argv[1], cfg, &err) != DVPP_OK) {
        free(cfg);
        return ctl_fail(argv[1], &err);
    }
    for (unsigned i = 0; i < cfg->nops; i++) {
        uint32_t w, h;
        dvpp_aipp_format_op(&cfg->ops[i], text, sizeof(text));
        dvpp_aipp_output_size(&cfg->ops[i], &w, &h);
        printf("# op %u: output %u x %u (W x H), %u channels\n%s\n", i, w, h,
               dvpp_aipp_channels(&cfg->ops[i]), text);
    }
    free(cfg);
    return 0;
}

dvpp_pixfmt ctl_aipp_pixfmt(const dvpp_aipp_op *op)
{
    switch (op->input_format) {
    case DVPP_AIPP_YUV420SP_U8:
        return DVPP_PIXEL_NV12;
    case DVPP_AIPP_YUV422SP_U8:
        return DVPP_PIXEL_YUV422SP;
    case DVPP_AIPP_YUYV_U8:
        return DVPP_PIXEL_YUYV;
    case DVPP_AIPP_YUV400_U8:
        return DVPP_PIXEL_YUV400;
    case DVPP_AIPP_RGB888_U8:
        return DVPP_PIXEL_RGB;
    default:
        return DVPP_PIXEL_ARGB;
    }
}

/* Load the input in the op's format, converting or resizing (--size) with
 * VPC when the file is something else. */
static dvpp_status load_for_op(ctl_args *a, const dvpp_aipp_op *op,
                               dvpp_vpc_ctx *vpc, dvpp_image *img, dvpp_err *err)
{
    dvpp_pixfmt want = ctl_aipp_pixfmt(op);
    dvpp_image in = {0}, out = {0};
    uint32_t w, h;
    dvpp_status st;

    st = ctl_load_image(a->inputs[0], a, want, &in, err);
    if (st != DVPP_OK)
        return st;
    w = a->size_set ? a->size_w : in.width;
    h = a->size_set ? a->size_h : in.height;
    if (dvpp_aipp_accepts(op, in.format) && w == in.width && h == in.height) {
        *img = in;
        return DVPP_OK;
    }
    st = dvpp_image_init(&out, dvpp_aipp_accepts(op, in.format) ? in.format : want,
                         w, h, 1, 1, err);
    if (st == DVPP_OK)
        st = dvpp_image_alloc(&out, err);
    if (st == DVPP_OK)
        st = dvpp_vpc_crop_resize_paste(vpc, &in, NULL, &out, NULL, &a->resize, err);
    dvpp_image_free(&in);
    if (st != DVPP_OK) {
        dvpp_image_free(&out);
        return st;
    }
    *img = out;
    return DVPP_OK;
}

static dvpp_status pick_op(const ctl_args *a, const dvpp_aipp_config *cfg,
                           dvpp_aipp_op *op, dvpp_err *err)
{
    dvpp_aipp_dyn *dyn;
    dvpp_buf b;
    dvpp_status st;

    if (a->op_index >= cfg->nops)
        return dvpp_err_set(err, DVPP_EINVAL, "op", "the config has %u op(s)",
                            cfg->nops);
    *op = cfg->ops[a->op_index];
    if (op->mode != DVPP_AIPP_DYNAMIC)
        return DVPP_OK;
    if (!a->dynamic)
        return dvpp_err_set(err, DVPP_EINVAL, "dynamic",
                            "a dynamic aipp_op needs its parameter blob: "
                            "--dynamic FILE");
    dyn = malloc(sizeof(*dyn));
    if (!dyn)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "out of memory");
    dvpp_buf_init(&b);
    st = dvpp_buf_read_file(&b, a->dynamic, 1u << 20, err);
    if (st == DVPP_OK)
        st = dvpp_aipp_dynamic_parse(b.data, b.len, dyn, err);
    if (st == DVPP_OK)
        st = dvpp_aipp_dynamic_op(dyn, 0, op, err);
    dvpp_buf_fini(&b);
    free(dyn);
    return st;
}

int ctl_cmd_aipp(int argc, char **argv)
{
    ctl_args *a = calloc(1, sizeof(*a));
    dvpp_aipp_config *cfg = malloc(sizeof(*cfg));
    dvpp_aipp_ctx *c = malloc(sizeof(*c));
    dvpp_image img = {0};
    dvpp_tensor t = {0};
    dvpp_aipp_op op;
    dvpp_err err;
    dvpp_status st;
    int rc;

    if (!a || !cfg || !c) {
        free(a), free(cfg), free(c);
        return 1;
    }
    rc = ctl_parse_args(argc, argv, a);
    if (!rc && (!a->config || a->ninputs != 1)) {
        fprintf(stderr, "dvppctl aipp: need one input and --config aipp.cfg\n");
        rc = 2;
    }
    if (!rc && ctl_use_socket(a))
        rc = ctl_remote_run("aipp", a);
    if (rc || ctl_use_socket(a)) {
        free(a), free(cfg), free(c);
        return rc;
    }
    dvpp_err_clear(&err);
    dvpp_aipp_ctx_init(c);
    st = load_config(a->config, cfg, &err);
    if (st == DVPP_OK)
        st = pick_op(a, cfg, &op, &err);
    if (st == DVPP_OK)
        st = load_for_op(a, &op, &c->vpc, &img, &err);
    if (st == DVPP_OK) {
        /* The library's rule for an unset source size (the pipeline's):
         * with crop_size 0 the crop is the rest of the image, so the
         * output size needs it. The hardware writes fp16 NC1HWC0;
         * --layout/--dtype for CPUs. */
        dvpp_aipp_op_for_image(&op, img.width, img.height);
        st = dvpp_aipp_tensor(&op, 1, a->layout_set ? a->layout : DVPP_LAYOUT_NC1HWC0,
                              a->dtype_set ? a->dtype : DVPP_DTYPE_F16, &t, &err);
    }
    if (st == DVPP_OK) {
        t.data = dvpp_calloc(1, t.bytes);
        if (!t.data)
            st = dvpp_err_set(&err, DVPP_ENOMEM, NULL, "cannot allocate the tensor");
    }
    if (st == DVPP_OK)
        st = dvpp_aipp_run(c, &op, &img, &t, 0, &err);
    if (st == DVPP_OK)
        st = ctl_write_tensor(a->out, &t, &err);
    rc = st == DVPP_OK ? 0 : ctl_fail(a->inputs[0], &err);
    dvpp_free(t.data, t.bytes);
    dvpp_image_free(&img);
    dvpp_aipp_ctx_fini(c);
    free(a), free(cfg), free(c);
    return rc;
}

void ctl_norm_spec(const ctl_args *a, dvpp_norm_spec *spec)
{
    dvpp_norm_spec_init(spec);
    memcpy(spec->mean, a->mean, sizeof(spec->mean));
    if (a->std_set) {               /* torchvision: (x / 255 - mean) / std */
        memcpy(spec->std, a->std, sizeof(spec->std));
    } else if (a->norm_scale_set) { /* blobFromImage: (x - mean) * scale */
        spec->scale = 1.0;
        for (int i = 0; i < 3; i++)
            spec->std[i] = 1.0 / a->norm_scale;
    }
    spec->bgr = a->bgr;
    if (a->layout_set)
        spec->layout = a->layout;
    if (a->dtype_set)
        spec->dtype = a->dtype;
}

/* preprocess --preset NAME: the preset's pipeline run here, dumped
 * (--dump) or in the daemon (--socket, which resolves the name). */
static int preprocess_preset(ctl_args *a)
{
    int rc;

    if (a->ninputs != 1) {
        fprintf(stderr, "dvppctl preprocess: --preset takes one input\n");
        return 2;
    }
    rc = ctl_preset_check(a, "preprocess");
    if (rc)
        return rc;
    if (a->dump)
        return ctl_dump_preprocess(a);
    if (ctl_use_socket(a))
        return ctl_remote_run("preprocess", a);
    return a->trace ? ctl_trace_preprocess(a) : ctl_preset_preprocess(a);
}

int ctl_cmd_preprocess(int argc, char **argv)
{
    ctl_args *a = calloc(1, sizeof(*a));
    dvpp_aipp_ctx *c = malloc(sizeof(*c));
    dvpp_image img = {0};
    dvpp_tensor t = {0};
    dvpp_resize_geom g;
    dvpp_norm_spec spec;
    dvpp_err err;
    dvpp_status st;
    int rc;

    if (!a || !c) {
        free(a), free(c);
        return 1;
    }
    rc = ctl_parse_args(argc, argv, a);
    if (!rc && a->preset) {
        rc = preprocess_preset(a);
        free(a), free(c);
        return rc;
    }
    if (!rc && (!a->size_set || a->ninputs != 1)) {
        fprintf(stderr, "dvppctl preprocess: need one input and --size WxH (or --preset "
                        "NAME)\n");
        rc = 2;
    }
    if (rc) {
        free(a), free(c);
        return rc;
    }
    if (a->shrink_on_load && !a->shrink_w)
        a->shrink_w = a->size_w, a->shrink_h = a->size_h;
    if (ctl_use_socket(a) || a->dump) {
        rc = a->dump ? ctl_dump_preprocess(a) : ctl_remote_run("preprocess", a);
        free(a), free(c);
        return rc;
    }
    if (a->trace) { /* the daemon's pipeline, run here and recorded (ctl_trace.c) */
        rc = ctl_trace_preprocess(a);
        free(a), free(c);
        return rc;
    }
    ctl_norm_spec(a, &spec);
    dvpp_err_clear(&err);
    dvpp_aipp_ctx_init(c);
    st = ctl_load_image(a->inputs[0], a, DVPP_PIXEL_RGB, &img, &err);
    if (st == DVPP_OK)
        st = dvpp_resize_geometry_rounded(img.width, img.height, a->mode, a->size_w,
                                          a->size_h, a->round, &g, &err);
    if (st == DVPP_OK)
        st = dvpp_tensor_init(&t, spec.dtype, spec.layout, 1, 3, g.out_h, g.out_w,
                              &err);
    if (st == DVPP_OK) {
        t.data = dvpp_calloc(1, t.bytes);
        if (!t.data)
            st = dvpp_err_set(&err, DVPP_ENOMEM, NULL, "cannot allocate the tensor");
    }
    if (st == DVPP_OK)
        st = dvpp_preprocess_run(c, &img, &g, &a->resize, a->pad, &spec, &t, 0, &err);
    if (st == DVPP_OK)
        st = ctl_write_tensor(a->out, &t, &err);
    if (st == DVPP_OK)
        printf("{\"scale_x\": %.17g, \"scale_y\": %.17g, \"pad_x\": %.17g, "
               "\"pad_y\": %.17g}\n", g.scale_x, g.scale_y, g.pad_x, g.pad_y);
    rc = st == DVPP_OK ? 0 : ctl_fail(a->inputs[0], &err);
    dvpp_free(t.data, t.bytes);
    dvpp_image_free(&img);
    dvpp_aipp_ctx_fini(c);
    free(a), free(c);
    return rc;
}
