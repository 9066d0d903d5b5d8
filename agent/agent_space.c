/* agent_space.c — parameter spaces for `cakec tune --space` and the `cost`
 * tool's sweeps: "BM=64,128,256 STAGES=2,3" (or one word per parameter)
 * enumerated as the cartesian product, each point a --set string
 * "BM=64,STAGES=2" (the first parameter varies slowest). */
#include <stdlib.h>
#include <string.h>
#include "agent_space.h"

static int add_param(AgSpace *s, const char *word, char *err, size_t errcap)
{
    const char *eq = strchr(word, '=');
    if (!eq || eq == word || !eq[1]) {
        snprintf(err, errcap, "`%s` is not NAME=v1,v2,...", word);
        return 0;
    }
    if (s->nparams == AG_SPACE_MAX_PARAMS) {
        snprintf(err, errcap, "more than %d parameters", AG_SPACE_MAX_PARAMS);
        return 0;
    }
    AgParam *p = &s->params[s->nparams++];
    snprintf(p->name, sizeof p->name, "%.*s", (int)(eq - word), word);
    const char *v = eq + 1;
    while (*v) {
        const char *comma = strchr(v, ',');
        size_t len = comma ? (size_t)(comma - v) : strlen(v);
        if (len == 0 || len >= sizeof p->values[0] || p->nvalues == AG_SPACE_MAX_VALUES) {
            snprintf(err, errcap, "`%s`: empty, too long or too many values", word);
            return 0;
        }
        snprintf(p->values[p->nvalues++], sizeof p->values[0], "%.*s", (int)len, v);
        v = comma ? comma + 1 : v + len;
    }
    return 1;
}

int ag_space_add(AgSpace *s, const char *text, char *err, size_t errcap)
{
    char *copy = strdup(text);
    if (!copy)
        return 0;
    int ok = 1;
    char *save = NULL;
    for (char *w = strtok_r(copy, " \t\n", &save); w && ok; w = strtok_r(NULL, " \t\n", &save))
        ok = add_param(s, w, err, errcap);
    free(copy);
    return ok;
}

long ag_space_size(const AgSpace *s)
{
    long n = s->nparams ? 1 : 0;
    for (int i = 0; i < s->nparams; i++) {
        n *= s->params[i].nvalues;
        if (n > 1000000)
            return 1000000;
    }
    return n;
}

void ag_space_point(const AgSpace *s, long index, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = 0;
    long stride = ag_space_size(s);
    for (int i = 0; i < s->nparams; i++) {
        const AgParam *p = &s->params[i];
        stride /= p->nvalues;
        long k = (index / stride) % p->nvalues;
        int n = snprintf(out + len, cap - len, "%s%s=%s", i ? "," : "", p->name, p->values[k]);
        if (n < 0 || (size_t)n >= cap - len)
            return;
        len += (size_t)n;
    }
}
