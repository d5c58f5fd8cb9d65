/* ctl_remote_jobs: the pixel commands run by a daemon (--socket), as
 * entries of the runner's table (ctl_remote.c).
 *
 * Each command builds the pipeline its offline twin runs implicitly. The
 * offline VPC calls convert formats inside one crop-resize-paste with a
 * fixed order (YUV -> RGB family: convert the crop, then resize; any other
 * pair: resize in the input's planes, convert at the output size); the
 * pipeline spells that order out with a convert op before the resize, or
 * the output conversion after it, so both paths run the same kernels on
 * the same data in the same order.
 *
 * The one-job commands (decode, resize, crop, convert, make-border,
 * preprocess, aipp) share one state and the hooks that run the job, write
 * its output with the offline writers and give the slot back; each brings
 * only how it builds its job (and what it prints after). batch-crop keeps
 * several jobs in flight.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_remote.h"
#include "dvpp_aipp.h"

/* --- shared by the commands ----------------------------------------------------- */

static bool is_rgb_family(dvpp_pixfmt f)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(f);
    return fi && !fi->is_yuv && fi->channels >= 3;
}

/* The offline VPC converts a YUV crop to an RGB-family output before it
 * resizes (dvpp_vpc_crop_resize_paste): the pipeline needs that convert
 * as its own op in front of the resize. */
static bool convert_first(dvpp_pixfmt from, dvpp_pixfmt to)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(from);
    return from != to && fi && fi->is_yuv && is_rgb_family(to);
}

/* The format the commands that take --format decode JPEG/PNG inputs to. */
static dvpp_pixfmt wanted_format(const ctl_args *a)
{
    return a->format_set ? a->format : DVPP_PIXEL_RGB;
}

/* The DCT scale the offline decode picks for --shrink-on-load WxH
 * (ctl_input.c): the smallest that still covers WxH, sides swapped for
 * EXIF orientations 5..8. */
static dvpp_status offline_shrink(const ctl_args *a, const ctl_source *s,
                                  uint8_t *scale, dvpp_err *err)
{
    dvpp_jpeg_info in;
    bool swap;
    dvpp_status st = dvpp_jpeg_probe(s->data, s->len, &in, err);

    if (st != DVPP_OK)
        return st;
    swap = !a->jpeg.no_orient && in.orientation >= 5;
    *scale = dvpp_jpeg_shrink_scale(in.width, in.height, swap ? a->shrink_h : a->shrink_w,
                                    swap ? a->shrink_w : a->shrink_h);
    return DVPP_OK;
}

/* Shrink-on-load for a job whose first op is the resize: the daemon picks
 * the scale that covers the resized image (not the WxH box), so it is
 * sent only when that is the scale the offline decode picks. 2 (after
 * printing) when it is not; 1 with @err set when the input is bad. */
static int set_shrink(const ctl_args *a, const ctl_source *s, ctl_job *j,
                      const char *cmd, dvpp_err *err)
{
    dvpp_pipeline_plan plan;
    uint8_t want;

    if (!a->shrink_on_load || !a->shrink_w || s->kind != CTL_INPUT_JPEG)
        return 0; /* offline: nothing to shrink */
    if (j->pipe.nops == 0 || j->pipe.ops[0].kind != DVPP_PIPE_OP_RESIZE) {
        fprintf(stderr, "dvppctl %s: --shrink-on-load with this format conversion is "
                        "not available with --socket\n", cmd);
        return 2;
    }
    j->pipe.decode.shrink_on_load = true;
    if (offline_shrink(a, s, &want, err) != DVPP_OK ||
        ctl_job_plan(j, s, &plan, err) != DVPP_OK)
        return 1;
    if (plan.scale_num == want)
        return 0;
    fprintf(stderr, "dvppctl %s: --shrink-on-load: the daemon would decode %s at %u/8, "
                    "this command at %u/8 (it covers the resized image, not the "
                    "--size box); not available with --socket for this input\n",
            cmd, a->inputs[0], plan.scale_num, want);
    return 2;
}

/* The aipp_op config: its text goes to the daemon, the op is needed here
 * to know which format the offline command loads the input in. */
typedef struct aipp_src {
    dvpp_buf text;              /* NUL-terminated */
    dvpp_aipp_config *cfg;
} aipp_src;

