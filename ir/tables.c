/* tables.c — the op, dtype, layout, scope, special-register and target tables. */
#include <string.h>
#include "ir.h"

const OpInfo ir_ops[OP__COUNT] = {
#define OP(id, sp, cls, n, fl, cc) {#id, sp, cls, n, fl, cc},
#include "ops.h"
#undef OP
};

const DTypeInfo ir_dtypes[DT__COUNT] = {
#define DT(id, sp, bits, kind) {sp, bits, kind},
    IR_DTYPES(DT)
#undef DT
};

const char *const ir_layout_names[LY__COUNT] = {
#define L(id, sp, sc) sp,
    IR_LAYOUTS(L)
#undef L
};

const uint8_t ir_layout_scope[LY__COUNT] = {
#define L(id, sp, sc) sc,
    IR_LAYOUTS(L)
#undef L
};

const char *const ir_scope_names[SC_BLOCK + 1] = {"", "thread", "warp", "warpgroup", "block"};

const char *const ir_special_names[SR__COUNT] = {
#define S(id, sp) sp,
    IR_SPECIALS(S)
#undef S
};

/* the stages `--dump-after` names: the front end's, then the lowering
 * passes of passes/pipeline.c in order (docs/tirl.md) */
const char *const ir_stage_names[] = {
    "parse", "resolve", "verify", "bind-params", "legalize", "unroll", "pipes", "async", "distribute",
    "roles", "abi", "unsupported", "all", NULL};

const char *const ir_target_names[TG__COUNT] = {
#define T(id, sp) sp,
    IR_TARGETS(T)
#undef T
};

static int eq(const char *s, size_t n, const char *name)
{
    return strlen(name) == n && memcmp(s, name, n) == 0;
}

/* "bf16" -> (BF16, 1); "f32x8" -> (F32, 8). Lanes must be 2, 4, 8 or 16. */
int ir_lookup_dtype(const char *s, size_t n, DType *dt, uint8_t *lanes)
{
    if (!n)
        return 0;
    for (int d = 1; d < DT__COUNT; d++) {
        if (ir_dtypes[d].spelling[0] != s[0]) /* cheap reject: every name is looked up */
            continue;
        size_t len = strlen(ir_dtypes[d].spelling);
        if (n < len || memcmp(s, ir_dtypes[d].spelling, len) != 0)
            continue;
        if (n == len) {
            *dt = (DType)d;
            *lanes = 1;
            return 1;
        }
        if (s[len] != 'x')
            continue;
        int l = 0;
        for (size_t i = len + 1; i < n; i++) {
            if (s[i] < '0' || s[i] > '9' || l > 64)
                return 0;
            l = l * 10 + (s[i] - '0');
        }
        if (n == len + 1 || (l != 2 && l != 4 && l != 8 && l != 16))
            return 0;
        *dt = (DType)d;
        *lanes = (uint8_t)l;
        return 1;
    }
    return 0;
}

int ir_lookup_target(const char *s, size_t n, Target *t)
{
    for (int i = 0; i < TG__COUNT; i++)
        if (eq(s, n, ir_target_names[i])) {
            *t = (Target)i;
            return 1;
        }
    return 0;
}

int ir_lookup_layout(const char *s, size_t n, Layout *l)
{
    for (int i = 1; i < LY__COUNT; i++)
        if (eq(s, n, ir_layout_names[i])) {
            *l = (Layout)i;
            return 1;
        }
    return 0;
}

int ir_dtype_bytes(DType dt)
{
    int bits = ir_dtypes[dt].bits;
    return bits >= 8 ? bits / 8 : 0;
}
