/* caps.c — op legality per declared target: every use of a feature a declared
 * target lacks (wgmma, TMA, cp.async, mma.sync, MFMA, ...), tensor-core shapes
 * and dtypes a target has no instruction for, fragment layouts of the other
 * vendor, warp-size-dependent lane numbers, fp8 conversions. Reports E04xx
 * at the op with a note at the target clause and a help with the alternative. */
#include <string.h>
#include "vpriv.h"

static Node *N(Ver *v, NodeId n) { return &v->k->nodes[n]; }

/* what to write instead of `op` on target t */
static const char *alternative(Op op, Target t)
{
    int amd = tg_vendor(t) == VENDOR_AMD;
    switch (op) {
    case OP_WGMMA: case OP_WGMMA_WAIT:
        if (amd)
            return "use MFMA on AMD targets (`mfma acc += a * b` with mfma/mfma_a/mfma_b fragments)";
        if (t == TG_SM100A)
            return "wgmma exists on sm_90a only; on sm_100a use mma.sync (`mma acc += a * b` with "
                   "mma fragments) until TIR has tcgen05";
        return "use mma.sync on sm_80 (`mma acc += a * b` with mma/mma_a/mma_b fragments loaded by "
               "ldmatrix)";
    case OP_TMA_LOAD:
        return amd ? "load through registers (`load` + `store` into the shared tile)"
                   : "use cp.async on sm_80 (`cp.async tile <- src`, `cp.async.commit`, "
                     "`cp.async.wait N`) and a `sync` before reading the tile";
    case OP_TMA_STORE: case OP_TMA_WAIT:
        return "store from registers with `store` (or read the shared tile with `load` and store it)";
    case OP_MMA:
        return "use MFMA on AMD targets (`mfma acc += a * b` with mfma/mfma_a/mfma_b fragments)";
    case OP_MFMA:
        return "use mma.sync on NVIDIA targets (`mma acc += a * b`; wgmma on sm_90a)";
    case OP_CP_ASYNC: case OP_CP_COMMIT: case OP_CP_WAIT:
        return "load into registers and `store` into the shared tile, then `sync`";
    case OP_LDMATRIX: case OP_LDMATRIX_T:
        return "read shared memory with `load` (ds_read on AMD)";
    case OP_STMATRIX:
        return "write the fragment with `store`";
    case OP_MB_EXPECT:
        return "transaction counts need sm_90 (TMA); on sm_80 count arrivals with mbarrier.arrive";
    case OP_MBARRIER: case OP_MB_ARRIVE: case OP_MB_WAIT:
        return "synchronize with `sync` (s_barrier) on AMD targets";
    case OP_FENCE_PROXY:
        return amd ? "AMD has no async proxy: drop the fence"
                   : "sm_80 has no async proxy (no TMA, no wgmma): drop the fence";
    case OP_BAR_SYNC: case OP_BAR_ARRIVE:
        return "AMD has one block barrier: use `sync`";
    case OP_ROLE: case OP_PIPELINE:
        return "v1 has no roles on AMD targets: let every wavefront run the same code, with `sync` "
               "between the phases";
    default:
        return NULL;
    }
}

static const char *op_word(Op op)
{
    switch (op) {
    case OP_MMA: return "mma (mma.sync)";
    case OP_TMA_LOAD: return "tma";
    case OP_MBARRIER: return "mbarrier";
    default: return ir_ops[op].spelling;
    }
}

/* list of declared targets lacking `feature`, into mask; returns how many */
static int lacking(Ver *v, uint32_t feature, int *mask)
{
    int n = 0;
    for (int t = 0; t < TG__COUNT; t++) {
        mask[t] = v->k->targets[t] && !tg_has((Target)t, feature);
        n += mask[t];
    }
    return n;
}

static const char *target_list(Ver *v, const int *mask)
{
    char buf[128] = "";
    size_t used = 0;
    int cnt = 0, total = 0;
    for (int t = 0; t < TG__COUNT; t++)
        total += mask[t];
    for (int t = 0; t < TG__COUNT; t++) {
        if (!mask[t])
            continue;
        cnt++;
        int w = snprintf(buf + used, sizeof buf - used, "%s%s", cnt == 1 ? "" : cnt == total ? " and " : ", ",
                         ir_target_names[t]);
        used += w > 0 ? (size_t)w : 0;
    }
    return arena_strndup(&v->ctx->arena, buf, used);
}

