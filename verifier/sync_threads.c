/* sync_threads.c — how many threads of a role execute a statement under its
 * enclosing guards, on the concrete interpreter (analysis/exec.h); issuing
 * units and single-issue statements (sync.h). */
#include "sync.h"

int64_t sy_unit_size(const SyK *s, NodeId role)
{
    int64_t first, count;
    if (!sy_role_range(s, role, &first, &count))
        return 0;
    if (!role)
        return count;
    Unit unit = (Unit)sy_node(s, role)->sub;
    return unit == UNIT_WARPGROUPS || unit == UNIT_WARPS ? tg_unit_threads(s->tg, unit) : count;
}

int sy_single_issue(const SyK *s, NodeId st)
{
    uint16_t op = sy_node(s, st)->op;
    return op == OP_TMA_LOAD || op == OP_TMA_STORE || op == OP_TMA_WAIT || op == OP_MB_EXPECT;
}

int64_t sy_threads_at(const SyK *s, NodeId st, int *exact)
{
    int64_t first, count, n = 0, stride = 1;
    *exact = 1;
    NodeId role = s->role[st];
    if (!sy_role_range(s, role, &first, &count) || count > 4096)
        return 0;
    if (sy_single_issue(s, st) && (stride = sy_unit_size(s, role)) <= 0)
        return 0;
    NodeId guards[64];
    uint8_t neg[64];
    uint32_t ng = 0;
    for (NodeId cur = st; cur && s->up[cur] && s->up[cur] != role && ng < 64; cur = s->up[cur]) {
        NodeId p = s->up[cur];
        if (sy_node(s, p)->op == OP_IF) {
            guards[ng] = sy_node(s, p)->a;
            neg[ng++] = s->in_else[cur];
        }
    }
    SyExec x;
    sy_exec_init(&x, (SyK *)s, 0);
    for (int64_t t = first; t < first + count; t += stride) {
        sy_exec_thread(&x, role, t);
        int taken = 1;
        for (uint32_t g = 0; g < ng && taken; g++) {
            int64_t v;
            if (!sy_eval(&x, guards[g], &v))
                *exact = 0;
            else if ((v != 0) == neg[g])
                taken = 0;
        }
        n += taken;
    }
    return n;
}
