/* build.c — typed node construction and cloning for the lowering passes
 * (build.h). */
#include <string.h>
#include "build.h"

static int lane_slot(int lanes)
{
    switch (lanes) {
    case 2: return 1;
    case 4: return 2;
    case 8: return 3;
    case 16: return 4;
    default: return 0;
    }
}

void irb_init(IrB *b, CakeCtx *ctx, Kernel *k)
{
    memset(b, 0, sizeof *b);
    b->ctx = ctx;
    b->k = k;
    b->span = k->span;
}

TypeId irb_scalar_type(IrB *b, DType dt, int lanes)
{
    TypeId *slot = &b->scalar[dt][lane_slot(lanes)];
    if (!*slot) {
        Type t = {0};
        t.kind = lanes > 1 ? TK_VECTOR : TK_SCALAR;
        t.dtype = (uint8_t)dt;
        t.lanes = (uint8_t)(lanes > 1 ? lanes : 1);
        *slot = ir_type_add(b->ctx, b->k, &t);
    }
    return *slot;
}

const Type *irb_type(const IrB *b, NodeId n)
{
    static const Type unknown = {0};
    if (!n || n >= b->k->nnodes)
        return &unknown;
    TypeId t = b->k->nodes[n].type;
    return t && t < b->k->ntypes ? &b->k->types[t] : &unknown;
}

DType irb_dtype(const IrB *b, NodeId n)
{
    return (DType)irb_type(b, n)->dtype;
}

static NodeId node(IrB *b, Op op, TypeId t)
{
    NodeId id = ir_node(b->ctx, b->k, op, b->span);
    b->k->nodes[id].type = t;
    return id;
}

NodeId irb_int(IrB *b, int64_t v, DType dt)
{
    NodeId id = node(b, OP_INT, irb_scalar_type(b, dt, 1));
    b->k->nodes[id].v.i = v;
    b->k->nodes[id].dtype = (uint8_t)dt;
    return id;
}

NodeId irb_i32(IrB *b, int64_t v)
{
    return irb_int(b, v, DT_I32);
}

NodeId irb_special(IrB *b, SpecialReg r)
{
    NodeId id = node(b, OP_SPECIAL, irb_scalar_type(b, DT_I32, 1));
    b->k->nodes[id].sub = (uint16_t)r;
    return id;
}

NodeId irb_name(IrB *b, NodeId decl)
{
    Node *d = ir_get(b->k, decl);
    NodeId id = node(b, OP_NAME, d->type);
    b->k->nodes[id].name = b->k->nodes[decl].name;
    b->k->nodes[id].decl = decl;
    return id;
}

NodeId irb_bin(IrB *b, Op op, NodeId x, NodeId y)
{
    uint16_t fl = ir_ops[op].flags;
    TypeId t = (fl & (OF_CMP | OF_LOGIC)) ? irb_scalar_type(b, DT_BOOL, irb_type(b, x)->lanes)
                                           : ir_get(b->k, x)->type;
    NodeId id = node(b, op, t);
    b->k->nodes[id].a = x;
    b->k->nodes[id].b = y;
    return id;
}

NodeId irb_un(IrB *b, Op op, NodeId x)
{
    NodeId id = node(b, op, ir_get(b->k, x)->type);
    b->k->nodes[id].a = x;
    return id;
}

NodeId irb_cast(IrB *b, NodeId x, DType dt, int lanes)
{
    const Type *t = irb_type(b, x);
    if (t->dtype == dt && (t->lanes ? t->lanes : 1) == lanes && t->kind != TK_TILE)
        return x;
    NodeId id = node(b, OP_CAST, irb_scalar_type(b, dt, lanes));
    Node *n = ir_get(b->k, id);
    n->a = x;
    n->dtype = (uint8_t)dt;
    n->lanes = (uint8_t)lanes;
    return id;
}

