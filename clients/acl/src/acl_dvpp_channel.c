/* acl_dvpp_channel.c: the image channel description (mode, CSC matrix,
 * width/height, JPEGD precision mode, channel id) and the channel itself.
 *
 * A channel is bookkeeping on the CPU model: acldvppCreateChannel gives it
 * a process-wide id (acli_next_id, counting from 1) and marks it usable;
 * every task snapshots what it needs of it (profile, CSC), so destroying a
 * channel never touches work already queued. */
#include <stdlib.h>
#include <string.h>

#include "acl_dvpp_int.h"

static const char *chip_name(void)
{
    return acli_profile() == DVPP_PROFILE_ASCEND310 ? "Ascend310" : "Ascend310P";
}

acldvppChannelDesc *acldvppCreateChannelDesc(void)
{
    acldvppChannelDesc *cd = calloc(1, sizeof(*cd));

    if (!cd) {
        acli_fail(ACL_ERROR_BAD_ALLOC, "acldvppCreateChannelDesc: out of memory");
        return NULL;
    }
    cd->mode = ACLI_CHNMODE_ALL;
    cd->csc_matrix = ACL_DVPP_CSC_MATRIX_BT601_WIDE;
    cd->precision_mode = ACL_YUVOUT_ALIGN_DOWN;
    if (!acli_handle_add(cd, ACLI_CHANNEL_DESC)) {
        free(cd);
        acli_fail(ACL_ERROR_BAD_ALLOC,
                  "acldvppCreateChannelDesc: the handle registry cannot grow");
        return NULL;
    }
    return cd;
}

aclError acldvppDestroyChannelDesc(acldvppChannelDesc *channelDesc)
{
    if (!channelDesc)
        return ACL_SUCCESS;
    if (!acli_handle_remove(channelDesc, ACLI_CHANNEL_DESC))
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "acldvppDestroyChannelDesc: %p is not a live channel description",
                         (void *)channelDesc);
    free(channelDesc);
    return ACL_SUCCESS;
}

uint64_t acldvppGetChannelDescChannelId(const acldvppChannelDesc *channelDesc)
{
    return acli_handle_ok(channelDesc, ACLI_CHANNEL_DESC) ? channelDesc->channel_id : 0;
}

static aclError set_mode(acldvppChannelDesc *cd, uint32_t mode, const char *what)
{
    if (acli_profile() == DVPP_PROFILE_ASCEND310)
        return acli_fail(ACL_ERROR_FEATURE_UNSUPPORTED,
                         "%s: the channel mode is not supported on Ascend310 (every "
                         "channel serves VPC, JPEGD, JPEGE and PNGD)", what);
    if (mode < 1 || mode > ACLI_CHNMODE_ALL)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "%s: mode(%u) should be between [1, %u]", what, mode,
                         ACLI_CHNMODE_ALL);
    if (cd->created)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "%s: the channel is already created; set the mode before "
                         "acldvppCreateChannel", what);
    cd->mode = mode;
    return ACL_SUCCESS;
}

aclError acldvppSetChannelDescMode(acldvppChannelDesc *channelDesc, uint32_t mode)
{
    if (acli_profile() != DVPP_PROFILE_ASCEND310 &&
        !acli_handle_ok(channelDesc, ACLI_CHANNEL_DESC))
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "acldvppSetChannelDescMode: channelDesc is NULL or destroyed");
    return set_mode(channelDesc, mode, "acldvppSetChannelDescMode");
}

/* One parameter's value size and where it lives. */
static size_t chan_param_size(acldvppChannelDescParamType t)
{
    switch (t) {
    case ACL_DVPP_CHANNEL_ID_UINT64:
        return sizeof(uint64_t);
    case ACL_DVPP_CSC_MATRIX_UINT32:
    case ACL_DVPP_MODE_UINT32:
    case ACL_DVPP_CHANNEL_HEIGHT_UINT32:
    case ACL_DVPP_CHANNEL_WIDTH_UINT32:
        return sizeof(uint32_t);
    case ACL_DVPP_JPEGD_PRECISION_MODE_ENUM:
        return sizeof(acldvppJpegdPrecisionMode);
    default:
        return 0;
    }
}