static void aipp_fini(aipp_src *as)
{
    dvpp_buf_fini(&as->text);
    free(as->cfg);
    as->cfg = NULL;
}

/* --- one job: the shared hooks ----------------------------------------------------- */

/* A one-job command's state (zeroed by the runner). */
typedef struct single_job {
    ctl_source s;               /* the input */
    ctl_job j;                  /* what the daemon runs */
    ctl_out out;                /* its answer (a slot or inline bytes) */
    uint32_t ri;                /* resize: the resize's op index */
    aipp_src as;                /* aipp: the config */
} single_job;

/* Load input 0 in @want (raw and .npy pixels as they are). 1 with @err set
 * when it cannot be read. */
static int single_load(const ctl_args *a, single_job *sj, dvpp_pixfmt want, dvpp_err *err)
{
    return ctl_source_load(a->inputs[0], a, want, &sj->s, err) == DVPP_OK ? 0 : 1;
}

static dvpp_status single_talk(dvppc_conn *c, ctl_args *a, void *state, dvpp_err *err)
{
    single_job *sj = state;

    (void)a;
    return ctl_job_run(c, &sj->j, &sj->s, &sj->out, err);
}

/* The job's output (tensor or pixels) into a->out with the offline writer. */
static dvpp_status single_write(const ctl_args *a, const single_job *sj, dvpp_err *err)
{
    dvpp_image img;
    dvpp_tensor t;
    dvpp_status st;

    if (sj->j.kind == DVPPC_TENSOR) {
        st = ctl_out_tensor(&sj->out.res, &t, err);
        return st == DVPP_OK ? ctl_write_tensor(a->out, &t, err) : st;
    }
    st = ctl_out_image(&sj->out.res, &img, err);
    return st == DVPP_OK ? ctl_write_image(a->out, &img, a->quality, err) : st;
}

static dvpp_status single_finish(ctl_args *a, void *state, dvpp_err *err)
{
    return single_write(a, state, err);
}

static void single_release(dvppc_conn *c, void *state)
{
    single_job *sj = state;

    ctl_out_fini(c, &sj->out);
}

static void single_fini(void *state)
{
    single_job *sj = state;

    ctl_source_fini(&sj->s);
    aipp_fini(&sj->as);
}

/* A one-job command: its name, how it builds its job, what it writes. */
#define SINGLE_CMD(cname, prepare_fn, finish_fn)                                           \
    {.name = (cname), .flags = CTL_REMOTE_SPEC, .state_bytes = sizeof(single_job),         \
     .prepare = (prepare_fn), .talk = single_talk, .finish = (finish_fn),                  \
     .release = single_release, .fini = single_fini}

/* --- decode ------------------------------------------------------------------------- */

static int decode_prepare(ctl_args *a, void *state, dvpp_err *err)
{
    single_job *sj = state;

    if (single_load(a, sj, wanted_format(a), err))
        return 1;
    if (sj->s.kind != CTL_INPUT_JPEG && sj->s.kind != CTL_INPUT_PNG) {
        fprintf(stderr, "dvppctl decode: raw and .npy inputs are not available with "
                        "--socket (there is nothing to decode)\n");
        return 2;
    }
    ctl_job_init(&sj->j, a, &sj->s, DVPPC_PIXELS);
    sj->j.pipe.decode.has_roi = a->jpeg.has_roi;
    sj->j.pipe.decode.roi = a->jpeg.roi;
    ctl_job_pixels(&sj->j, sj->s.format, a->jpeg.align_w, a->jpeg.align_h);
    /* cmd_decode refuses a decoder output in another format than --format
     * asks; that format is known here without decoding. */
    if (a->format_set && sj->s.format != a->format && a->format != DVPP_PIXEL_UNKNOWN) {
        dvpp_err_set(err, DVPP_EFORMAT, "format", "this input cannot be decoded to %s (use "
                     "dvppctl convert)", dvpp_pixfmt_name(a->format));
        return 1;
    }
    return 0;
}

/* --- resize ----------------------------------------------------------------------------- */