/* notes at target clauses and one help per distinct alternative */
static void explain(Ver *v, Diag *d, Op op, const int *mask, const char *why)
{
    const char *said[TG__COUNT] = {0};
    int nsaid = 0;
    for (int t = 0; t < TG__COUNT; t++) {
        if (!mask[t])
            continue;
        diag_note(v->ctx, d, v->k->target_spans[t], "%s declared here%s", ir_target_names[t],
                  why ? why : "");
        const char *alt = alternative(op, (Target)t);
        int dup = 0;
        for (int i = 0; i < nsaid; i++)
            dup |= alt && !strcmp(said[i], alt);
        if (alt && !dup) {
            diag_help(v->ctx, d, "%s", alt);
            said[nsaid++] = alt;
        }
    }
}

static int n_lacking(const int *mask)
{
    int n = 0;
    for (int t = 0; t < TG__COUNT; t++)
        n += mask[t] != 0;
    return n;
}

static void check_feature(Ver *v, NodeId n)
{
    Op op = (Op)N(v, n)->op;
    uint32_t f = tg_op_feature(op);
    int mask[TG__COUNT];
    if (!f || !lacking(v, f, mask))
        return;
    Diag *d = v_report(v, E0401, n, "`%s` needs %s, which %s %s not have", op_word(op),
                       tg_feature_name(f), target_list(v, mask), n_lacking(mask) > 1 ? "do" : "does");
    explain(v, d, op, mask, NULL);
}

static void check_tc_shape(Ver *v, NodeId n)
{
    const Node *x = N(v, n);
    if (v_err(v, n) || v_err(v, x->a) || v_err(v, x->b) || v_err(v, x->c))
        return;
    const Type *C = ver_type(v->k, x->a), *A = ver_type(v->k, x->b), *B = ver_type(v->k, x->c);
    if (C->kind != TK_TILE || A->kind != TK_TILE || B->kind != TK_TILE || C->rank != 2 ||
        A->rank != 2)
        return;
    Op op = (Op)x->op;
    int64_t M = C->shape[0], Nn = C->shape[1];
    int64_t K = A->transposed ? A->shape[0] : A->shape[1];
    DType ab = (DType)A->dtype, acc = (DType)C->dtype;
    int mask[TG__COUNT];
    memset(mask, 0, sizeof mask);
    int bad = 0;
    for (int t = 0; t < TG__COUNT; t++) {
        if (!v->k->targets[t] || !tg_has((Target)t, tg_op_feature(op)))
            continue;  /* reported by check_feature */
        if (!tg_tc_tile((Target)t, op, M, Nn, K, ab, acc)) {
            mask[t] = 1;
            bad++;
        }
    }
    if (!bad)
        return;
    const char *nm = tc_family(tc_family_of(op))->name;
    Diag *d = v_report(v, E0402, n, "%s has no instruction for %s x %s -> %s with a %lld x %lld x %lld "
                       "tile on %s", nm, ir_dtypes[ab].spelling, ir_dtypes[ab].spelling,
                       ir_dtypes[acc].spelling, (long long)M, (long long)Nn, (long long)K,
                       target_list(v, mask));
    for (int t = 0; t < TG__COUNT; t++) {
        if (!mask[t])
            continue;
        char buf[512];
        uint32_t cnt = tg_tc_describe((Target)t, op, ab, buf, sizeof buf);
        diag_note(v->ctx, d, v->k->target_spans[t], "%s declared here", ir_target_names[t]);
        if (cnt)
            diag_help(v->ctx, d, "%s on %s: %s; make M, N and K multiples of one of them", nm,
                      ir_target_names[t], buf);
        else if ((ab == DT_E4M3 || ab == DT_E5M2) && !tg_has((Target)t, TF_FP8))
            diag_help(v->ctx, d, "%s has no fp8 tensor cores (sm_89+/sm_90a, gfx942 have them): "
                      "use bf16 or f16 inputs", ir_target_names[t]);
        else
            diag_help(v->ctx, d, "%s on %s has no %s inputs", nm, ir_target_names[t],
                      ir_dtypes[ab].spelling);
    }
}

static void check_layout(Ver *v, NodeId n)
{
    const Node *x = N(v, n);
    if (!(x->flags & NF_HAS_LAYOUT) || v_err(v, n))
        return;
    uint8_t ly = x->v.attr.layout;
    const TcFamilyInfo *fam = tc_family(tc_family_of_layout((Layout)ly));
    uint32_t need = fam->feature;
    int mask[TG__COUNT];
    if (!need || !lacking(v, need, mask))
        return;
    Diag *d = v_report(v, E0403, n, "layout `%s` is a %s fragment, which %s %s not have",
                       ir_layout_names[ly], tg_feature_name(need), target_list(v, mask),
                       n_lacking(mask) > 1 ? "do" : "does");
    explain(v, d, (Op)fam->op, mask, NULL);
}

