/* sim_tc.c — tensor cores, fragment moves and bulk copies of TIR-L (sim.h).
 * Every per-thread fragment element is placed by the maps of ir/layout.h
 * (ly_coord: which thread and register hold which element), so a wrong
 * operand order in the lowering shows as a wrong result; shared operands of
 * wgmma are read through the descriptor's bits (start, LBO, SBO, swizzle
 * mode) as the hardware reads them. The families are rows of one table:
 * the group that executes an op and the layouts of its D, A and B. */
#include <stdlib.h>
#include <string.h>
#include "sim_priv.h"
#include "tcfamily.h"

/* ---- the tensor-core families -------------------------------------------------- */

/* What the executor reads of a family's row (ir/tcfamily.h): the threads that
 * issue one instruction together, the fragment layouts of D, A and B, and the
 * async protocol. A synchronous register family (mma.sync, MFMA) runs through
 * sim_mma; wgmma (fence/commit/wait, shared descriptors) through sim_wgmma_*. */
typedef struct {
    const TcFamilyInfo *row;
    int group;          /* threads that execute one instruction together */
    Layout d, a, b;
} SimTcFamily;

static SimTcFamily family(const Sim *s, Op op)
{
    const TcFamilyInfo *r = tc_family(tc_family_of(op));
    int group = r->scope == TCS_WARPGROUP ? (int)tg_unit_threads(s->opt->tg, UNIT_WARPGROUPS) : s->warp;
    SimTcFamily f = {r, group, (Layout)r->c, (Layout)r->a, (Layout)r->b};
    return f;
}

static void *grow(void *p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    uint32_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    *cap = c;
    return realloc(p, (size_t)c * elem);
}

static void deposit_sizes(SimThread *t, uint32_t nv, uint32_t ns)
{
    uint32_t cv = t->ndepv, cs = t->ndeps;
    t->depv = grow(t->depv, &cv, nv, sizeof *t->depv);
    t->deps = grow(t->deps, &cs, ns, sizeof *t->deps);
    t->ndepv = cv;
    t->ndeps = cs;
}

static double rd(Sim *s, uint8_t dt, uint32_t addr)
{
    return interp_decode((DType)dt, s->smem + addr);
}

/* the group's threads must all be there, none finished */
static int whole_group(Sim *s, SimThread *t, int first, int n, NodeId st)
{
    int live = sim_live_in(s, first, n);
    if (live != n) {
        sim_fail(s, 1, E0984, st, "thread %d runs a %d-thread collective op with only %d threads of its "
                 "group still running", t->tid, n, live);
        return 0;
    }
    return 1;
}

/* ---- wgmma ---------------------------------------------------------------------------- */

/* the shared byte of operand element (mn, k) through descriptor d (PTX "Matrix
 * Descriptor Format", "Canonical Layouts"; layout.h summarizes them) */
static int desc_addr(uint64_t d, int mn, int k, int e, int tnsp, uint32_t *out)
{
    uint32_t start = (uint32_t)(d & 0x3fff) << 4, lbo = (uint32_t)(d >> 16 & 0x3fff) << 4;
    uint32_t sbo = (uint32_t)(d >> 32 & 0x3fff) << 4, mode = (uint32_t)(d >> 62);
    int S = mode == 1 ? 128 : mode == 2 ? 64 : mode == 3 ? 32 : 0;
    if (!S)
        return 0;
    uint32_t a;
    if (!tnsp) {
        a = start + (uint32_t)(mn / 8) * sbo + (uint32_t)(mn % 8 * S) + (uint32_t)(k * e);
    } else {
        int per = S / e;
        a = start + (uint32_t)(mn / per) * lbo + (uint32_t)(k / 8) * sbo + (uint32_t)(k % 8 * S) +
            (uint32_t)(mn % per * e);
    }
    *out = ly_swizzle(a, S);
    return 1;
}