static aclError set_csc(acldvppChannelDesc *cd, uint32_t v)
{
    if (v > ACL_DVPP_CSC_MATRIX_BT2020_NARROW)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "acldvppSetChannelDescParam: csc matrix(%u) should be between "
                         "[0, 5]", v);
    if (v >= ACL_DVPP_CSC_MATRIX_BT2020_WIDE)
        return acli_fail(ACL_ERROR_FEATURE_UNSUPPORTED,
                         "acldvppSetChannelDescParam: BT.2020 colour conversion is not "
                         "supported by the CPU model (BT.601 and BT.709 are)");
    cd->csc_matrix = v;
    return ACL_SUCCESS;
}

/* What both param calls check first: a live description and a known
 * paramType (@need: its value's size, 0 for an unknown one). */
static aclError chan_param_known(const acldvppChannelDesc *cd, acldvppChannelDescParamType t,
                                 size_t need, const char *what)
{
    if (!acli_handle_ok(cd, ACLI_CHANNEL_DESC))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: channelDesc is NULL or destroyed",
                         what);
    if (!need)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: unknown paramType %d", what, (int)t);
    return ACL_SUCCESS;
}

/* ... and, once param is known to be there, that @length holds the value. */
static aclError chan_param_length(acldvppChannelDescParamType t, size_t need, size_t length,
                                  const char *what)
{
    if (length < need)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "%s: length(%zu) should be at least %zu for paramType %d", what,
                         length, need, (int)t);
    return ACL_SUCCESS;
}

aclError acldvppSetChannelDescParam(acldvppChannelDesc *channelDesc,
                                    acldvppChannelDescParamType paramType, size_t length,
                                    const void *param)
{
    const char *what = "acldvppSetChannelDescParam";
    size_t need = chan_param_size(paramType);
    uint32_t v32 = 0;
    aclError rc = chan_param_known(channelDesc, paramType, need, what);

    if (rc == ACL_SUCCESS && !param)
        rc = acli_fail(ACL_ERROR_INVALID_PARAM, "%s: param is NULL", what);
    if (rc == ACL_SUCCESS)
        rc = chan_param_length(paramType, need, length, what);
    if (rc != ACL_SUCCESS)
        return rc;
    if (need == sizeof(uint32_t))
        memcpy(&v32, param, sizeof(v32));
    switch (paramType) {
    case ACL_DVPP_CSC_MATRIX_UINT32:
        return set_csc(channelDesc, v32);
    case ACL_DVPP_MODE_UINT32:
        return set_mode(channelDesc, v32, what);
    case ACL_DVPP_CHANNEL_ID_UINT64:
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "%s: the channel id is assigned by acldvppCreateChannel", what);
    case ACL_DVPP_CHANNEL_HEIGHT_UINT32:
        channelDesc->height = v32;
        return ACL_SUCCESS;
    case ACL_DVPP_CHANNEL_WIDTH_UINT32:
        channelDesc->width = v32;
        return ACL_SUCCESS;
    case ACL_DVPP_JPEGD_PRECISION_MODE_ENUM: {
        acldvppJpegdPrecisionMode m;
        memcpy(&m, param, sizeof(m));
        if ((unsigned)m > ACL_YUVOUT_ALIGN_DOWN_COMPAT)
            return acli_fail(ACL_ERROR_INVALID_PARAM,
                             "%s: JPEGD precision mode(%d) should be between [0, 2]", what,
                             (int)m);
        channelDesc->precision_mode = (uint32_t)m;
        return ACL_SUCCESS;
    }
    }
    return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: unknown paramType %d", what,
                     (int)paramType);
}

