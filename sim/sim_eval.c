/* sim_eval.c — expressions of TIR-L for one thread (sim.h): values in the
 * dtype of each node (f32 arithmetic rounded to f32 after every operation,
 * integers wrapped to their width), conversions, register arrays, memory
 * references of tensors and shared tiles (the launch plan's slots, the
 * swizzle and panels of ir/layout.h, as codegen addresses them), shuffles
 * and warp/block reductions as collectives of their threads. */
#include <math.h>
#include <string.h>
#include "sim_priv.h"
#include "fastmath.h"

const Type *sim_type(const Sim *s, NodeId e)
{
    return &s->k->types[s->k->nodes[e].type];
}

static int64_t wrap_int(uint8_t dt, int64_t v)
{
    int bits = ir_dtypes[dt].bits;
    if (dt == DT_BOOL)
        return v != 0;
    if (bits >= 64)
        return v;
    uint64_t m = ((uint64_t)1 << bits) - 1, u = (uint64_t)v & m;
    if (ir_dtypes[dt].kind == 'i' && (u >> (bits - 1)))
        return (int64_t)(u | ~m);
    return (int64_t)u;
}

static int64_t sat_int(uint8_t dt, double x)
{
    if (isnan(x))
        return 0;
    x = trunc(x);
    int bits = ir_dtypes[dt].bits;
    double lo = ir_dtypes[dt].kind == 'i' ? -ldexp(1, bits - 1) : 0;
    double hi = ir_dtypes[dt].kind == 'i' ? ldexp(1, bits - 1) - 1 : ldexp(1, bits) - 1;
    if (dt == DT_BOOL)
        return x != 0;
    if (x < lo)
        x = lo;
    if (x > hi)
        x = hi;
    if (bits >= 64 && x >= 0x1p63)
        return INT64_MAX;
    return (int64_t)x;
}

static SL conv1(SL v, uint8_t from, uint8_t to)
{
    SL r;
    int ff = sv_isf(from), tf = sv_isf(to);
    if (tf)
        r.f = interp_round((DType)to, ff ? v.f : (double)v.i);
    else if (to == DT_BOOL)
        r.i = ff ? v.f != 0 : v.i != 0;
    else
        r.i = ff ? sat_int(to, v.f) : wrap_int(to, v.i);
    return r;
}

void sim_convert(SV *v, uint8_t dt, int lanes)
{
    if (lanes < 1)
        lanes = 1;
    if (v->n == 1 && lanes > 1)
        for (int j = 1; j < lanes; j++)
            v->l[j] = v->l[0];
    for (int j = 0; j < lanes; j++)
        v->l[j] = v->dt == dt ? v->l[j] : conv1(v->l[j], v->dt, dt);
    v->dt = dt;
    v->n = (uint8_t)lanes;
}

static void result_type(const Sim *s, NodeId e, uint8_t *dt, int *lanes)
{
    const Type *t = sim_type(s, e);
    *dt = t->dtype ? t->dtype : DT_I64;
    *lanes = t->lanes > 1 ? t->lanes : 1;
}

/* ---- frame slots ------------------------------------------------------------ */

void sim_slot_read(Sim *s, SimThread *t, uint32_t slot, SL *out)
{
    if (t->inflight[slot] == 1 && !s->failed)
        sim_fail(s, 1, E0981, t->wnode, "thread %d reads an accumulator register that a wgmma in "
                 "flight still writes (no @wgmma_wait retires it first)", t->tid);
    *out = t->frame[slot];
}

void sim_slot_write(Sim *s, SimThread *t, uint32_t slot, SL v, NodeId at)
{
    if (t->inflight[slot] && !s->failed)
        sim_fail(s, 1, E0981, at, "thread %d writes a register that a wgmma in flight still %s "
                 "(no @wgmma_wait retires it first)", t->tid, t->inflight[slot] == 1 ? "writes" : "reads");
    t->frame[slot] = v;
}

/* NAME of a LET/VAR/FOR or INDEX of a register array -> its first slot */
uint32_t sim_lvalue(Sim *s, SimThread *t, NodeId e, int *lanes, uint8_t *dt)
{
    const Node *n = sim_node(s, e);
    NodeId base = n->op == OP_INDEX ? n->a : e;
    NodeId d = sim_node(s, base)->decl;
    if (!d || !s->slot[d]) {
        sim_fail(s, 2, E0983, e, "the executor has no storage for this name");
        return 0;
    }
    uint32_t slot = s->slot[d] - 1;
    result_type(s, e, dt, lanes);
    if (n->op != OP_INDEX)
        return slot;
    const Type *rt = sim_type(s, d);
    int64_t off = 0;
    int el = rt->lanes > 1 ? rt->lanes : 1;
    for (uint32_t i = 0; i < n->n; i++) {
        int64_t x = sim_int(s, t, sim_arg(s, e, i));
        int64_t ext = i < rt->rank ? rt->shape[i] : 1;
        if (x < 0 || x >= ext) {
            sim_fail(s, 1, E0982, e, "thread %d indexes register array `%s` at %lld, outside 0 .. %lld",
                     t->tid, ir_symstr(s->ctx, sim_node(s, d)->name), (long long)x, (long long)ext - 1);
            return slot;
        }
        off = off * ext + x;
    }
    if (*lanes > el)
        *lanes = el;
    return slot + (uint32_t)(off * el);
}