/* visits every shared byte a wgmma reads: mark/unmark in flight, check */
static int wg_bytes(Sim *s, const SimWg *x, IrTc tc, int delta, SimThread *t)
{
    uint8_t bdt = tc.b_dt ? tc.b_dt : tc.ab;
    int ea = interp_elem_bytes((DType)tc.ab), eb = interp_elem_bytes((DType)bdt);
    for (int op = tc.a_regs ? 1 : 0; op < 2; op++) {
        int mn = op ? tc.n : tc.m, e = op ? eb : ea;
        uint64_t d = op ? x->db : x->da;
        for (int i = 0; i < mn; i++)
            for (int k = 0; k < tc.k; k++) {
                uint32_t a;
                if (!desc_addr(d, i, k, e, op ? tc.tnsp_b : tc.tnsp_a, &a) || a + (uint32_t)e > s->smem_bytes) {
                    sim_fail(s, 1, E0982, x->node, "a wgmma descriptor points outside the shared buffer "
                             "(or has no swizzle mode)");
                    return 0;
                }
                for (int b = 0; b < e; b++) {
                    if (delta > 0 && s->async_w[a + (uint32_t)b]) {
                        sim_fail(s, 1, E0981, x->node, "a wgmma reads %s while a TMA load still "
                                 "writes it (no mbarrier wait orders them)", sim_smem_name(s, a + (uint32_t)b));
                        return 0;
                    }
                    s->async_r[a + (uint32_t)b] = (uint8_t)(s->async_r[a + (uint32_t)b] + delta);
                }
                if (delta > 0 && t)
                    sim_race_access(s, t, a, (uint32_t)e, 0, x->node);
            }
    }
    return !s->failed;
}

void sim_wgmma_issue(Sim *s, SimThread *t, NodeId st)
{
    const Node *n = sim_node(s, st);
    SimTcFamily fam = family(s, OP_L_WGMMA), *f = &fam;
    IrTc tc = ir_tc_unpack(n->v.i);
    int nd = tc.m * tc.n / f->group, na = tc.a_regs ? tc.m * tc.k / f->group : 0;
    int first = tc.a_regs ? 1 : 2;
    if ((uint32_t)(first + nd + na) != n->n) {
        sim_fail(s, 2, E0983, st, "a wgmma with %u operands (the executor expects %d)", n->n, first + nd + na);
        return;
    }
    deposit_sizes(t, 0, (uint32_t)(nd + na));
    t->dep[0].l[0].i = tc.a_regs ? 0 : sim_int(s, t, sim_arg(s, st, 0));
    t->dep[0].l[1].i = sim_int(s, t, sim_arg(s, st, first - 1));
    for (int i = 0; i < nd + na && !s->failed; i++) {
        int lanes;
        uint8_t dt;
        t->deps[i] = sim_lvalue(s, t, sim_arg(s, st, (uint32_t)(first + i)), &lanes, &dt);
    }
    int wg = t->tid / f->group;
    if (s->failed || !whole_group(s, t, wg * f->group, f->group, st))
        return;
    SimColl *c = &s->wgs[wg];
    if (!sim_coll(s, t, c, st, f->group))
        return;
    SimWg x = {st, wg, t->wg_commits, (uint64_t)t->dep[0].l[0].i, (uint64_t)t->dep[0].l[1].i, NULL, NULL, nd, na};
    x.dslot = malloc((size_t)f->group * (size_t)(nd + 1) * sizeof *x.dslot);
    x.aslot = malloc((size_t)f->group * (size_t)(na + 1) * sizeof *x.aslot);
    for (int thr = 0; thr < f->group; thr++) {
        SimThread *u = &s->th[wg * f->group + thr];
        if (u->dep[0].l[0].i != t->dep[0].l[0].i || u->dep[0].l[1].i != t->dep[0].l[1].i)
            sim_fail(s, 1, E0984, st, "the threads of warpgroup %d give a wgmma different descriptors "
                     "(thread %d and %d)", wg, t->tid, u->tid);
        for (int i = 0; i < nd; i++) {
            x.dslot[thr * nd + i] = u->deps[i];
            u->inflight[u->deps[i]] = 1;
        }
        for (int i = 0; i < na; i++) {
            x.aslot[thr * na + i] = u->deps[nd + i];
            if (!u->inflight[u->deps[nd + i]])
                u->inflight[u->deps[nd + i]] = 2;
        }
    }
    if (!s->failed && wg_bytes(s, &x, tc, 1, t)) {
        s->wgmma = grow(s->wgmma, &s->capwgmma, s->nwgmma + 1, sizeof *s->wgmma);
        s->wgmma[s->nwgmma++] = x;
    } else {
        free(x.dslot);
        free(x.aslot);
    }
    sim_coll_done(s, t, c);
}