/* Letterbox bars: --pad is R,G,B. Offline, the bars are painted in the
 * output's format (the pad converted to it, f0943ff); the pipeline paints
 * them in the resize's format and then converts the whole image to the
 * output. Both give the same bytes when the resize runs in the output's
 * format, or in an RGB-family format: the pad lands there exactly and the
 * last conversion makes of it what the offline one does (every output
 * format, tests/e2e/test_dvppctl_socket_bars.py); both put the picture on
 * the output's chroma grid (dvpp_vpc_paste_grid), so no chroma sample
 * straddles its edge. A grey resize format drops the pad's chroma, and
 * one YUV layout into another resamples the bars' chroma with the
 * picture's: those, padded, stay offline. */
static bool bars_agree(dvpp_pixfmt in, dvpp_pixfmt out)
{
    return in == out || (is_rgb_family(in) && dvpp_pixfmt_get(out));
}

static int check_bars(const ctl_job *j, const ctl_source *s, uint32_t i,
                      dvpp_pixfmt out, dvpp_err *err)
{
    dvpp_pipeline_plan plan;
    const dvpp_resize_geom *g = &plan.resize[i];
    dvpp_pixfmt in = i > 0 ? j->pipe.ops[i - 1].u.convert : s->format;

    if (in == out || j->pipe.ops[i].u.resize.mode != DVPP_RESIZE_LETTERBOX)
        return 0;
    if (ctl_job_plan(j, s, &plan, err) != DVPP_OK)
        return 1;
    if (g->paste.left == 0 && g->paste.top == 0 && g->paste.right + 1 == g->out_w &&
        g->paste.bottom + 1 == g->out_h)
        return 0;
    if (bars_agree(in, out))
        return 0;
    fprintf(stderr, "dvppctl resize: --mode letterbox into %s from %s (the daemon paints "
                    "the bars in %s, then converts them) is not available with "
                    "--socket\n", dvpp_pixfmt_name(out), dvpp_pixfmt_name(in),
                    dvpp_pixfmt_name(in));
    return 2;
}

/* The job of resize: a convert in front when the offline resize would
 * convert first, then the resize; sj->ri is the resize's op index. */
static int resize_prepare(ctl_args *a, void *state, dvpp_err *err)
{
    single_job *sj = state;
    dvpp_pixfmt out_fmt;
    dvpp_status st = DVPP_OK;
    int rc;

    if (single_load(a, sj, wanted_format(a), err))
        return 1;
    out_fmt = a->format_set ? a->format : sj->s.format;
    ctl_job_init(&sj->j, a, &sj->s, DVPPC_PIXELS);
    if (convert_first(sj->s.format, out_fmt)) {
        st = ctl_job_convert(&sj->j, out_fmt, err);
        sj->ri = 1;
    }
    if (st == DVPP_OK)
        st = ctl_job_resize(&sj->j, a, a->mode, a->size_w, a->size_h, err);
    ctl_job_pixels(&sj->j, out_fmt, a->jpeg.align_w, a->jpeg.align_h);
    if (st != DVPP_OK)
        return 1;
    rc = set_shrink(a, &sj->s, &sj->j, "resize", err);
    return rc ? rc : check_bars(&sj->j, &sj->s, sj->ri, out_fmt, err);
}

static dvpp_status resize_finish(ctl_args *a, void *state, dvpp_err *err)
{
    single_job *sj = state;
    dvpp_status st = single_write(a, sj, err);

    if (st == DVPP_OK && sj->out.planned)
        ctl_print_geometry(&sj->out.plan.resize[sj->ri], a->mode);
    return st;
}

/* --- crop, convert, make-border --------------------------------------------------------- */

/* The crop, a convert in front of the resize when the offline call would
 * convert first, the resize when --size scales the ROI. */
static dvpp_status crop_job(const ctl_args *a, const ctl_source *s, const dvpp_roi *roi,
                            dvpp_pixfmt out_fmt, bool resize, ctl_job *j, dvpp_err *err)
{
    dvpp_status st;

    ctl_job_init(j, a, s, DVPPC_PIXELS);
    st = ctl_job_crop(j, roi, err);
    if (st == DVPP_OK && convert_first(s->format, out_fmt))
        st = ctl_job_convert(j, out_fmt, err);
    if (st == DVPP_OK && resize)
        st = ctl_job_resize(j, a, DVPP_RESIZE_STRETCH, a->size_w, a->size_h, err);
    ctl_job_pixels(j, out_fmt, a->jpeg.align_w, a->jpeg.align_h);
    return st;
}