static void check_lanes(Ver *v, NodeId n)
{
    const Node *x = N(v, n);
    if (x->n != 2 || v_err(v, n))
        return;
    NodeId lane = ir_list_at(v->k, x, 1);
    int64_t c;
    if (!v_const(v, lane, &c))
        return;
    int mask[TG__COUNT] = {0}, bad = 0;
    const TargetInfo *ti = NULL;
    for (int t = 0; t < TG__COUNT; t++)
        if (v->k->targets[t] && (c < 0 || c >= tg_warp((Target)t))) {
            mask[t] = 1;
            bad++;
            ti = tg_info((Target)t);
        }
    if (!bad)
        return;
    Diag *d = v_report(v, E0404, lane, "lane %s %lld is outside a %d-lane %s on %s",
                       x->op == OP_SHFL_IDX ? "number" : "offset", (long long)c, ti->warp_size,
                       ti->warp_word, target_list(v, mask));
    explain(v, d, (Op)x->op, mask, ir_fmt(v->ctx, " (%d-lane %ss)", ti->warp_size, ti->warp_word));
    diag_help(v->ctx, d, "use reduce.warp.* for reductions that fit every warp size, or keep lane "
                         "numbers below %d", ti->warp_size);
}

/* a conversion into or out of e4m3/e5m2: an explicit cast, or a converting
 * `load ... as T` (the load's type against its memory's). Targets without fp8
 * get E0407; a target with fp8 tensor cores but no OCP conversion instruction
 * (gfx942: FNUZ fp8) gets E0902 here, at check time, naming it. A literal of
 * an fp8 type is no conversion (its bits are a constant). */
/* does node e convert into or out of fp8 (a cast or a converting load)? */
static int fp8_conversion(Ver *v, NodeId e)
{
    const Node *x = N(v, e);
    if ((x->op != OP_CAST && x->op != OP_LOAD) || !x->a || (x->op == OP_LOAD && x->dtype == DT_NONE))
        return 0;
    const Type *ft = ver_type(v->k, x->a), *tt = ver_type(v->k, e);
    if (!ft || !tt || ft->dtype == tt->dtype)
        return 0;
    return ft->dtype == DT_E4M3 || ft->dtype == DT_E5M2 || tt->dtype == DT_E4M3 || tt->dtype == DT_E5M2;
}

static void check_fp8_cast(Ver *v, NodeId n, const uint8_t *dead)
{
    const Node *x = N(v, n);
    if (v_err(v, n) || !x->a || (x->op == OP_LOAD && x->dtype == DT_NONE) || dead[n])
        return;
    const Node *a = N(v, x->a);
    if (x->op == OP_CAST && (a->op == OP_INT || a->op == OP_FLOAT))
        return;
    if (x->op == OP_CAST && fp8_conversion(v, x->a))
        return;   /* `bf16x8(load x[i : +8] as e4m3x8)`: the inner conversion is the one reported */
    const Type *ft = ver_type(v->k, x->a), *tt = ver_type(v->k, n);
    if (!ft || !tt)
        return;
    DType to = (DType)tt->dtype, from = (DType)ft->dtype;
    int fp8 = to == DT_E4M3 || to == DT_E5M2 || from == DT_E4M3 || from == DT_E5M2;
    int mask[TG__COUNT];
    if (!fp8 || to == from)
        return;
    if (lacking(v, TF_FP8, mask)) {
        Diag *d = v_report(v, E0407, n, "conversion between %s and %s needs fp8 support, which %s does "
                           "not have", ir_dtypes[from].spelling, ir_dtypes[to].spelling,
                           target_list(v, mask));
        explain(v, d, OP_CAST, mask, NULL);
        diag_help(v->ctx, d, "fp8 conversions exist on sm_90a and sm_100a; use bf16 elsewhere");
        return;
    }
    if (!lacking(v, TF_FP8_CVT, mask))
        return;
    Diag *d = v_report(v, E0902, n, "not supported by code generation yet: conversion between %s and %s "
                       "in SIMT code on %s (its fp8 conversion instructions are the FNUZ variant, "
                       "not the OCP e4m3/e5m2 of TIR)", ir_dtypes[from].spelling,
                       ir_dtypes[to].spelling, target_list(v, mask));
    explain(v, d, OP_CAST, mask, NULL);
    diag_help(v->ctx, d, "compile this kernel for sm_90a, or convert to bf16 on %s", target_list(v, mask));
}