/* performs wgmma x: D[64, N] += A[64, K] * B[N, K]^T, in f32 (D = A B^T when fresh) */
static void wgmma_perform(Sim *s, SimWg *x)
{
    const Node *n = sim_node(s, x->node);
    IrTc tc = ir_tc_unpack(n->v.i);
    SimTcFamily fam = family(s, OP_L_WGMMA), *f = &fam;
    uint8_t bdt = tc.b_dt ? tc.b_dt : tc.ab;
    int ea = interp_elem_bytes((DType)tc.ab), eb = interp_elem_bytes((DType)bdt);
    double *A = calloc((size_t)tc.m * tc.k, sizeof *A), *B = calloc((size_t)tc.n * tc.k, sizeof *B);
    wg_bytes(s, x, tc, -1, NULL);
    if (tc.a_regs) {
        LyTile at = {f->a, (DType)tc.ab, tc.m, tc.k, 0, 0, s->warp, 0};
        for (int thr = 0; thr < f->group; thr++)
            for (int e = 0; e < x->na; e++) {
                int r, c;
                ly_coord(&at, thr, e, &r, &c);
                SimThread *u = &s->th[x->wg * f->group + thr];
                if (r >= 0 && r < tc.m && c >= 0 && c < tc.k)
                    A[r * tc.k + c] = u->frame[x->aslot[thr * x->na + e]].f;
            }
    } else {
        for (int i = 0; i < tc.m; i++)
            for (int k = 0; k < tc.k; k++) {
                uint32_t a = 0;
                desc_addr(x->da, i, k, ea, tc.tnsp_a, &a);
                A[i * tc.k + k] = rd(s, tc.ab, a);
            }
    }
    for (int j = 0; j < tc.n; j++)
        for (int k = 0; k < tc.k; k++) {
            uint32_t a = 0;
            desc_addr(x->db, j, k, eb, tc.tnsp_b, &a);
            B[j * tc.k + k] = rd(s, bdt, a);
        }
    LyTile dt = {f->d, (DType)tc.acc, tc.m, tc.n, 0, 0, s->warp, 0};
    for (int thr = 0; thr < f->group; thr++) {
        SimThread *u = &s->th[x->wg * f->group + thr];
        for (int e = 0; e < x->nd; e++) {
            int r, c;
            ly_coord(&dt, thr, e, &r, &c);
            double acc = 0;
            for (int k = 0; k < tc.k; k++)
                acc += A[r * tc.k + k] * B[c * tc.k + k];
            SL *d = &u->frame[x->dslot[thr * x->nd + e]];
            d->f = interp_round((DType)tc.acc, (tc.fresh ? 0 : d->f) + acc);
        }
        for (int e = 0; e < x->nd; e++)
            u->inflight[x->dslot[thr * x->nd + e]] = 0;
        for (int e = 0; e < x->na; e++)
            u->inflight[x->aslot[thr * x->na + e]] = 0;
    }
    free(A);
    free(B);
    free(x->dslot);
    free(x->aslot);
}