static int crop_prepare(ctl_args *a, void *state, dvpp_err *err)
{
    single_job *sj = state;

    if (single_load(a, sj, wanted_format(a), err))
        return 1;
    return crop_job(a, &sj->s, &a->rois[0], a->format_set ? a->format : sj->s.format,
                    a->size_set, &sj->j, err) == DVPP_OK ? 0 : 1;
}

/* JPEG/PNG inputs were set to decode to RGB (--decode-format wins) by the
 * offline command; the output conversion is the pipeline's. */
static int convert_prepare(ctl_args *a, void *state, dvpp_err *err)
{
    single_job *sj = state;

    if (single_load(a, sj, a->format, err))
        return 1;
    ctl_job_init(&sj->j, a, &sj->s, DVPPC_PIXELS);
    ctl_job_pixels(&sj->j, a->format, a->jpeg.align_w, a->jpeg.align_h);
    return 0;
}

/* The border keeps the input's format (--format only picks the decode). */
static int border_prepare(ctl_args *a, void *state, dvpp_err *err)
{
    single_job *sj = state;
    dvpp_status st;

    if (single_load(a, sj, wanted_format(a), err))
        return 1;
    ctl_job_init(&sj->j, a, &sj->s, DVPPC_PIXELS);
    st = ctl_job_border(&sj->j, &a->border, err);
    ctl_job_pixels(&sj->j, sj->s.format, a->jpeg.align_w, a->jpeg.align_h);
    return st == DVPP_OK ? 0 : 1;
}

/* --- preprocess ----------------------------------------------------------------------------- */

/* The resize's own geometry, as the offline command prints it; without
 * a plan (the header could not be read here) the job's, which is the
 * same unless the decode shrank. */
static void print_norm_geometry(const ctl_out *out)
{
    const dvpp_resize_geom *g = &out->plan.resize[0];

    printf("{\"scale_x\": %.17g, \"scale_y\": %.17g, \"pad_x\": %.17g, "
           "\"pad_y\": %.17g}\n",
           out->planned ? g->scale_x : out->res.scale_x,
           out->planned ? g->scale_y : out->res.scale_y,
           out->planned ? g->pad_x : out->res.pad_x,
           out->planned ? g->pad_y : out->res.pad_y);
}

/* preprocess --preset: the whole job's geometry (a preset may have several
 * ops), the daemon's answer, as the local run prints its run's. */
static void print_job_geometry(const ctl_out *out)
{
    printf("{\"scale_x\": %.17g, \"scale_y\": %.17g, \"pad_x\": %.17g, "
           "\"pad_y\": %.17g}\n",
           out->res.scale_x, out->res.scale_y, out->res.pad_x, out->res.pad_y);
}

/* The daemon resolves the name ({"preset": NAME} is the spec sent). With
 * --config FILE (the daemon's config, by the user's word) the pipeline
 * resolved here sizes the output. Without it the name is left unsized,
 * shipped or not: the daemon's config may replace a shipped preset with
 * a bigger output, which a slot sized from the shipped one could not
 * take (ENOSPC); the output goes through a ring slot of the largest size
 * (ctl_job_run). */
static int preprocess_preset_prepare(ctl_args *a, single_job *sj, dvpp_err *err)
{
    dvpp_pipeline p;
    dvpp_err ignored;

    if (single_load(a, sj, DVPP_PIXEL_RGB, err))
        return 1;
    ctl_job_init(&sj->j, a, &sj->s, DVPPC_TENSOR);
    sj->j.preset = a->preset;
    dvpp_err_clear(&ignored);
    if (a->config && ctl_preset_pipeline(a, &p, &ignored) == DVPP_OK)
        sj->j.pipe = p;
    else
        sj->j.size_unknown = true;
    return 0;
}

