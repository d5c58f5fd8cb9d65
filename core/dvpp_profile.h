/* dvpp_profile: compatibility profiles.
 *
 * native     permissive: any size, alignment and JPEG/PNG flavour within the
 *            configured limits.
 * ascend310  Ascend 310 (DVPP V100) rules of reference/dvpp-aipp.md: input
 *            sizes, codec flavours, stride alignments, output format sets
 *            and DVPP's error texts.
 * ascend310p Ascend 310P (DVPP V200) rules.
 */
#ifndef DVPP_PROFILE_H
#define DVPP_PROFILE_H

#include <stdbool.h>

typedef enum dvpp_profile {
    DVPP_PROFILE_NATIVE = 0,
    DVPP_PROFILE_ASCEND310 = 1,
    DVPP_PROFILE_ASCEND310P = 2,
} dvpp_profile;

/* "native", "ascend310", "ascend310p". */
const char *dvpp_profile_name(dvpp_profile p);
bool dvpp_profile_parse(const char *s, dvpp_profile *out);

static inline bool dvpp_profile_is_ascend(dvpp_profile p)
{
    return p == DVPP_PROFILE_ASCEND310 || p == DVPP_PROFILE_ASCEND310P;
}

#endif
