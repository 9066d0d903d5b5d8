/* align.h — what the alignment prover's files share (align.c: the accesses
 * and the entry point; align_facts.c: the facts at a statement, the access's
 * declaration, view chain and offset, the proof; align_report.c: the E0810 /
 * E0811 message, its notes, help and fix-it). docs/tir.md §7.6. */
#ifndef CAKE_ALIGN_H
#define CAKE_ALIGN_H
#include "sync.h"
#include "divis.h"

#define AL_FACTS 64
#define AL_PARTS 4          /* index expressions summed into one dim's start */

/* one access: the declaration, and per declaration dim the index (the sum of
 * the starts the chain of views gives it, plus `extra`, what the instruction
 * adds: a row of a tile, a lane's column) and its stride */
enum { AK_VECTOR, AK_CP_ASYNC, AK_FRAGMENT, AK_MATRIX };

typedef struct {
    NodeId at;                       /* where to report (the reference) */
    NodeId decl;
    int global, rank, esz;
    int64_t base;                    /* proven base alignment in bytes */
    NodeId part[IR_MAX_RANK][AL_PARTS]; int nparts[IR_MAX_RANK];
    int kept[IR_MAX_RANK];           /* the dim is still a dim of the final view */
    int64_t last_extent;             /* a slice's constant extent on the last dim (1: element) */
    DvCong extra[IR_MAX_RANK];
    DvCong stride[IR_MAX_RANK];      /* in elements */
    const char *stride_text[IR_MAX_RANK];
    int kind;                        /* AK_* */
    int64_t width;                   /* bytes the instruction needs */
    const char *what;                /* "a 16-byte vector load", ... */
} Acc;

typedef struct {
    SyK *s;
    DvEnv env;
    DvFact facts[AL_FACTS];
    NodeId role;
} Al;

static inline Node *al_node(const Al *a, NodeId n) { return sy_node(a->s, n); }

/* align_facts.c */
int al_special(const DvEnv *env, NodeId at, int64_t *out);
/* the facts in force at statement st (and under mask): into a->env */
void al_context_facts(Al *a, NodeId st, NodeId mask);
void al_global_strides(Al *a, Acc *x);
int al_acc_decl(Al *a, Acc *x, NodeId ref);
int al_acc_chain(Al *a, Acc *x, NodeId ref);
int al_kept_dims(const Acc *x);
DvCong al_dim_index(Al *a, const Acc *x, int d);
DvCong al_term(Al *a, const Acc *x, int d);
DvCong al_offset(Al *a, const Acc *x);
int al_proved(Al *a, const Acc *x);

/* align_report.c: the diagnostic for an access not proved aligned */
void al_report(Al *a, const Acc *x);

#endif