static int preprocess_prepare(ctl_args *a, void *state, dvpp_err *err)
{
    single_job *sj = state;
    dvpp_status st;

    if (a->preset)
        return preprocess_preset_prepare(a, sj, err);
    if (single_load(a, sj, DVPP_PIXEL_RGB, err))
        return 1;
    ctl_job_init(&sj->j, a, &sj->s, DVPPC_TENSOR);
    st = ctl_job_resize(&sj->j, a, a->mode, a->size_w, a->size_h, err);
    ctl_job_normalize(&sj->j, a);
    if (st != DVPP_OK)
        return 1;
    return set_shrink(a, &sj->s, &sj->j, "preprocess", err);
}

static dvpp_status preprocess_finish(ctl_args *a, void *state, dvpp_err *err)
{
    single_job *sj = state;
    dvpp_status st = single_write(a, sj, err);

    if (st == DVPP_OK && sj->j.preset)
        print_job_geometry(&sj->out);
    else if (st == DVPP_OK)
        print_norm_geometry(&sj->out);
    return st;
}

/* --- aipp ------------------------------------------------------------------------------------- */

static dvpp_status aipp_load(const ctl_args *a, aipp_src *as, dvpp_aipp_op *op,
                             dvpp_err *err)
{
    static const char nul = '\0';
    dvpp_status st;

    dvpp_buf_init(&as->text);
    as->cfg = malloc(sizeof(*as->cfg));
    if (!as->cfg)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "out of memory");
    st = dvpp_buf_read_file(&as->text, a->config, 1u << 20, err);
    if (st == DVPP_OK)
        st = dvpp_aipp_parse((const char *)as->text.data, as->text.len, as->cfg, err);
    if (st == DVPP_OK)
        st = dvpp_buf_append(&as->text, &nul, 1);
    if (st == DVPP_OK && a->op_index >= as->cfg->nops)
        st = dvpp_err_set(err, DVPP_EINVAL, "op", "the config has %u op(s)",
                          as->cfg->nops);
    if (st == DVPP_OK)
        *op = as->cfg->ops[a->op_index];
    if (st == DVPP_OK && op->mode == DVPP_AIPP_DYNAMIC)
        st = dvpp_err_set(err, DVPP_EUNSUPPORTED, "dynamic",
                          "a dynamic aipp_op is not available with --socket");
    return st;
}

/* load_for_op of ctl_aipp.c: the input in the op's format, resized to
 * --size; a format the op does not take is converted to the one it does. */
static dvpp_status aipp_job(const ctl_args *a, const ctl_source *s,
                            const aipp_src *as, const dvpp_aipp_op *op, ctl_job *j,
                            dvpp_err *err)
{
    dvpp_pixfmt to = dvpp_aipp_accepts(op, s->format) ? s->format : ctl_aipp_pixfmt(op);
    dvpp_status st = DVPP_OK;

    ctl_job_init(j, a, s, DVPPC_TENSOR);
    if (a->size_set && convert_first(s->format, to))
        st = ctl_job_convert(j, to, err);
    if (st == DVPP_OK && a->size_set)
        st = ctl_job_resize(j, a, DVPP_RESIZE_STRETCH, a->size_w, a->size_h, err);
    ctl_job_aipp(j, (const char *)as->text.data, a->op_index, op,
                 a->layout_set ? a->layout : DVPP_LAYOUT_NC1HWC0,
                 a->dtype_set ? a->dtype : DVPP_DTYPE_F16);
    return st;
}

/* The pipeline feeds AIPP only the formats it can convert to (AYUV444_U8,
 * which the offline command loads as packed 4-byte pixels, is not one). */
static bool pipeline_takes_op(const ctl_job *j)
{
    dvpp_err e;

    dvpp_err_clear(&e);
    return dvpp_pipeline_validate(&j->pipe, NULL, &e) == DVPP_OK ||
           strcmp(e.field, "aipp.input_format") != 0;
}

static int aipp_prepare(ctl_args *a, void *state, dvpp_err *err)
{
    single_job *sj = state;
    dvpp_aipp_op op;

    if (aipp_load(a, &sj->as, &op, err) != DVPP_OK ||
        single_load(a, sj, ctl_aipp_pixfmt(&op), err) ||
        aipp_job(a, &sj->s, &sj->as, &op, &sj->j, err) != DVPP_OK)
        return 1;
    if (!pipeline_takes_op(&sj->j)) {
        fprintf(stderr, "dvppctl aipp: input_format %s is not available with --socket "
                        "(the daemon's pipeline does not feed it)\n",
                dvpp_aipp_format_name(op.input_format));
        return 2;
    }
    return 0;
}