NodeId irb_call(IrB *b, Op op, const NodeId *args, uint32_t n, TypeId t)
{
    uint32_t l = ir_list(b->ctx, b->k, args, n);
    NodeId id = node(b, op, t);
    b->k->nodes[id].list = l;
    b->k->nodes[id].n = n;
    return id;
}

NodeId irb_select(IrB *b, NodeId c, NodeId x, NodeId y)
{
    NodeId args[3] = {c, x, y};
    return irb_call(b, OP_SELECT, args, 3, ir_get(b->k, x)->type);
}

NodeId irb_index(IrB *b, NodeId base_decl, const NodeId *ix, uint32_t n, TypeId t)
{
    NodeId base = irb_name(b, base_decl);
    uint32_t l = ir_list(b->ctx, b->k, ix, n);
    NodeId id = node(b, OP_INDEX, t);
    Node *x = ir_get(b->k, id);
    x->a = base;
    x->list = l;
    x->n = n;
    return id;
}

NodeId irb_elem(IrB *b, NodeId array_decl, int64_t i)
{
    NodeId ix = irb_i32(b, i);
    const Type *at = irb_type(b, array_decl);
    return irb_index(b, array_decl, &ix, 1, irb_scalar_type(b, (DType)at->dtype, at->lanes ? at->lanes : 1));
}

int irb_is_int(const IrB *b, NodeId x, int64_t *v)
{
    const Node *n = &b->k->nodes[x];
    if (n->op != OP_INT)
        return 0;
    *v = n->v.i;
    return 1;
}

NodeId irb_add(IrB *b, NodeId x, NodeId y)
{
    int64_t cx, cy;
    int kx = irb_is_int(b, x, &cx), ky = irb_is_int(b, y, &cy);
    if (kx && ky)
        return irb_int(b, cx + cy, irb_dtype(b, x));
    if (kx && cx == 0)
        return y;
    if (ky && cy == 0)
        return x;
    return irb_bin(b, OP_ADD, x, y);
}

NodeId irb_add_c(IrB *b, NodeId x, int64_t c)
{
    return c ? irb_add(b, x, irb_int(b, c, irb_dtype(b, x))) : x;
}

NodeId irb_mul_c(IrB *b, NodeId x, int64_t c)
{
    int64_t cx;
    if (irb_is_int(b, x, &cx))
        return irb_int(b, cx * c, irb_dtype(b, x));
    if (c == 1)
        return x;
    if (c == 0)
        return irb_int(b, 0, irb_dtype(b, x));
    return irb_bin(b, OP_MUL, x, irb_int(b, c, irb_dtype(b, x)));
}

NodeId irb_divmod_c(IrB *b, NodeId x, int64_t div, int64_t mod)
{
    DType dt = irb_dtype(b, x);
    if (div > 1)
        x = irb_bin(b, OP_DIV, x, irb_int(b, div, dt));
    if (mod > 0)
        x = irb_bin(b, OP_MOD, x, irb_int(b, mod, dt));
    return x;
}

NodeId irb_stmt(IrB *b, Op op, const NodeId *ops, uint32_t n)
{
    return irb_call(b, op, ops, n, 0);
}

NodeId irb_block(IrB *b, const NodeId *stmts, uint32_t n)
{
    return irb_call(b, OP_BLOCK, stmts, n, 0);
}

NodeId irb_if(IrB *b, NodeId cond, NodeId then_block, NodeId else_block)
{
    NodeId id = node(b, OP_IF, 0);
    Node *n = ir_get(b->k, id);
    n->a = cond;
    n->b = then_block;
    n->c = else_block;
    return id;
}

NodeId irb_assign(IrB *b, NodeId lvalue, NodeId value)
{
    NodeId id = node(b, OP_ASSIGN, 0);
    Node *n = ir_get(b->k, id);
    n->a = lvalue;
    n->b = value;
    n->sub = OP_NONE;
    return id;
}