/* ---- memory references -------------------------------------------------------- */

static uint32_t smem_slot(const Sim *s, NodeId decl, int *found)
{
    const KPlan *p = s->k->plan;
    for (uint32_t i = 0; i < p->nsmem; i++)
        if (p->smem[i].decl == decl) {
            *found = 1;
            return p->smem[i].offset;
        }
    *found = 0;
    return 0;
}

/* codegen's shared offset (cg_lower.c cg_smem_offset), from ir/layout's geometry */
static uint32_t smem_offset(Sim *s, NodeId decl, const int64_t *idx, int rank, int raw, NodeId at)
{
    const Node *d = sim_node(s, decl);
    int found;
    uint32_t base = smem_slot(s, decl, &found);
    if (!found) {
        sim_fail(s, 2, E0983, at, "shared declaration `%s` has no slot in the launch plan",
                 ir_symstr(s->ctx, d->name));
        return 0;
    }
    if (d->op == OP_MBARRIER)
        return base + (uint32_t)(rank ? idx[0] * 8 : 0);
    const Type *t = sim_type(s, decl);
    int64_t eb = ir_dtype_bytes((DType)t->dtype) ? ir_dtype_bytes((DType)t->dtype) : 1;
    eb *= t->lanes ? t->lanes : 1;
    int S = d->v.attr.swizzle, r = t->rank;
    for (int i = 0; i < r; i++)
        if (i >= rank || idx[i] < 0 || idx[i] >= t->shape[i]) {
            sim_fail(s, 1, E0982, at, "shared tile `%s` indexed at %lld in dim %d, outside 0 .. %lld",
                     ir_symstr(s->ctx, d->name), (long long)(i < rank ? idx[i] : -1), i,
                     (long long)t->shape[i] - 1);
            return base;
        }
    LySmemGeom g = ly_smem_geom(t->shape, r, eb, S);
    int64_t off = 0;
    if (r >= 2 && g.panel != g.cols) {
        int64_t lead = 0;
        for (int i = 0; i < r - 2; i++)
            lead = lead * t->shape[i] + idx[i];
        int64_t col = idx[r - 1], row = idx[r - 2];
        off = lead * g.bytes + col / g.panel * (g.rows * g.panel * g.e) + row * g.panel * g.e +
              col % g.panel * g.e;
    } else {
        for (int i = 0; i < r; i++)
            off = off * t->shape[i] + idx[i];
        off *= eb;
    }
    if (S && !raw)
        off = ly_swizzle((uint32_t)off, S);
    return base + (uint32_t)off;
}

static NodeId ref_index(const Sim *s, NodeId ref)
{
    while (ref && (sim_node(s, ref)->op == OP_CAST || sim_node(s, ref)->op == OP_TRANS))
        ref = sim_node(s, ref)->a;
    return ref;
}

uint32_t sim_saddr(Sim *s, SimThread *t, NodeId ref, int raw)
{
    ref = ref_index(s, ref);
    const Node *r = sim_node(s, ref);
    NodeId base = r->op == OP_INDEX ? r->a : ref;
    int64_t idx[IR_MAX_RANK] = {0};
    uint32_t n = r->op == OP_INDEX ? r->n : 0;
    for (uint32_t i = 0; i < n && i < IR_MAX_RANK; i++) {
        NodeId x = sim_arg(s, ref, i);
        if (sim_node(s, x)->op == OP_SLICE)
            x = sim_node(s, x)->a;
        idx[i] = sim_int(s, t, x);
    }
    return smem_offset(s, sim_node(s, base)->decl, idx, (int)n, raw, ref);
}

static int arg_index(const Sim *s, NodeId decl)
{
    for (uint32_t i = 0; i < s->k->nargs; i++)
        if (s->k->args[i] == decl)
            return (int)i;
    return -1;
}