/* retires (performs) warpgroup wg's wgmmas of groups below `below`, oldest first */
static void wgmma_retire(Sim *s, int wg, int64_t below)
{
    uint32_t w = 0;
    for (uint32_t i = 0; i < s->nwgmma; i++) {
        SimWg *x = &s->wgmma[i];
        if ((wg < 0 || x->wg == wg) && x->group < below)
            wgmma_perform(s, x);
        else
            s->wgmma[w++] = *x;
    }
    s->nwgmma = w;
}

void sim_wgmma_wait(Sim *s, SimThread *t, int64_t n, NodeId at)
{
    (void)at;
    wgmma_retire(s, t->tid / family(s, OP_L_WGMMA).group, t->wg_commits - n);
}

void sim_wgmma_retire_all(Sim *s)
{
    wgmma_retire(s, -1, INT64_MAX);
}

/* ---- mma.sync and MFMA: synchronous register families ----------------------------------------------------------------------- */

/* One @mma (a warp) or @mfma (a wavefront): the group, operand counts and fragment maps
 * come from the family's row (ir/tcfamily.h tc_fragment, tg_tc_scope_threads). */
void sim_mma(Sim *s, SimThread *t, NodeId st)
{
    const Node *n = sim_node(s, st);
    SimTcFamily fam = family(s, (Op)n->op), *f = &fam;
    IrTc tc = ir_tc_unpack(n->v.i);
    uint8_t bdt = tc.b_dt ? tc.b_dt : tc.ab;
    int nd = tc.m * tc.n / f->group, na = tc.m * tc.k / f->group, nb = tc.k * tc.n / f->group;
    if (tc.m > 32 || tc.n > 32 || tc.k > 32) {
        sim_fail(s, 2, E0983, st, "an instruction of shape %ux%ux%u", tc.m, tc.n, tc.k);
        return;
    }
    if ((uint32_t)(nd + na + nb) != n->n) {
        sim_fail(s, 2, E0983, st, "an mma with %u operands (the executor expects %d)", n->n, nd + na + nb);
        return;
    }
    deposit_sizes(t, (uint32_t)(na + nb), (uint32_t)nd);
    for (int i = 0; i < nd && !s->failed; i++) {
        int lanes;
        uint8_t dt;
        t->deps[i] = sim_lvalue(s, t, sim_arg(s, st, (uint32_t)i), &lanes, &dt);
    }
    for (int i = 0; i < na + nb && !s->failed; i++) {
        SV v;
        sim_eval(s, t, sim_arg(s, st, (uint32_t)(nd + i)), &v);
        sim_convert(&v, i < na ? tc.ab : bdt, 1);
        t->depv[i] = v.l[0];
    }
    int first = t->tid / f->group * f->group;
    if (s->failed || !whole_group(s, t, first, f->group, st))
        return;
    SimColl *c = &s->warps[t->tid / f->group];
    if (!sim_coll(s, t, c, st, f->group))
        return;
    LyTile at = {f->a, (DType)tc.ab, tc.m, tc.k, 0, 0, s->warp, 0}, bt = {f->b, (DType)bdt, tc.k, tc.n, 0, 0, s->warp, 0};
    LyTile dtl = {f->d, (DType)tc.acc, tc.m, tc.n, 0, 0, s->warp, 0};
    double *A = calloc((size_t)tc.m * tc.k, sizeof *A), *B = calloc((size_t)tc.k * tc.n, sizeof *B);
    for (int l = 0; l < f->group; l++) {
        SimThread *u = &s->th[first + l];
        for (int e = 0; e < na; e++) {
            int r, cc;
            ly_coord(&at, l, e, &r, &cc);
            if (r >= 0 && r < tc.m && cc >= 0 && cc < tc.k)
                A[r * tc.k + cc] = u->depv[e].f;
        }
        for (int e = 0; e < nb; e++) {
            int r, cc;
            ly_coord(&bt, l, e, &r, &cc);
            if (r >= 0 && r < tc.k && cc >= 0 && cc < tc.n)
                B[r * tc.n + cc] = u->depv[na + e].f;
        }
    }
    for (int l = 0; l < f->group; l++) {
        SimThread *u = &s->th[first + l];
        for (int e = 0; e < nd; e++) {
            int r, cc;
            ly_coord(&dtl, l, e, &r, &cc);
            double acc = 0;
            for (int k = 0; k < tc.k; k++)
                acc += A[r * tc.k + k] * B[k * tc.n + cc];
            SL *d = &u->frame[u->deps[e]];
            d->f = interp_round((DType)tc.acc, d->f + acc);
        }
    }
    free(A);
    free(B);
    sim_coll_done(s, t, c);
}

