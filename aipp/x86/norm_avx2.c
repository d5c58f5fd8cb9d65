#include "../norm_int.h"
void dvpp__norm_kern_avx2(dvpp_norm_kern *k) { (void)k; }