/* --- batch-crop ---------------------------------------------------------------------------------- */

/* The jobs of a batch-crop: one per ROI, input-major as the offline
 * batch call orders them. */
typedef struct crop_jobs {
    ctl_source srcs[CTL_MAX_INPUTS];
    unsigned nsrcs;
    ctl_job *jobs;          /* nrois */
    unsigned *job_input;    /* the source of each job */
    char **specs;           /* their JSON */
    dvpp_image *dsts;       /* the outputs, copied out of the answers */
    unsigned n;
} crop_jobs;

static void crop_jobs_fini(void *state)
{
    crop_jobs *cj = state;

    for (unsigned i = 0; i < cj->nsrcs; i++)
        ctl_source_fini(&cj->srcs[i]);
    for (unsigned k = 0; cj->specs && k < cj->n; k++)
        free(cj->specs[k]);
    for (unsigned k = 0; cj->dsts && k < cj->n; k++)
        dvpp_image_free(&cj->dsts[k]);
    free(cj->jobs);
    free(cj->job_input);
    free(cj->specs);
    free(cj->dsts);
}

/* Load the inputs and make the jobs (ROIs grouped by input, stable). */
static dvpp_status crop_jobs_make(const ctl_args *a, crop_jobs *cj, dvpp_err *err)
{
    dvpp_pixfmt out_fmt;
    dvpp_status st = DVPP_OK;
    unsigned k = 0;

    for (unsigned r = 0; r < a->nrois; r++)
        if (a->roi_input[r] >= a->ninputs)
            return dvpp_err_set(err, DVPP_EINVAL, "roi", "--roi %u:... names input %u of %u",
                                a->roi_input[r], a->roi_input[r], a->ninputs);
    cj->n = a->nrois;
    cj->jobs = calloc(cj->n, sizeof(*cj->jobs));
    cj->job_input = calloc(cj->n, sizeof(*cj->job_input));
    cj->specs = calloc(cj->n, sizeof(*cj->specs));
    cj->dsts = calloc(cj->n, sizeof(*cj->dsts));
    if (!cj->jobs || !cj->job_input || !cj->specs || !cj->dsts)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "out of memory");
    for (unsigned i = 0; i < a->ninputs && st == DVPP_OK; i++, cj->nsrcs++)
        st = ctl_source_load(a->inputs[i], a, wanted_format(a), &cj->srcs[i], err);
    if (st != DVPP_OK)
        return st;
    out_fmt = a->format_set ? a->format : cj->srcs[0].format;
    for (unsigned i = 0; i < a->ninputs && st == DVPP_OK; i++) {
        for (unsigned r = 0; r < a->nrois && st == DVPP_OK; r++) {
            if (a->roi_input[r] != i)
                continue;
            st = crop_job(a, &cj->srcs[i], &a->rois[r], out_fmt, true, &cj->jobs[k], err);
            cj->job_input[k] = i;
            cj->specs[k] = st == DVPP_OK ? ctl_spec_json(&cj->jobs[k]) : NULL;
            if (st == DVPP_OK && !cj->specs[k])
                st = dvpp_err_set(err, DVPP_ENOMEM, NULL, "cannot build the spec");
            k++;
        }
    }
    return st;
}

static int crop_jobs_prepare(ctl_args *a, void *state, dvpp_err *err)
{
    return crop_jobs_make(a, state, err) == DVPP_OK ? 0 : 1;
}

/* Keep a copy of the answer's image: the slot goes back at once. */
static dvpp_status copy_out(const dvppc_result *r, dvpp_image *dst, dvpp_err *err)
{
    dvpp_image view;
    dvpp_planes pl;
    dvpp_status st = ctl_out_image(r, &view, err);

    if (st != DVPP_OK)
        return st;
    *dst = view;
    dst->data = NULL;
    st = dvpp_image_alloc(dst, err);
    if (st == DVPP_OK) {
        dvpp_image_planes(&view, &pl, NULL);
        memcpy(dst->data, view.data, pl.total);
    }
    return st;
}