/* ---- ldmatrix / stmatrix (PTX 9.7.14.5.15/16; layout.h) ---------------------------- */

void sim_ldmatrix(Sim *s, SimThread *t, NodeId st, int store)
{
    const Node *n = sim_node(s, st);
    int nmat = n->sub, trans = (int)n->v.i, nv = 2 * nmat;
    if ((nmat != 1 && nmat != 2 && nmat != 4) || n->n != (uint32_t)(1 + nv)) {
        sim_fail(s, 2, E0983, st, "an ldmatrix/stmatrix of %d matrices and %u operands", nmat, n->n);
        return;
    }
    deposit_sizes(t, (uint32_t)nv, (uint32_t)nv);
    t->dep[0].l[0].i = sim_int(s, t, sim_arg(s, st, 0));
    uint8_t dt = DT_BF16;
    for (int i = 0; i < nv && !s->failed; i++) {
        NodeId e = sim_arg(s, st, (uint32_t)(1 + i));
        if (store) {
            SV v;
            sim_eval(s, t, e, &v);
            dt = v.dt;
            t->depv[i] = v.l[0];
        } else {
            int lanes;
            t->deps[i] = sim_lvalue(s, t, e, &lanes, &dt);
        }
    }
    t->dep[0].dt = dt;
    int first = t->tid / 32 * 32;
    if (s->failed || !whole_group(s, t, first, 32, st))
        return;
    SimColl *c = &s->warps[t->tid / 32];
    if (!sim_coll(s, t, c, st, 32))
        return;
    for (int l = 0; l < 32 && !s->failed; l++) {
        SimThread *u = &s->th[first + l];
        for (int m = 0; m < nmat; m++)
            for (int h = 0; h < 2; h++) {
                int row = trans ? 2 * (l % 4) + h : l / 4, col = trans ? l / 4 : 2 * (l % 4) + h;
                uint32_t a = (uint32_t)s->th[first + 8 * m + row].dep[0].l[0].i + (uint32_t)col * 2;
                if (a + 2 > s->smem_bytes) {
                    sim_fail(s, 1, E0982, st, "lane %d's %s address %u is outside the shared buffer", l,
                             store ? "stmatrix" : "ldmatrix", a);
                    return;
                }
                if (s->async_w[a] || (store && s->async_r[a])) {
                    sim_fail(s, 1, E0981, st, "lane %d's %s of %s races with an asynchronous "
                             "copy or wgmma still in flight", l, store ? "stmatrix" : "ldmatrix", sim_smem_name(s, a));
                    return;
                }
                sim_race_access(s, u, a, 2, store, st);
                uint8_t edt = u->dep[0].dt;
                if (store) {
                    SL v = u->depv[2 * m + h];
                    interp_encode((DType)edt, sv_isf(edt) ? v.f : (double)v.i, s->smem + a);
                } else {
                    SL v;
                    v.f = rd(s, edt, a);
                    if (!sv_isf(edt))
                        v.i = (int64_t)v.f;
                    sim_slot_write(s, u, u->deps[2 * m + h], v, st);
                }
            }
    }
    sim_coll_done(s, t, c);
}

/* ---- TMA ------------------------------------------------------------------------------- */