NodeId irb_let(IrB *b, const char *name, NodeId init)
{
    NodeId id = node(b, OP_LET, ir_get(b->k, init)->type);
    Node *n = ir_get(b->k, id);
    n->name = ir_intern_cstr(b->ctx, name);
    n->b = init;
    return id;
}

NodeId irb_decl_type(IrB *b, DType dt, int lanes, const int64_t *dims, uint32_t rank)
{
    NodeId ds[IR_MAX_RANK];
    for (uint32_t i = 0; i < rank && i < IR_MAX_RANK; i++)
        ds[i] = irb_i32(b, dims[i]);
    NodeId id = irb_call(b, OP_TYPE, ds, rank, 0);
    Node *n = ir_get(b->k, id);
    n->dtype = (uint8_t)dt;
    n->lanes = (uint8_t)(lanes > 1 ? lanes : 1);
    n->sub = rank > 0;
    return id;
}

NodeId irb_var(IrB *b, const char *name, DType dt, NodeId init)
{
    NodeId id = node(b, OP_VAR, irb_scalar_type(b, dt, 1));
    NodeId ty = irb_decl_type(b, dt, 1, NULL, 0);
    Node *n = ir_get(b->k, id);
    n->name = ir_intern_cstr(b->ctx, name);
    n->a = ty;
    n->b = init;
    return id;
}

NodeId irb_array(IrB *b, const char *name, DType dt, int64_t count, NodeId init)
{
    Type t = {0};
    t.kind = TK_TILE;
    t.dtype = (uint8_t)dt;
    t.lanes = 1;
    t.space = SP_REG;
    t.scope = SC_THREAD;
    t.rank = 1;
    t.shape[0] = count;
    TypeId tid = ir_type_add(b->ctx, b->k, &t);
    NodeId id = node(b, OP_REG, tid);
    NodeId ty = irb_decl_type(b, dt, 1, &count, 1);
    Node *n = ir_get(b->k, id);
    n->name = ir_intern_cstr(b->ctx, name);
    n->a = ty;
    n->b = init;
    ir_get(b->k, id)->type = tid;
    return id;
}

void irb_push(IrB *b, IrList *l, NodeId s)
{
    if (!s)
        return;
    l->v = arena_grow(&b->ctx->arena, l->v, &l->cap, l->n + 1, sizeof *l->v);
    l->v[l->n++] = s;
}

NodeId irb_list_block(IrB *b, const IrList *l)
{
    return irb_block(b, l->v, l->n);
}

/* ---- cloning ------------------------------------------------------------ */

static void ensure_remap(IrB *b, NodeId upto)
{
    if (upto < b->nremap)
        return;
    uint32_t old = b->nremap, n = old ? old : 256;
    while (n <= upto)
        n *= 2;
    b->remap = arena_realloc(&b->ctx->arena, b->remap, old * sizeof *b->remap, n * sizeof *b->remap);
    memset(b->remap + old, 0, (n - old) * sizeof *b->remap);
    b->nremap = n;
}

void irb_map(IrB *b, NodeId decl, NodeId replacement)
{
    ensure_remap(b, decl);
    b->remap[decl] = replacement;
}

static int declares(const Node *n)
{
    switch ((Op)n->op) {
    case OP_LET: case OP_VAR: case OP_REG: case OP_SHARED: case OP_MBARRIER:
    case OP_FOR: case OP_SUM: case OP_RMAX: case OP_RMIN:
        return 1;
    default:
        return 0;
    }
}

