/* agent_space.h — parameter spaces (agent_space.c): NAME=v1,v2 words, their
 * cartesian product as --set strings. */
#ifndef CAKE_AGENT_SPACE_H
#define CAKE_AGENT_SPACE_H
#include <stdio.h>

#define AG_SPACE_MAX_PARAMS 8
#define AG_SPACE_MAX_VALUES 16

typedef struct {
    char name[32];
    char values[AG_SPACE_MAX_VALUES][24];
    int nvalues;
} AgParam;

typedef struct {
    AgParam params[AG_SPACE_MAX_PARAMS];
    int nparams;
} AgSpace;

/* adds the NAME=v1,v2 words of text (space-separated); 0 with err set on a bad word */
int ag_space_add(AgSpace *s, const char *text, char *err, size_t errcap);
/* the number of points (capped at 1000000) */
long ag_space_size(const AgSpace *s);
/* point `index` as "A=1,B=2" */
void ag_space_point(const AgSpace *s, long index, char *out, size_t cap);

#endif