aclError acldvppGetChannelDescParam(const acldvppChannelDesc *channelDesc,
                                    acldvppChannelDescParamType paramType, size_t length,
                                    size_t *paramRetSize, void *param)
{
    const char *what = "acldvppGetChannelDescParam";
    size_t need = chan_param_size(paramType);
    uint32_t v32 = 0;
    acldvppJpegdPrecisionMode pm;
    aclError rc = chan_param_known(channelDesc, paramType, need, what);

    if (rc == ACL_SUCCESS && (!param || !paramRetSize))
        rc = acli_fail(ACL_ERROR_INVALID_PARAM, "%s: param or paramRetSize is NULL", what);
    if (rc == ACL_SUCCESS)
        rc = chan_param_length(paramType, need, length, what);
    if (rc != ACL_SUCCESS)
        return rc;
    switch (paramType) {
    case ACL_DVPP_CHANNEL_ID_UINT64:
        memcpy(param, &channelDesc->channel_id, sizeof(uint64_t));
        *paramRetSize = sizeof(uint64_t);
        return ACL_SUCCESS;
    case ACL_DVPP_JPEGD_PRECISION_MODE_ENUM:
        pm = (acldvppJpegdPrecisionMode)channelDesc->precision_mode;
        memcpy(param, &pm, sizeof(pm));
        *paramRetSize = sizeof(pm);
        return ACL_SUCCESS;
    case ACL_DVPP_CSC_MATRIX_UINT32:
        v32 = channelDesc->csc_matrix;
        break;
    case ACL_DVPP_MODE_UINT32:
        v32 = channelDesc->mode;
        break;
    case ACL_DVPP_CHANNEL_HEIGHT_UINT32:
        v32 = channelDesc->height;
        break;
    case ACL_DVPP_CHANNEL_WIDTH_UINT32:
        v32 = channelDesc->width;
        break;
    }
    memcpy(param, &v32, sizeof(v32));
    *paramRetSize = sizeof(v32);
    return ACL_SUCCESS;
}

aclError acldvppCreateChannel(acldvppChannelDesc *channelDesc)
{
    if (!acli_handle_ok(channelDesc, ACLI_CHANNEL_DESC))
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "acldvppCreateChannel: channelDesc is NULL or destroyed");
    if (!acli_initialized())
        return acli_fail(ACL_ERROR_UNINITIALIZE,
                         "acldvppCreateChannel: aclInit has not been called");
    if (channelDesc->created)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "acldvppCreateChannel: channel %llu is already created",
                         (unsigned long long)channelDesc->channel_id);
    channelDesc->channel_id = acli_next_id();
    channelDesc->created = true;
    return ACL_SUCCESS;
}

aclError acldvppDestroyChannel(acldvppChannelDesc *channelDesc)
{
    if (!acli_handle_ok(channelDesc, ACLI_CHANNEL_DESC))
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "acldvppDestroyChannel: channelDesc is NULL or destroyed");
    if (!channelDesc->created)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "acldvppDestroyChannel: the channel was not created");
    channelDesc->created = false;
    return ACL_SUCCESS;
}

static const char *mode_name(uint32_t flag)
{
    switch (flag) {
    case DVPP_CHNMODE_VPC:
        return "VPC";
    case DVPP_CHNMODE_JPEGD:
        return "JPEGD";
    case DVPP_CHNMODE_JPEGE:
        return "JPEGE";
    default:
        return "PNGD";
    }
}

aclError acli_dvpp_channel_use(const acldvppChannelDesc *cd, uint32_t mode_flag,
                               const char *what, acli_dvpp_chan *out)
{
    if (!acli_handle_ok(cd, ACLI_CHANNEL_DESC))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: channelDesc is NULL or destroyed",
                         what);
    if (!cd->created)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "%s: the channel is not created (call acldvppCreateChannel)",
                         what);
    if (!(cd->mode & mode_flag))
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "%s: %s channel mode %u does not include %s", what, chip_name(),
                         cd->mode, mode_name(mode_flag));
    out->profile = (dvpp_profile)acli_profile();
    switch (cd->csc_matrix) {
    case ACL_DVPP_CSC_MATRIX_BT601_NARROW:
        out->matrix = DVPP_CSC_BT601, out->full_range = false;
        break;
    case ACL_DVPP_CSC_MATRIX_BT709_WIDE:
        out->matrix = DVPP_CSC_BT709, out->full_range = true;
        break;
    case ACL_DVPP_CSC_MATRIX_BT709_NARROW:
        out->matrix = DVPP_CSC_BT709, out->full_range = false;
        break;
    default: /* BT601_WIDE, DVPP's default */
        out->matrix = DVPP_CSC_BT601, out->full_range = true;
        break;
    }
    return ACL_SUCCESS;
}