/* Up to this many ROIs in flight: enough to keep the daemon's channels
 * busy, few enough that one ring of them stays small. */
#define CROP_INFLIGHT 8u

static dvpp_status crop_jobs_talk(dvppc_conn *c, ctl_args *a, void *state, dvpp_err *err)
{
    crop_jobs *cj = state;
    uint64_t tickets[CROP_INFLIGHT];
    size_t bytes = 0;
    unsigned sent = 0, got = 0, window = cj->n < CROP_INFLIGHT ? cj->n : CROP_INFLIGHT;
    dvppc_ring *ring = NULL;
    dvppc_error e;
    dvpp_status st = DVPP_OK;

    (void)a;
    for (unsigned k = 0; k < cj->n; k++) {
        dvpp_pipeline_plan plan;
        dvpp_err ignored;
        size_t b = ctl_job_plan(&cj->jobs[k], &cj->srcs[cj->job_input[k]], &plan,
                                &ignored) == DVPP_OK
                       ? ctl_job_out_bytes(&cj->jobs[k], &plan) : 0;
        bytes = b > bytes ? b : bytes;
    }
    st = ctl_ring_for(c, bytes, window, &ring, err);
    memset(&e, 0, sizeof(e));
    while (st == DVPP_OK && got < cj->n) {
        dvppc_result r;
        /* Keep the window full, then take the oldest answer. */
        while (sent < cj->n && sent - got < window) {
            const ctl_source *s = &cj->srcs[cj->job_input[sent]];
            dvppc_request q = {.kind = DVPPC_PIXELS, .spec = cj->specs[sent],
                               .input = s->data, .input_len = s->len, .input_fd = -1,
                               .ring = ring};
            if (dvppc_submit_async(c, &q, &tickets[sent % CROP_INFLIGHT], &e) != 0)
                break;
            sent++;
        }
        if (sent == got) {
            st = ctl_from_client(&e, err);
            break;
        }
        if (dvppc_wait(c, tickets[got % CROP_INFLIGHT], &r, -1, &e) != 0)
            st = ctl_from_client(&e, err);
        else
            st = copy_out(&r, &cj->dsts[got], err);
        dvppc_release(c, &r);
        got++;
    }
    /* After a failure, collect what is still in flight before the ring
     * closes under it. */
    for (; got < sent; got++) {
        dvppc_result r;
        dvppc_wait(c, tickets[got % CROP_INFLIGHT], &r, -1, NULL);
        dvppc_release(c, &r);
    }
    dvppc_ring_close(ring);
    return st;
}

static dvpp_status crop_jobs_finish(ctl_args *a, void *state, dvpp_err *err)
{
    crop_jobs *cj = state;

    return ctl_write_batch(a->out, cj->dsts, cj->n, a->quality, err);
}

/* --- the commands ------------------------------------------------------------------------------ */

const ctl_remote_cmd ctl_remote_decode_cmd = SINGLE_CMD("decode", decode_prepare,
                                                        single_finish);
const ctl_remote_cmd ctl_remote_resize_cmd = SINGLE_CMD("resize", resize_prepare,
                                                        resize_finish);
const ctl_remote_cmd ctl_remote_crop_cmd = SINGLE_CMD("crop", crop_prepare, single_finish);
const ctl_remote_cmd ctl_remote_convert_cmd = SINGLE_CMD("convert", convert_prepare,
                                                         single_finish);
const ctl_remote_cmd ctl_remote_border_cmd = SINGLE_CMD("make-border", border_prepare,
                                                        single_finish);
const ctl_remote_cmd ctl_remote_preprocess_cmd = SINGLE_CMD("preprocess", preprocess_prepare,
                                                            preprocess_finish);
const ctl_remote_cmd ctl_remote_aipp_cmd = SINGLE_CMD("aipp", aipp_prepare, single_finish);
const ctl_remote_cmd ctl_remote_batch_crop_cmd = {
    .name = "batch-crop", .flags = CTL_REMOTE_SPEC, .state_bytes = sizeof(crop_jobs),
    .prepare = crop_jobs_prepare, .talk = crop_jobs_talk, .finish = crop_jobs_finish,
    .fini = crop_jobs_fini};