typedef struct {
    const CheckBuffer *b;
    int rank, e, S;
    int64_t box[5], dims[5], stride[5];   /* innermost first; strides in elements */
} TmaGeom;

static int tma_geom(Sim *s, NodeId map, TmaGeom *g, NodeId at)
{
    const Node *m = sim_node(s, sim_node(s, map)->decl ? sim_node(s, map)->decl : map);
    if (m->op != OP_L_TMAP) {
        sim_fail(s, 2, E0983, at, "a TMA whose map is not a @tensormap declaration");
        return 0;
    }
    NodeId arg = sim_node(s, m->a)->decl;
    int a = -1;
    for (uint32_t i = 0; i < s->k->nargs; i++)
        if (s->k->args[i] == arg)
            a = (int)i;
    if (a < 0)
        return 0;
    g->b = &s->L->bufs[a];
    g->rank = g->b->rank;
    g->e = interp_elem_bytes(g->b->dtype);
    g->S = m->v.attr.swizzle;
    for (int i = 0; i < 5; i++)
        g->box[i] = 1, g->dims[i] = 1, g->stride[i] = 0;
    for (int i = 0; i < g->rank; i++) {
        g->dims[i] = g->b->shape[g->rank - 1 - i];
        g->stride[i] = g->b->stride[g->rank - 1 - i];
    }
    for (uint32_t i = 0; i < m->n && i < 5; i++)
        g->box[i] = sim_node(s, s->k->lists[m->list + i])->v.i;
    return 1;
}

static int64_t box_elems(const TmaGeom *g)
{
    int64_t n = 1;
    for (int i = 0; i < 5; i++)
        n *= g->box[i];
    return n;
}

/* element li of the box (innermost first): its global offset (-1: out of bounds) and
 * its shared byte from the raw (unswizzled) destination */
static int64_t box_elem(const TmaGeom *g, const int64_t *c, int64_t li, uint32_t smem, uint32_t *sb)
{
    int64_t off = 0, rest = li;
    int oob = 0;
    for (int i = 0; i < 5; i++) {
        int64_t bi = rest % g->box[i];
        rest /= g->box[i];
        int64_t x = c[i] + bi;
        if (x < 0 || x >= g->dims[i])
            oob = 1;
        off += x * g->stride[i];
    }
    uint32_t a = smem + (uint32_t)(li * g->e);
    *sb = g->S ? ly_swizzle(a, g->S) : a;
    return oob ? -1 : off;
}

void sim_tma_load(Sim *s, SimThread *t, NodeId st)
{
    const Node *n = sim_node(s, st);
    SimTma x = {sim_arg(s, st, 0), (uint32_t)sim_int(s, t, sim_arg(s, st, 1)),
                (uint32_t)sim_int(s, t, sim_arg(s, st, 2)), {0}, t->tid, t->vc[t->tid]};
    for (uint32_t i = 3; i < n->n && i < 8; i++)
        x.c[i - 3] = sim_int(s, t, sim_arg(s, st, i));
    TmaGeom g;
    if (s->failed || !tma_geom(s, x.map, &g, st) || !sim_mbar(s, x.bar, st, 0))
        return;
    int64_t ne = box_elems(&g);
    for (int64_t li = 0; li < ne; li++) {
        uint32_t sb;
        box_elem(&g, x.c, li, x.smem, &sb);
        if (sb + (uint32_t)g.e > s->smem_bytes) {
            sim_fail(s, 1, E0982, st, "a TMA load writes past the shared buffer (byte %u)", sb);
            return;
        }
        for (int b = 0; b < g.e; b++) {
            if (s->async_r[sb + (uint32_t)b]) {
                sim_fail(s, 1, E0981, st, "a TMA load overwrites %s that a wgmma or TMA store "
                         "in flight still reads (a stage released before its reader's wait)", sim_smem_name(s, sb + (uint32_t)b));
                return;
            }
            s->async_w[sb + (uint32_t)b]++;
        }
        sim_race_access(s, t, sb, (uint32_t)g.e, 1, st);
    }
    s->tmas = grow(s->tmas, &s->captmas, s->ntmas + 1, sizeof *s->tmas);
    s->tmas[s->ntmas++] = x;
}