int sim_ref(Sim *s, SimThread *t, NodeId ref, SimRef *r)
{
    memset(r, 0, sizeof *r);
    ref = ref_index(s, ref);
    const Node *n = sim_node(s, ref);
    if (n->op != OP_INDEX) {
        sim_fail(s, 2, E0983, ref, "a memory reference the executor does not take apart");
        return 0;
    }
    NodeId decl = sim_node(s, n->a)->decl;
    const Node *d = sim_node(s, decl);
    int64_t idx[IR_MAX_RANK] = {0};
    int lanes = 1;
    for (uint32_t i = 0; i < n->n && i < IR_MAX_RANK; i++) {
        NodeId x = sim_arg(s, ref, i);
        if (sim_node(s, x)->op == OP_SLICE) {
            lanes = (int)sim_int(s, t, sim_node(s, x)->b);
            x = sim_node(s, x)->a;
        }
        idx[i] = sim_int(s, t, x);
    }
    r->lanes = lanes;
    if (d->op == OP_SHARED) {
        const Type *ty = sim_type(s, decl);
        r->shared = 1;
        r->dt = ty->dtype;
        r->eb = interp_elem_bytes((DType)ty->dtype);
        if (ty->lanes > 1)
            r->lanes *= ty->lanes;
        int64_t last = idx[n->n - 1] + lanes - 1;
        if (n->n && lanes > 1 && last >= ty->shape[n->n - 1]) {
            sim_fail(s, 1, E0982, ref, "thread %d: a %d-lane access of shared tile `%s` runs past its "
                     "last column", t->tid, lanes, ir_symstr(s->ctx, d->name));
            return 0;
        }
        r->soff = smem_offset(s, decl, idx, (int)n->n, 0, ref);
        r->ok = !s->failed;
        return r->ok;
    }
    int a = d->op == OP_ARG ? arg_index(s, decl) : -1;
    if (a < 0 || !s->L->bufs[a].is_tensor) {
        sim_fail(s, 2, E0983, ref, "a memory reference the executor does not take apart");
        return 0;
    }
    const CheckBuffer *b = &s->L->bufs[a];
    int64_t off = 0;
    for (int i = 0; i < b->rank; i++) {
        int64_t hi = idx[i] + (i == b->rank - 1 ? lanes - 1 : 0);
        if ((uint32_t)i >= n->n || idx[i] < 0 || hi >= b->shape[i]) {
            sim_fail(s, 1, E0982, ref, "thread %d of block (%lld, %lld, %lld) reads or writes `%s` at "
                     "index %lld of dim %d (extent %lld)", t->tid, (long long)s->block[0],
                     (long long)s->block[1], (long long)s->block[2], b->name,
                     (long long)(idx[i] < 0 ? idx[i] : hi), i, (long long)b->shape[i]);
            return 0;
        }
        off += idx[i] * b->stride[i];
    }
    r->dt = b->dtype;
    r->eb = interp_elem_bytes(b->dtype);
    r->gptr = (uint8_t *)b->host + off * r->eb;
    if (lanes > 1 && b->stride[b->rank - 1] != 1) {
        sim_fail(s, 2, E0983, ref, "a vector access along a strided dim");
        return 0;
    }
    r->ok = 1;
    return 1;
}

