/* http_presets: GET /v1/presets, the presets of the request's settings
 * snapshot (shipped and config, docs/presets.md), answered at once on the
 * HTTP thread. */
#include <jansson.h>

#include "http_int.h"

enum MHD_Result http_presets_serve(http_req *r)
{
    json_t *o = dvppd_preset_set_json(&r->set->presets);

    if (!o)
        return http_answer_status(r, DVPP_ENOMEM, NULL, "out of memory");
    return http_answer_json(r, 200, o);
}
