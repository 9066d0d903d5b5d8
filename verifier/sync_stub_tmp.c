#include "sync.h"
void sy_check_proxy(SyK *s) { (void)s; }
void sy_check_cpasync(SyK *s) { (void)s; }
void sy_check_wgmma(SyK *s) { (void)s; }
uint32_t ver_bounds(CakeCtx *ctx, Kernel *k) { (void)ctx; (void)k; return 0; }