void sim_tma_complete(Sim *s, SimTma *x)
{
    TmaGeom g;
    if (!tma_geom(s, x->map, &g, 0))
        return;
    int64_t ne = box_elems(&g);
    const uint8_t *src = g.b->host;
    for (int64_t li = 0; li < ne; li++) {
        uint32_t sb;
        int64_t off = box_elem(&g, x->c, li, x->smem, &sb);
        if (off < 0)
            memset(s->smem + sb, 0, (size_t)g.e);
        else
            memcpy(s->smem + sb, src + off * g.e, (size_t)g.e);
        for (int b = 0; b < g.e; b++)
            s->async_w[sb + (uint32_t)b]--;
        if (s->race_on)
            for (int b = 0; b < g.e; b++) {
                s->sh_wt[sb + (uint32_t)b] = (uint32_t)x->issuer + 1;
                s->sh_wc[sb + (uint32_t)b] = x->clk;
            }
    }
    SimMbar *m = sim_mbar(s, x->bar, 0, 0);
    if (!m)
        return;
    if (s->race_on && m->vc[x->issuer] < x->clk)
        m->vc[x->issuer] = x->clk;
    sim_mbar_tx_done(s, m, ne * g.e, NULL);
}

void sim_tma_store(Sim *s, SimThread *t, NodeId st)
{
    const Node *n = sim_node(s, st);
    SimBulk x = {sim_arg(s, st, 0), (uint32_t)sim_int(s, t, sim_arg(s, st, 1)), {0}, t->bulk_commits, t->tid, n->sub == 1};
    for (uint32_t i = 2; i < n->n && i < 7; i++)
        x.c[i - 2] = sim_int(s, t, sim_arg(s, st, i));
    TmaGeom g;
    if (s->failed || !tma_geom(s, x.map, &g, st))
        return;
    int64_t ne = box_elems(&g);
    for (int64_t li = 0; li < ne; li++) {
        uint32_t sb;
        box_elem(&g, x.c, li, x.smem, &sb);
        if (sb + (uint32_t)g.e > s->smem_bytes) {
            sim_fail(s, 1, E0982, st, "a TMA store reads past the shared buffer (byte %u)", sb);
            return;
        }
        for (int b = 0; b < g.e; b++) {
            if (s->async_w[sb + (uint32_t)b]) {
                sim_fail(s, 1, E0981, st, "a TMA store reads %s that a TMA load still writes",
                         sim_smem_name(s, sb + (uint32_t)b));
                return;
            }
            s->async_r[sb + (uint32_t)b]++;
        }
        sim_race_access(s, t, sb, (uint32_t)g.e, 0, st);
    }
    s->bulks = grow(s->bulks, &s->capbulks, s->nbulks + 1, sizeof *s->bulks);
    s->bulks[s->nbulks++] = x;
}

/* `tma.store.add`: dst += src in the element's type (the TMA unit's reduction: f32, f16,
 * bf16 rounded to nearest even once per add; i32, u32, u64 wrapping) */
static void bulk_add(DType dt, uint8_t *dst, const uint8_t *src)
{
    switch (dt) {
    case DT_F32: { float a, b; memcpy(&a, dst, 4); memcpy(&b, src, 4); a += b; memcpy(dst, &a, 4); return; }
    case DT_F16: case DT_BF16: /* exact in f64, then one rounding (interp_encode rounds) */
        interp_encode(dt, interp_decode(dt, dst) + interp_decode(dt, src), dst);
        return;
    case DT_I32: case DT_U32: { uint32_t a, b; memcpy(&a, dst, 4); memcpy(&b, src, 4); a += b; memcpy(dst, &a, 4); return; }
    case DT_U64: { uint64_t a, b; memcpy(&a, dst, 8); memcpy(&b, src, 8); a += b; memcpy(dst, &a, 8); return; }
    default: return; /* E0613 at check */
    }
}

