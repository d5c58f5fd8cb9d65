#include "dvpp_profile.h"

#include <string.h>

static const char *const k_profiles[] = {"native", "ascend310", "ascend310p"};

const char *dvpp_profile_name(dvpp_profile p)
{
    return (unsigned)p <= DVPP_PROFILE_ASCEND310P ? k_profiles[p] : "unknown";
}

bool dvpp_profile_parse(const char *s, dvpp_profile *out)
{
    for (unsigned i = 0; i <= DVPP_PROFILE_ASCEND310P; i++) {
        if (strcmp(s, k_profiles[i]) == 0) {
            *out = (dvpp_profile)i;
            return true;
        }
    }
    return false;
}
