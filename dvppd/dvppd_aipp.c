/* dvppd_aipp: named server-side AIPP configs. */
#include "dvppd_aipp.h"

#include <string.h>

#include "dvpp_mem.h"

/* An aipp_op file is a few KiB; anything above this is not one. */
#define AIPP_FILE_MAX (1u << 20)

static dvpp_status load_one(const dvppd_aipp_entry *e, dvpp_aipp_config *cfg,
                            dvpp_err *err)
{
    dvpp_buf b;
    dvpp_status st;
    char msg[DVPP_ERR_LEN];

    dvpp_buf_init(&b);
    st = dvpp_buf_read_file(&b, e->path, AIPP_FILE_MAX, err);
    if (st == DVPP_OK)
        st = dvpp_aipp_parse((const char *)b.data, b.len, cfg, err);
    dvpp_buf_fini(&b);
    if (st != DVPP_OK && err) {
        memcpy(msg, err->msg, sizeof(msg));
        dvpp_err_set(err, st, "aipp.configs", "aipp.configs.%s (%s): %s", e->name,
                     e->path, msg);
    }
    return st;
}

dvpp_status dvppd_aipp_set_load(dvppd_aipp_set *s, const dvppd_config *c,
                                dvpp_err *err)
{
    memset(s, 0, sizeof(*s));
    for (uint32_t i = 0; i < c->naipp; i++) {
        dvpp_aipp_config *cfg = dvpp_malloc(sizeof(*cfg));
        dvpp_status st;
        if (!cfg) {
            dvppd_aipp_set_fini(s);
            return dvpp_err_set(err, DVPP_ENOMEM, "aipp.configs", "aipp config");
        }
        st = load_one(&c->aipp[i], cfg, err);
        if (st != DVPP_OK) {
            dvpp_free(cfg, sizeof(*cfg));
            dvppd_aipp_set_fini(s);
            return st;
        }
        memcpy(s->names[s->n], c->aipp[i].name, sizeof(s->names[0]));
        s->cfg[s->n++] = cfg;
    }
    return DVPP_OK;
}

void dvppd_aipp_set_fini(dvppd_aipp_set *s)
{
    for (unsigned i = 0; i < s->n; i++)
        dvpp_free(s->cfg[i], sizeof(*s->cfg[i]));
    memset(s, 0, sizeof(*s));
}

const dvpp_aipp_config *dvppd_aipp_find(void *ctx, const char *name)
{
    const dvppd_aipp_set *s = ctx;

    for (unsigned i = 0; s && i < s->n; i++)
        if (!strcmp(s->names[i], name))
            return s->cfg[i];
    return NULL;
}