static void bulk_perform(Sim *s, const SimBulk *x)
{
    TmaGeom g;
    if (!tma_geom(s, x->map, &g, 0))
        return;
    int64_t ne = box_elems(&g);
    uint8_t *dst = g.b->host;
    for (int64_t li = 0; li < ne; li++) {
        uint32_t sb;
        int64_t off = box_elem(&g, x->c, li, x->smem, &sb);
        if (off >= 0 && x->add) /* cp.reduce.async.bulk .add */
            bulk_add(g.b->dtype, dst + off * g.e, s->smem + sb);
        else if (off >= 0)
            memcpy(dst + off * g.e, s->smem + sb, (size_t)g.e);
        for (int b = 0; b < g.e; b++)
            s->async_r[sb + (uint32_t)b]--;
    }
}

/* bulk groups of t below its commit count - n complete (n < 0: every one) */
void sim_bulk_wait(Sim *s, SimThread *t, int64_t n)
{
    int64_t below = n < 0 ? INT64_MAX : t->bulk_commits - n;
    uint32_t w = 0;
    for (uint32_t i = 0; i < s->nbulks; i++) {
        SimBulk *x = &s->bulks[i];
        if (x->issuer == t->tid && x->group < below)
            bulk_perform(s, x);
        else
            s->bulks[w++] = *x;
    }
    s->nbulks = w;
}

/* ---- cp.async ---------------------------------------------------------------------------- */

void sim_cp_async(Sim *s, SimThread *t, NodeId st)
{
    const Node *n = sim_node(s, st);
    SimRef src, dst;
    int on = !n->c || sim_int(s, t, n->c);
    if (!sim_ref(s, t, n->a, &dst) || (on && !sim_ref(s, t, n->b, &src)))
        return;
    if (!dst.shared) {
        sim_fail(s, 2, E0983, st, "cp.async into global memory");
        return;
    }
    uint32_t bytes = (uint32_t)(dst.lanes * dst.eb);
    if (dst.soff + bytes > s->smem_bytes) {
        sim_fail(s, 1, E0982, st, "cp.async writes past the shared buffer");
        return;
    }
    for (uint32_t b = 0; b < bytes; b++) {
        if (s->async_r[dst.soff + b]) {
            sim_fail(s, 1, E0981, st, "cp.async overwrites %s that an asynchronous reader "
                     "still reads", sim_smem_name(s, dst.soff + b));
            return;
        }
        s->async_w[dst.soff + b]++;
    }
    sim_race_access(s, t, dst.soff, bytes, 1, st);
    uint32_t cap = t->capcopies;
    t->copies = grow(t->copies, &cap, t->ncopies + 1, sizeof *t->copies);
    t->capcopies = cap;
    t->copies[t->ncopies++] = (SimCopy){dst.soff, on ? src.gptr : NULL, bytes, t->cp_groups};
}

/* cp.async groups of t below its commit count - n complete (n < 0: every copy) */
void sim_cp_wait(Sim *s, SimThread *t, int64_t n)
{
    int64_t below = n < 0 ? INT64_MAX : t->cp_groups - n;
    uint32_t w = 0;
    for (uint32_t i = 0; i < t->ncopies; i++) {
        SimCopy *c = &t->copies[i];
        if (c->group < below) {
            if (c->src)
                memcpy(s->smem + c->dst, c->src, c->bytes);
            else
                memset(s->smem + c->dst, 0, c->bytes);
            for (uint32_t b = 0; b < c->bytes; b++)
                s->async_w[c->dst + b]--;
        } else {
            t->copies[w++] = *c;
        }
    }
    t->ncopies = w;
}