static void check_block_unit(Ver *v)
{
    int mask[TG__COUNT];
    if (v->k->block_unit != UNIT_WARPGROUPS || !lacking(v, TF_WARPGROUPS, mask))
        return;
    Diag *d = diag_report(v->ctx, E0401, v->k->block_span, "`warpgroups` needs %s, which %s does not "
                          "have", tg_feature_name(TF_WARPGROUPS), target_list(v, mask));
    for (int t = 0; t < TG__COUNT; t++)
        if (mask[t])
            diag_note(v->ctx, d, v->k->target_spans[t], "%s declared here", ir_target_names[t]);
    diag_help(v->ctx, d, "give the block size with `threads` (portable) or `warps`");
}

/* marks the nodes under a branch that the parameters' values make dead
 * (`if FP8 == 1 { ... }` with FP8 = 0): code generation never sees them
 * (passes/bind_params.c folds them), so the conversion and TMA checks skip them */
static void mark_dead(Ver *v, NodeId id, int dead, uint8_t *out, int depth)
{
    const Kernel *k = v->k;
    if (!id || id >= k->nnodes || depth > 4096)
        return;
    out[id] = (uint8_t)dead;
    const Node *n = &k->nodes[id];
    int64_t c;
    int known = n->op == OP_IF && n->a && v_const(v, n->a, &c);
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++) {
        int d = dead || (known && ((i == 1 && !c) || (i == 2 && c)));
        mark_dead(v, kids[i], d, out, depth + 1);
    }
    for (uint32_t i = 0; i < n->n; i++)
        mark_dead(v, k->lists[n->list + i], dead, out, depth + 1);
}

uint8_t *ver_dead_nodes(Ver *v)
{
    uint8_t *dead = arena_alloc(&v->ctx->arena, v->k->nnodes + 1);
    memset(dead, 0, v->k->nnodes + 1);
    mark_dead(v, v->k->body, 0, dead, 0);
    return dead;
}

/* reduce.block inside a role that is not the whole block: code generation
 * still reduces over the block (barrier 0, a scratch word per warp of the
 * block), a wrong result or a hang (tir.md 9.2): E0902 until it reduces over
 * the role */
static void check_role_reduce(Ver *v, NodeId n, const uint8_t *dead)
{
    NodeId role = v_role_of(v, n);
    if (!role || dead[n] || v_err(v, n))
        return;
    for (int t = 0; t < TG__COUNT; t++)
        for (uint32_t i = 0; v->k->targets[t] && v->block_threads[t] > 0 && i < v->nroles; i++)
            if (v->roles[i].node == role && v->roles[i].first == 0 &&
                v->roles[i].end * tg_warp((Target)t) >= v->block_threads[t])
                return;   /* the role is the whole block */
    Diag *d = v_report(v, E0902, n, "not supported by code generation yet: `%s` inside role `%s` (the "
                       "reduction still spans the whole block: barrier 0 and a scratch word per warp of the "
                       "block, so the warps outside the role make it wrong or hang it)",
                       ir_ops[N(v, n)->op].spelling, v_name(v, role));
    diag_help(v->ctx, d, "reduce outside the roles, or within the role by `reduce.warp.*` and a shared "
              "tile with a named barrier (`barrier ID, COUNT`)");
}

void ver_caps(Ver *v)
{
    if (!v->k->ntargets)
        return;
    uint8_t *dead = ver_dead_nodes(v);
    check_block_unit(v);
    for (NodeId n = 1; n < v->k->nnodes; n++) {
        if (v->in_ref[n])
            continue;  /* reference code runs on the CPU */
        Op op = (Op)N(v, n)->op;
        switch (op) {
        case OP_MMA: case OP_WGMMA: case OP_MFMA:
            check_feature(v, n);
            check_tc_shape(v, n);
            break;
        case OP_REG: check_layout(v, n); break;
        case OP_SHFL_XOR: case OP_SHFL_DOWN: case OP_SHFL_UP: case OP_SHFL_IDX:
            check_lanes(v, n);
            break;
        case OP_CAST: check_fp8_cast(v, n, dead); break;
        case OP_BLOCK_ADD: case OP_BLOCK_MAX: case OP_BLOCK_MIN:
            check_role_reduce(v, n, dead);
            check_feature(v, n);
            break;
        case OP_LOAD: check_fp8_cast(v, n, dead); check_feature(v, n); break;
        default:
            check_feature(v, n);
            break;
        }
    }
}