NodeId irb_clone(IrB *b, NodeId id)
{
    if (!id)
        return 0;
    Kernel *k = b->k;
    Node src = k->nodes[id];
    if (src.op == OP_NAME && src.decl && src.decl != id && src.decl < b->nremap && b->remap[src.decl]) {
        NodeId r = b->remap[src.decl];
        const Node *rn = &k->nodes[r];
        if (declares(rn) || rn->op == OP_L_TMAP || (rn->op == OP_NAME && rn->decl == r))
            return irb_name(b, r); /* a renamed declaration (an implicit index too): a use of the copy */
        NodeId saved = b->remap[src.decl];
        b->remap[src.decl] = 0; /* the replacement is an expression: copy it as is */
        NodeId c = irb_clone(b, r);
        b->remap[src.decl] = saved;
        return c;
    }
    NodeId nid = ir_node(b->ctx, k, (Op)src.op, src.span);
    if (declares(&src) || (src.op == OP_NAME && src.decl == id)) {
        ensure_remap(b, id);
        b->remap[id] = nid; /* later uses refer to the copy */
        /* uses inside its own children (a loop's body naming the loop variable)
         * are made below, before the copy is filled in: give it its name and
         * type now, or they get none (a fuzzer's gemm_sm80 mutant: exit 2) */
        k->nodes[nid] = src;
        k->nodes[nid].a = k->nodes[nid].b = k->nodes[nid].c = k->nodes[nid].d = 0;
        k->nodes[nid].n = 0;
    }
    NodeId kids[4] = {src.a, src.b, src.c, src.d};
    for (int i = 0; i < 4; i++)
        if (kids[i])   /* no call for an empty slot: the per-element copies are mostly leaves */
            kids[i] = irb_clone(b, kids[i]);
    uint32_t list = src.list;
    if (src.n) {
        NodeId tmp[64], *items = src.n <= 64 ? tmp : arena_alloc(&b->ctx->arena, src.n * sizeof *items);
        for (uint32_t i = 0; i < src.n; i++)
            items[i] = k->lists[src.list + i];
        for (uint32_t i = 0; i < src.n; i++)
            items[i] = irb_clone(b, items[i]);
        list = ir_list(b->ctx, k, items, src.n);
    }
    Node *n = &k->nodes[nid];
    *n = src;
    n->a = kids[0];
    n->b = kids[1];
    n->c = kids[2];
    n->d = kids[3];
    n->list = list;
    if (src.op == OP_NAME && src.decl == id)
        n->decl = nid;
    return nid;
}

void irb_replace(IrB *b, NodeId at, NodeId from)
{
    Kernel *k = b->k;
    Span keep = k->nodes[at].span;
    k->nodes[at] = k->nodes[from];
    k->nodes[at].span = keep;
}

/* ---- tensor-core attributes ----------------------------------------------- */

int64_t ir_tc_pack(IrTc t)
{
    uint64_t v = (uint64_t)(t.m & 0x1ff) | (uint64_t)(t.n & 0x1ff) << 9 | (uint64_t)(t.k & 0x7f) << 18 |
                 (uint64_t)(t.ab & 0x1f) << 25 | (uint64_t)(t.acc & 0x1f) << 30 |
                 (uint64_t)(t.a_regs & 1) << 35 | (uint64_t)(t.tnsp_a & 1) << 36 |
                 (uint64_t)(t.tnsp_b & 1) << 37 | (uint64_t)(t.b_dt & 0x1f) << 38 |
                 (uint64_t)(t.fresh & 1) << 43;
    return (int64_t)v;
}

IrTc ir_tc_unpack(int64_t sv)
{
    uint64_t v = (uint64_t)sv;
    IrTc t;
    t.m = (uint16_t)(v & 0x1ff);
    t.n = (uint16_t)(v >> 9 & 0x1ff);
    t.k = (uint16_t)(v >> 18 & 0x7f);
    t.ab = (uint8_t)(v >> 25 & 0x1f);
    t.acc = (uint8_t)(v >> 30 & 0x1f);
    t.a_regs = (uint8_t)(v >> 35 & 1);
    t.tnsp_a = (uint8_t)(v >> 36 & 1);
    t.tnsp_b = (uint8_t)(v >> 37 & 1);
    t.b_dt = (uint8_t)(v >> 38 & 0x1f);
    t.fresh = (uint8_t)(v >> 43 & 1);
    return t;
}
