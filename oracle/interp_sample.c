/* interp_sample.c — evaluating the reference for a sample of its output
 * (interp.h): which loops may be restricted (the plan) and the restriction
 * itself; interp.c's loop evaluation honours it. Used by `run --check` at
 * shapes too large to evaluate in full (check_sample.c). */
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "interp_priv.h"

typedef struct {
    Interp *I;
    InterpSamplePlan *p;
    uint8_t *outer_var;    /* per slot: set at the top level, outside every nest */
    uint8_t *outer_local;  /* per tensor index: a local array declared at the top level */
} Plan;

static void refuse(Plan *P, NodeId at, const char *why)
{
    if (!P->p->ok)
        return;
    P->p->ok = 0;
    uint32_t line, col, el, ec;
    span_linecol(P->I->ctx, P->I->k->nodes[at].span, &line, &col, &el, &ec);
    snprintf(P->p->why, sizeof P->p->why, "%s (reference line %u)", why, line);
}

/* the only statement of a block, or the statement itself */
static uint32_t only_stmt(const Interp *I, uint32_t xi)
{
    const XNode *x = &I->x[xi];
    if (x->op == X_SEQ)
        return x->n == 1 ? I->xl[x->list] : 0;
    return xi;
}

/* is index expression xi exactly the loop variable of slot? */
static int is_var(const Interp *I, uint32_t xi, uint32_t slot)
{
    return I->x[xi].op == X_VAR && I->x[xi].slot == slot;
}

/* the statements of a nest body: every store indexed by the row (and column) variable */
static void check_body(Plan *P, uint32_t xi, uint32_t row, int64_t col, int *tiles)
{
    Interp *I = P->I;
    const XNode *x = &I->x[xi];
    switch (x->op) {
    case X_SEQ:
        for (uint32_t i = 0; i < x->n; i++)
            check_body(P, I->xl[x->list + i], row, col, tiles);
        return;
    case X_FOR: check_body(P, x->d, row, col, tiles); return;
    case X_IF:
        if (x->b)
            check_body(P, x->b, row, col, tiles);
        if (x->c)
            check_body(P, x->c, row, col, tiles);
        return;
    case X_SETVAR:
        if (P->outer_var[x->slot])
            refuse(P, x->src, "a nest sets a variable declared outside it");
        return;
    case X_STORE: {
        if (x->slot >= I->k->nargs) {
            if (P->outer_local[x->slot])
                refuse(P, x->src, "a nest writes an array declared outside it");
            return;
        }
        if (!x->n || !is_var(I, I->xl[x->list], row))
            refuse(P, x->src, "a store's first index is not the outer loop's variable");
        if (col < 0 || x->n < 2 || !is_var(I, I->xl[x->list + 1], (uint32_t)col))
            *tiles = 0;
        return;
    }
    default: return;
    }
}

static int64_t loop_end(Interp *I, const XNode *f)
{
    double hi = ip_eval(I, f->b);
    return hi > 0 && hi < 0x1p62 ? (int64_t)hi : 0;
}

static void plan_nests(Plan *P, const XNode *root)
{
    Interp *I = P->I;
    int tiles = 1, nests = 0;
    for (uint32_t i = 0; i < root->n; i++) {
        uint32_t si = I->xl[root->list + i];
        const XNode *s = &I->x[si];
        if (s->op == X_SETVAR) { /* a loop bound may use it (tensor reads give 0 here) */
            P->outer_var[s->slot] = 1;
            I->vars[s->slot] = ip_eval(I, s->a);
            continue;
        }
        if (s->op == X_LOCAL) {
            P->outer_local[s->slot] = 1;
            continue;
        }
        if (s->op != X_FOR) {
            refuse(P, s->src, "a top-level statement is not a loop over rows");
            return;
        }
        nests++;
        int64_t rows = loop_end(I, s);
        if (rows > P->p->rows)
            P->p->rows = rows;
        uint32_t in = only_stmt(I, s->d);
        int64_t col = in && I->x[in].op == X_FOR ? (int64_t)I->x[in].slot : -1;
        if (col < 0)
            tiles = 0;
        else {
            int64_t cols = loop_end(I, &I->x[in]);
            if (cols > P->p->cols)
                P->p->cols = cols;
        }
        I->vars[s->slot] = 0;
        check_body(P, s->d, s->slot, col, &tiles);
        I->smark[si] = 1;
        if (col >= 0)
            I->smark[in] = 2;
    }
    if (!nests)
        refuse(P, I->k->reference, "the reference has no loop over rows");
    P->p->tiles = P->p->ok && tiles;
    if (!P->p->tiles) /* rows only: no column loop is restricted */
        for (uint32_t i = 0; i < I->nx; i++)
            if (I->smark[i] == 2)
                I->smark[i] = 0;
}

int interp_sample_plan(Interp *I, const ShapeEnv *env, InterpSamplePlan *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->ok = 1;
    free(I->smark);
    I->smark = calloc(I->nx + 1, 1);
    Plan P = {I, plan, calloc(I->nslots + 1, 1), calloc(I->k->nargs + I->nlocal + 1, 1)};
    const XNode *root = &I->x[I->root];
    HostTensor *geo = calloc(I->k->nargs + 1, sizeof *geo);
    int ok = 1;
    for (uint32_t i = 0; i < I->k->nargs && ok; i++)
        ok = interp_arg_tensor(I->ctx, I->k, i, env, &geo[i]);
    if (!ok || !ip_bind(I, env, geo)) {
        refuse(&P, I->k->reference, "the shape is incomplete");
    } else if (root->op != X_SEQ) {
        refuse(&P, I->k->reference, "the reference is not a block");
    } else if (setjmp(I->jb)) {
        refuse(&P, I->k->reference, "a loop bound does not evaluate");
    } else {
        I->costmode = 1; /* no tensor data: reads give 0 */
        plan_nests(&P, root);
    }
    I->costmode = 0;
    I->t = NULL;
    free(geo);
    free(P.outer_var);
    free(P.outer_local);
    return plan->ok;
}

static int64_t *copy(const int64_t *a, uint32_t n)
{
    if (!a)
        return NULL;
    int64_t *c = malloc((n + 1) * sizeof *c);
    memcpy(c, a, n * sizeof *c);
    return c;
}

void interp_set_sample(Interp *I, uint32_t n, const int64_t *row, const int64_t *col_lo,
                       const int64_t *col_hi)
{
    free(I->srow);
    free(I->scol_lo);
    free(I->scol_hi);
    I->srow = I->scol_lo = I->scol_hi = NULL;
    I->nsamp = row && I->smark ? n : 0;
    if (!I->nsamp)
        return;
    I->srow = copy(row, n);
    if (col_lo && col_hi) {
        I->scol_lo = copy(col_lo, n);
        I->scol_hi = copy(col_hi, n);
    }
}