static void check_shared(Sim *s, SimThread *t, const SimRef *r, int write, NodeId at)
{
    uint32_t n = (uint32_t)(r->lanes * r->eb);
    if ((uint64_t)r->soff + n > s->smem_bytes) {
        sim_fail(s, 1, E0982, at, "thread %d: shared access at byte %u past the %u-byte buffer",
                 t->tid, r->soff, s->smem_bytes);
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        if (s->async_w[r->soff + i] || (write && s->async_r[r->soff + i])) {
            sim_fail(s, 1, E0981, at, "thread %d %s %s while %s (no wait orders them)",
                     t->tid, write ? "writes" : "reads", sim_smem_name(s, r->soff + i),
                     s->async_w[r->soff + i] ? "a TMA load still writes it"
                                             : "a wgmma or TMA store still reads it");
            return;
        }
    sim_race_access(s, t, r->soff, n, write, at);
}

void sim_mem_load(Sim *s, SimThread *t, const SimRef *r, SV *out, NodeId at)
{
    out->dt = r->dt;
    out->n = (uint8_t)r->lanes;
    const uint8_t *p = r->gptr;
    if (r->shared) {
        check_shared(s, t, r, 0, at);
        p = s->smem + r->soff;
    }
    if (s->failed)
        return;
    for (int j = 0; j < r->lanes && j < SIM_LANES; j++) {
        double v = interp_decode((DType)r->dt, p + j * r->eb);
        if (sv_isf(r->dt))
            out->l[j].f = v;
        else
            out->l[j].i = (int64_t)v;
    }
}

void sim_mem_store(Sim *s, SimThread *t, const SimRef *r, const SV *v, NodeId at)
{
    uint8_t *p = r->gptr;
    if (r->shared) {
        check_shared(s, t, r, 1, at);
        p = s->smem + r->soff;
    }
    if (s->failed)
        return;
    SV x = *v;
    sim_convert(&x, r->dt, r->lanes);
    for (int j = 0; j < r->lanes && j < SIM_LANES; j++)
        interp_encode((DType)r->dt, sv_isf(r->dt) ? x.l[j].f : (double)x.l[j].i, p + j * r->eb);
}

/* ---- collectives in expressions ---------------------------------------------- */

static double fold(Op op, double a, double b)
{
    if (op == OP_WARP_ADD || op == OP_BLOCK_ADD)
        return a + b;
    if (op == OP_WARP_MAX || op == OP_BLOCK_MAX)
        return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
    return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
}

/* the group of a reduction or shuffle: first thread, count, its collective */
static SimColl *group_of(Sim *s, SimThread *t, const Node *n, int *first, int *count)
{
    Op op = (Op)n->op;
    if (op == OP_BLOCK_ADD || op == OP_BLOCK_MAX || op == OP_BLOCK_MIN) {
        IrRoleRed rr = ir_role_red_unpack(n->v.i);
        if (rr.nwarps) {
            *first = (int)rr.first_warp * s->warp;
            *count = (int)rr.nwarps * s->warp;
            return &s->bars[15 - (rr.first_warp % 8)];
        }
        *first = 0;
        *count = s->nthreads;
        return &s->block_coll;
    }
    *first = t->tid / s->warp * s->warp;
    *count = s->warp;
    return &s->warps[t->tid / s->warp];
}

static void collective_expr(Sim *s, SimThread *t, NodeId e, SV *out)
{
    const Node *n = sim_node(s, e);
    Op op = (Op)n->op;
    sim_eval(s, t, sim_arg(s, e, 0), &t->dep[0]);
    int64_t m = n->n > 1 ? sim_int(s, t, sim_arg(s, e, 1)) : 0;
    t->dep[2].l[0].i = m;
    int first, count;
    SimColl *c = group_of(s, t, n, &first, &count);
    int live = sim_live_in(s, first, count);
    if (s->failed)
        return;
    if (sim_coll(s, t, c, e, live)) { /* the last to arrive computes every lane's result */
        int shfl = op == OP_SHFL_XOR || op == OP_SHFL_DOWN || op == OP_SHFL_UP || op == OP_SHFL_IDX;
        if (shfl) {
            for (int i = first; i < first + count; i++) {
                SimThread *u = &s->th[i];
                if (u->state == TS_DONE)
                    continue;
                int l = i - first, mm = (int)u->dep[2].l[0].i, src = l;
                switch (op) {
                case OP_SHFL_XOR: src = l ^ mm; break;
                case OP_SHFL_DOWN: src = l + mm < count ? l + mm : l; break;
                case OP_SHFL_UP: src = l - mm >= 0 ? l - mm : l; break;
                default: src = mm & (count - 1); break;
                }
                u->dep[1] = s->th[first + src].dep[0];
            }
        } else {
            SV acc = {0};
            int have = 0;
            for (int i = first; i < first + count; i++) {
                SimThread *u = &s->th[i];
                if (u->state == TS_DONE)
                    continue;
                if (!have) {
                    acc = u->dep[0];
                    have = 1;
                    continue;
                }
                for (int j = 0; j < acc.n; j++) {
                    if (sv_isf(acc.dt))
                        acc.l[j].f = interp_round((DType)acc.dt, fold(op, acc.l[j].f, u->dep[0].l[j].f));
                    else
                        acc.l[j].i = (int64_t)fold(op, (double)acc.l[j].i, (double)u->dep[0].l[j].i);
                }
            }
            for (int i = first; i < first + count; i++)
                s->th[i].dep[1] = acc;
        }
        sim_coll_done(s, t, c);
    }
    *out = t->dep[1];
}

/* ---- operators ------------------------------------------------------------------ */

static double fbin(Op op, double a, double b)
{
    switch (op) {
    case OP_ADD: return a + b;
    case OP_SUB: return a - b;
    case OP_MUL: return a * b;
    case OP_DIV: return a / b;
    case OP_MOD: return fmod(a, b);
    case OP_POW: return pow(a, b);
    case OP_MAX: return isnan(a) || isnan(b) ? (isnan(a) ? b : a) : a > b ? a : b;
    case OP_MIN: return isnan(a) || isnan(b) ? (isnan(a) ? b : a) : a < b ? a : b;
    default: return 0;
    }
}

static int cmp(Op op, double a, double b)
{
    switch (op) {
    case OP_LT: return a < b;
    case OP_LE: return a <= b;
    case OP_GT: return a > b;
    case OP_GE: return a >= b;
    case OP_EQ: return a == b;
    default: return a != b;
    }
}

static int icmp(Op op, int64_t a, int64_t b, int uns)
{
    if (uns) {
        uint64_t x = (uint64_t)a, y = (uint64_t)b;
        return op == OP_LT ? x < y : op == OP_LE ? x <= y : op == OP_GT ? x > y : op == OP_GE ? x >= y
             : op == OP_EQ ? x == y : x != y;
    }
    return op == OP_LT ? a < b : op == OP_LE ? a <= b : op == OP_GT ? a > b : op == OP_GE ? a >= b
         : op == OP_EQ ? a == b : a != b;
}

static int ibin(Sim *s, NodeId e, Op op, int64_t a, int64_t b, int uns, int64_t *out)
{
    uint64_t x = (uint64_t)a, y = (uint64_t)b;
    switch (op) {
    case OP_ADD: *out = (int64_t)(x + y); return 1;
    case OP_SUB: *out = (int64_t)(x - y); return 1;
    case OP_MUL: *out = (int64_t)(x * y); return 1;
    case OP_DIV: case OP_MOD: case OP_CDIV:
        if (!b) {
            sim_fail(s, 1, E0982, e, "integer division by zero");
            return 0;
        }
        if (op == OP_CDIV)
            *out = a >= 0 && b > 0 ? (a + b - 1) / b : a / b;
        else if (uns)
            *out = (int64_t)(op == OP_DIV ? x / y : x % y);
        else
            *out = op == OP_DIV ? a / b : a % b;
        return 1;
    case OP_SHL: *out = (int64_t)(x << (y & 63)); return 1;
    case OP_SHR: *out = uns ? (int64_t)(x >> (y & 63)) : a >> (y & 63); return 1;
    case OP_BAND: *out = a & b; return 1;
    case OP_BOR: *out = a | b; return 1;
    case OP_BXOR: *out = a ^ b; return 1;
    case OP_AND: *out = a && b; return 1;
    case OP_OR: *out = a || b; return 1;
    case OP_MAX: *out = uns ? (int64_t)(x > y ? x : y) : a > b ? a : b; return 1;
    case OP_MIN: *out = uns ? (int64_t)(x < y ? x : y) : a < b ? a : b; return 1;
    case OP_POW: {
        int64_t r = 1;
        for (int64_t i = 0; i < b && i < 64; i++)
            r *= a;
        *out = r;
        return 1;
    }
    default: return 0;
    }
}

/* codegen marks f32/f64 + - * `contract` (tir.md 9.1) and LLVM fuses a product
 * that feeds an addition: `a * b + c`, `c + a * b`, `a * b - c`, `c - a * b`
 * round once. The product's node: a, else b, else 0. */
static NodeId contracted(const Sim *s, Op op, NodeId a, NodeId b, uint8_t dt)
{
    if ((op != OP_ADD && op != OP_SUB) || (dt != DT_F32 && dt != DT_F64) || s->no_contract)
        return 0;
    if (sim_node(s, a)->op == OP_MUL && sim_type(s, a)->dtype == dt)
        return a;
    if (sim_node(s, b)->op == OP_MUL && sim_type(s, b)->dtype == dt)
        return b;
    return 0;
}

static void fused(Sim *s, SimThread *t, NodeId e, Op op, NodeId a, NodeId b, NodeId mul, SV *out)
{
    SV p, q, c;
    uint8_t dt;
    int lanes;
    result_type(s, e, &dt, &lanes);
    sim_eval(s, t, sim_node(s, mul)->a, &p);
    sim_eval(s, t, sim_node(s, mul)->b, &q);
    sim_eval(s, t, mul == a ? b : a, &c);
    int n = p.n > q.n ? p.n : q.n;
    n = c.n > n ? c.n : n;
    sim_convert(&p, dt, n);
    sim_convert(&q, dt, n);
    sim_convert(&c, dt, n);
    *out = c;
    for (int j = 0; j < n; j++) {
        double pr = p.l[j].f, qr = q.l[j].f, cr = c.l[j].f;
        double r = op == OP_ADD ? fma(pr, qr, cr) : mul == a ? fma(pr, qr, -cr) : fma(-pr, qr, cr);
        out->l[j].f = interp_round((DType)dt, r);
    }
}

static void binary(Sim *s, SimThread *t, NodeId e, Op op, NodeId a, NodeId b, SV *out)
{
    SV x, y;
    NodeId mul = contracted(s, op, a, b, sim_type(s, e)->dtype);
    if (mul) {
        fused(s, t, e, op, a, b, mul, out);
        return;
    }
    sim_eval(s, t, a, &x);
    sim_eval(s, t, b, &y);
    uint8_t dt;
    int lanes;
    result_type(s, e, &dt, &lanes);
    int n = x.n > y.n ? x.n : y.n;
    int isc = ir_ops[op].flags & OF_CMP;
    uint8_t odt = isc ? x.dt : dt;          /* the operands' type */
    if (isc && sv_isf(y.dt) && !sv_isf(x.dt))
        odt = y.dt;
    sim_convert(&x, odt, n);
    sim_convert(&y, odt, n);
    out->dt = dt;
    out->n = (uint8_t)n;
    int uns = ir_dtypes[odt].kind == 'u';
    for (int j = 0; j < n; j++) {
        if (isc) {
            out->l[j].i = sv_isf(odt) ? cmp(op, x.l[j].f, y.l[j].f) : icmp(op, x.l[j].i, y.l[j].i, uns);
        } else if (sv_isf(odt)) {
            out->l[j].f = interp_round((DType)dt, fbin(op, x.l[j].f, y.l[j].f));
        } else {
            int64_t r = 0;
            if (!ibin(s, e, op, x.l[j].i, y.l[j].i, uns, &r))
                return;
            out->l[j].i = wrap_int(dt, r);
        }
    }
    if (isc)
        out->dt = DT_BOOL;
    if (!isc && out->dt != dt)
        sim_convert(out, dt, n);
}

static double math1(Op op, double x)
{
    switch (op) {
    case OP_EXP: return exp(x);
    case OP_EXP2: return exp2(x);
    case OP_EXP2_FMA: return ir_exp2_fma((float)x);
    case OP_LOG: return log(x);
    case OP_LOG2: return log2(x);
    case OP_SQRT: return sqrt(x);
    case OP_RSQRT: return 1.0 / sqrt(x);
    case OP_RCP: return 1.0 / x;
    case OP_TANH: return tanh(x);
    case OP_SIN: return sin(x);
    case OP_COS: return cos(x);
    default: return fabs(x);
    }
}

static void builtin(Sim *s, SimThread *t, NodeId e, SV *out)
{
    const Node *n = sim_node(s, e);
    Op op = (Op)n->op;
    uint8_t dt;
    int lanes;
    result_type(s, e, &dt, &lanes);
    if (op == OP_MAX || op == OP_MIN || op == OP_CDIV) {
        binary(s, t, e, op, sim_arg(s, e, 0), sim_arg(s, e, 1), out);
        return;
    }
    SV a, b, c;
    sim_eval(s, t, sim_arg(s, e, 0), &a);
    switch (op) {
    case OP_SELECT:
        sim_eval(s, t, sim_arg(s, e, 1), &b);
        sim_eval(s, t, sim_arg(s, e, 2), &c);
        sim_convert(&b, dt, lanes);
        sim_convert(&c, dt, lanes);
        *out = b;
        for (int j = 0; j < lanes; j++)
            if (!(a.n > 1 ? a.l[j].i : a.l[0].i))
                out->l[j] = c.l[j];
        return;
    case OP_FMA:
        sim_eval(s, t, sim_arg(s, e, 1), &b);
        sim_eval(s, t, sim_arg(s, e, 2), &c);
        sim_convert(&a, dt, lanes);
        sim_convert(&b, dt, lanes);
        sim_convert(&c, dt, lanes);
        *out = a;
        for (int j = 0; j < lanes; j++)
            out->l[j].f = interp_round((DType)dt, fma(a.l[j].f, b.l[j].f, c.l[j].f));
        return;
    case OP_DOT:
        sim_eval(s, t, sim_arg(s, e, 1), &b);
        sim_convert(&a, DT_F32, a.n);
        sim_convert(&b, DT_F32, a.n);
        out->dt = dt;
        out->n = 1;
        out->l[0].f = 0;
        for (int j = 0; j < a.n; j++)
            out->l[0].f = interp_round(DT_F32, fma(a.l[j].f, b.l[j].f, out->l[0].f));
        sim_convert(out, dt, 1);
        return;
    case OP_HSUM: case OP_HMAX: case OP_HMIN: {
        SV r = a;
        r.n = 1;
        for (int j = 1; j < a.n; j++) {
            if (sv_isf(a.dt))
                r.l[0].f = interp_round((DType)a.dt, fbin(op == OP_HSUM ? OP_ADD : op == OP_HMAX ? OP_MAX : OP_MIN,
                                                          r.l[0].f, a.l[j].f));
            else
                ibin(s, e, op == OP_HSUM ? OP_ADD : op == OP_HMAX ? OP_MAX : OP_MIN, r.l[0].i, a.l[j].i,
                     ir_dtypes[a.dt].kind == 'u', &r.l[0].i);
        }
        sim_convert(&r, dt, 1);
        *out = r;
        return;
    }
    default: break;
    }
    if (ir_ops[op].flags & OF_MATH) {
        sim_convert(&a, dt, lanes);
        *out = a;
        for (int j = 0; j < lanes; j++) {
            if (sv_isf(dt))
                out->l[j].f = interp_round((DType)dt, math1(op, a.l[j].f));
            else if (op == OP_ABS)
                out->l[j].i = a.l[j].i < 0 ? -a.l[j].i : a.l[j].i;
        }
        return;
    }
    sim_fail(s, 2, E0983, e, "the executor does not evaluate `%s` yet", ir_ops[op].spelling);
}

static void special(Sim *s, SimThread *t, NodeId e, SV *out)
{
    uint16_t sr = sim_node(s, e)->sub;
    int64_t v = 0;
    switch (sr) {
    case SR_THREAD_X: v = t->tid; break;
    case SR_LANE: v = t->tid % s->warp; break;
    case SR_WARP: v = t->tid / s->warp; break;
    case SR_WG: v = t->tid / tg_unit_threads(s->opt->tg, UNIT_WARPGROUPS); break;
    case SR_NTHREADS: v = s->nthreads; break;
    case SR_BLOCK_X: case SR_BLOCK_Y: case SR_BLOCK_Z: v = s->block[sr - SR_BLOCK_X]; break;
    case SR_GRID_X: case SR_GRID_Y: case SR_GRID_Z: v = s->grid[sr - SR_GRID_X]; break;
    case SR_SM_COUNT: v = s->sm_count; break;
    default: v = 0; break;
    }
    out->n = 1;
    result_type(s, e, &out->dt, &(int){0});
    if (sv_isf(out->dt))
        out->dt = DT_I32;
    out->l[0].i = v;
}

static void name_value(Sim *s, SimThread *t, NodeId e, SV *out)
{
    NodeId d = sim_node(s, e)->decl;
    const Node *dn = sim_node(s, d);
    uint8_t dt;
    int lanes;
    result_type(s, e, &dt, &lanes);
    out->dt = dt;
    out->n = (uint8_t)lanes;
    if (dn->op == OP_DIM) {
        for (uint32_t i = 0; i < s->k->ndims && i < s->L->ndims; i++)
            if (s->k->dims[i] == d)
                out->l[0].i = s->L->dims[i];
        sim_convert(out, dt, lanes);
        return;
    }
    if (dn->op == OP_ARG) {
        int a = arg_index(s, d);
        const CheckBuffer *b = a >= 0 ? &s->L->bufs[a] : NULL;
        if (!b || b->is_tensor) {
            sim_fail(s, 2, E0983, e, "a tensor used as a value");
            return;
        }
        double v = interp_decode(b->dtype, b->host);
        out->dt = b->dtype;
        out->n = 1;
        if (sv_isf(b->dtype))
            out->l[0].f = v;
        else
            out->l[0].i = (int64_t)v;
        sim_convert(out, dt, lanes);
        return;
    }
    if (dn->op == OP_PARAM) {
        int64_t v;
        if (!ce_const_int(s->ctx, s->k, dn->a, &v))
            v = 0;
        out->l[0].i = v;
        out->dt = DT_I64;
        out->n = 1;
        sim_convert(out, dt, lanes);
        return;
    }
    int ln;
    uint8_t ldt;
    uint32_t slot = sim_lvalue(s, t, e, &ln, &ldt);
    for (int j = 0; j < lanes && !s->failed; j++)
        sim_slot_read(s, t, slot + (uint32_t)j, &out->l[j]);
}

static void index_value(Sim *s, SimThread *t, NodeId e, SV *out)
{
    NodeId d = sim_node(s, sim_node(s, e)->a)->decl;
    uint16_t dop = sim_node(s, d)->op;
    if (dop == OP_REG || dop == OP_VAR || dop == OP_LET) {
        int lanes;
        uint8_t dt;
        uint32_t slot = sim_lvalue(s, t, e, &lanes, &dt);
        out->dt = dt;
        out->n = (uint8_t)lanes;
        for (int j = 0; j < lanes && !s->failed; j++)
            sim_slot_read(s, t, slot + (uint32_t)j, &out->l[j]);
        return;
    }
    SimRef r;
    if (sim_ref(s, t, e, &r))
        sim_mem_load(s, t, &r, out, e);
}

static void load_value(Sim *s, SimThread *t, NodeId e, SV *out)
{
    const Node *n = sim_node(s, e);
    uint8_t dt;
    int lanes;
    result_type(s, e, &dt, &lanes);
    if (n->b && !sim_int(s, t, n->b)) {
        out->dt = dt;
        out->n = (uint8_t)lanes;
        for (int j = 0; j < lanes; j++) { /* a masked-off load yields 0 */
            if (sv_isf(dt))
                out->l[j].f = 0.0;
            else
                out->l[j].i = 0;
        }
        return;
    }
    SimRef r;
    if (!sim_ref(s, t, n->a, &r))
        return;
    sim_mem_load(s, t, &r, out, e);
    if (n->sub == OP_ATOMIC_ADD || n->sub == OP_ATOMIC_EXCH) { /* one thread runs at a time: atomic */
        SV v, nv = *out;
        sim_eval(s, t, n->c, &v);
        sim_convert(&v, r.dt, r.lanes);
        for (int j = 0; j < r.lanes && n->sub == OP_ATOMIC_ADD; j++) {
            if (sv_isf(r.dt))
                nv.l[j].f = interp_round((DType)r.dt, nv.l[j].f + v.l[j].f);
            else
                nv.l[j].i = wrap_int(r.dt, nv.l[j].i + v.l[j].i);
        }
        sim_mem_store(s, t, &r, n->sub == OP_ATOMIC_ADD ? &nv : &v, e);
    }
    sim_convert(out, dt, lanes);
}

/* `atomic.add ref <- v` (a STORE with sub OP_ATOMIC_ADD): adds v to the element */
void sim_atomic_add(Sim *s, SimThread *t, const SimRef *r, const SV *v, NodeId at)
{
    SV old, x = *v;
    sim_mem_load(s, t, r, &old, at);
    sim_convert(&x, r->dt, r->lanes);
    for (int j = 0; j < r->lanes; j++) {
        if (sv_isf(r->dt))
            old.l[j].f = interp_round((DType)r->dt, old.l[j].f + x.l[j].f);
        else
            old.l[j].i = wrap_int(r->dt, old.l[j].i + x.l[j].i);
    }
    sim_mem_store(s, t, r, &old, at);
}

static void lowered_value(Sim *s, SimThread *t, NodeId e, SV *out)
{
    const Node *n = sim_node(s, e);
    out->n = 1;
    switch ((Op)n->op) {
    case OP_L_SADDR:
        out->dt = DT_U32;
        out->l[0].i = sim_saddr(s, t, sim_arg(s, e, 0), n->sub);
        return;
    case OP_L_WGDESC: { /* codegen's descriptor bits (PTX "Matrix Descriptor Format") */
        SV a;
        sim_eval(s, t, sim_arg(s, e, 0), &a);
        uint64_t lbo = (uint64_t)n->v.i & 0xfffff, sbo = (uint64_t)n->v.i >> 20 & 0xfffff;
        uint64_t mode = (uint64_t)n->v.i >> 40 & 3;
        uint64_t start = ((uint64_t)a.l[0].i & 0x3ffff) >> 4;
        out->dt = DT_U64;
        out->l[0].i = (int64_t)(start | ((lbo >> 4) & 0x3fff) << 16 | ((sbo >> 4) & 0x3fff) << 32 | mode << 62);
        return;
    }
    case OP_L_PACK: {
        uint8_t dt;
        int lanes;
        result_type(s, e, &dt, &lanes);
        out->dt = dt;
        out->n = (uint8_t)(n->n < SIM_LANES ? n->n : SIM_LANES);
        for (uint32_t i = 0; i < out->n; i++) {
            SV v;
            sim_eval(s, t, sim_arg(s, e, i), &v);
            sim_convert(&v, dt, 1);
            out->l[i] = v.l[0];
        }
        return;
    }
    case OP_L_LANE: { /* one lane of a vector, a scalar */
        SV v;
        sim_eval(s, t, sim_arg(s, e, 0), &v);
        int64_t j = n->v.i;
        *out = v;
        out->n = 1;
        out->l[0] = j >= 0 && j < v.n ? v.l[j] : v.l[0];
        return;
    }
    default:
        sim_fail(s, 2, E0983, e, "the executor does not evaluate `@%s`", ir_ops[n->op].spelling);
    }
}

void sim_eval(Sim *s, SimThread *t, NodeId e, SV *out)
{
    memset(out, 0, offsetof(SV, l) + sizeof(SL));
    out->n = 1;
    if (s->failed || !e)
        return;
    const Node *n = sim_node(s, e);
    Op op = (Op)n->op;
    switch (op) {
    case OP_INT: case OP_BOOL:
        result_type(s, e, &out->dt, &(int){0});
        if (!out->dt || sv_isf(out->dt))
            out->dt = op == OP_BOOL ? DT_BOOL : DT_I64;
        out->l[0].i = n->v.i;
        return;
    case OP_FLOAT:
        result_type(s, e, &out->dt, &(int){0});
        if (!sv_isf(out->dt))
            out->dt = DT_F64;
        out->l[0].f = interp_round((DType)out->dt, n->v.f);
        return;
    case OP_NAME: name_value(s, t, e, out); return;
    case OP_SPECIAL: special(s, t, e, out); return;
    case OP_INDEX: index_value(s, t, e, out); return;
    case OP_LOAD: load_value(s, t, e, out); return;
    case OP_CAST: {
        sim_eval(s, t, n->a, out);
        sim_convert(out, n->dtype, n->lanes > 1 ? n->lanes : 1);
        return;
    }
    case OP_NEG: case OP_NOT: {
        uint8_t dt;
        int lanes;
        result_type(s, e, &dt, &lanes);
        sim_eval(s, t, n->a, out);
        for (int j = 0; j < out->n; j++) {
            if (op == OP_NOT)
                out->l[j].i = sv_isf(out->dt) ? out->l[j].f == 0 : out->l[j].i == 0;
            else if (sv_isf(out->dt))
                out->l[j].f = -out->l[j].f;
            else
                out->l[j].i = wrap_int(out->dt, -out->l[j].i);
        }
        if (op == OP_NOT)
            out->dt = DT_BOOL;
        return;
    }
    default: break;
    }
    switch (ir_ops[op].cls) {
    case OC_BIN: binary(s, t, e, op, n->a, n->b, out); return;
    case OC_BUILTIN:
        if (ir_ops[op].flags & (OF_WARP | OF_BLOCK) && op != OP_LDMATRIX && op != OP_LDMATRIX_T) {
            collective_expr(s, t, e, out);
            return;
        }
        builtin(s, t, e, out);
        return;
    case OC_LOW: lowered_value(s, t, e, out); return;
    default: break;
    }
    sim_fail(s, 2, E0983, e, "the executor does not evaluate this expression (`%s`)", ir_ops[op].name);
}

int64_t sim_int(Sim *s, SimThread *t, NodeId e)
{
    SV v;
    sim_eval(s, t, e, &v);
    return sv_isf(v.dt) ? (int64_t)v.l[0].f : v.l[0].i;
}
