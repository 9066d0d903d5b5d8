/* agent_util.c — small helpers of the agent commands: files, strings, the
 * clock, the cakec to run children with, and looking things up in the JSON
 * documents the children print. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "agent.h"

char *ag_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 8192, n = 0, r;
    char *s = malloc(cap);
    while (s && (r = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n < 2) {
            char *t = realloc(s, cap * 2);
            if (!t) {
                free(s);
                s = NULL;
                break;
            }
            s = t;
            cap *= 2;
        }
    }
    fclose(f);
    if (s)
        s[n] = 0;
    if (len)
        *len = n;
    return s;
}

int ag_write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    int ok = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

char *ag_strdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

char *ag_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

double ag_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *ag_cakec_path(char *buf, size_t cap)
{
    const char *env = getenv("CAKE_RUN_CMD");
    if (env && *env)
        return env;
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
    if (n <= 0)
        return "cakec";
    buf[n] = 0;
    return buf;
}

double ag_json_find_number(const cJSON *j, const char *const *keys)
{
    if (!j)
        return NAN;
    for (const char *const *k = keys; *k; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, *k);
        if (cJSON_IsNumber(v))
            return v->valuedouble;
    }
    for (const cJSON *c = j->child; c; c = c->next) {
        if (!cJSON_IsObject(c))
            continue;
        double d = ag_json_find_number(c, keys);
        if (!isnan(d))
            return d;
    }
    return NAN;
}

const char *ag_json_find_string(const cJSON *j, const char *key)
{
    if (!j)
        return NULL;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    if (cJSON_IsString(v))
        return v->valuestring;
    for (const cJSON *c = j->child; c; c = c->next)
        if (cJSON_IsObject(c)) {
            const char *s = ag_json_find_string(c, key);
            if (s)
                return s;
        }
    return NULL;
}

/* The cost model's document is read by key, tolerant of its exact layout:
 * the first of these numbers found, depth first. */
double ag_cost_ms(const cJSON *cost)
{
    static const char *const keys[] = {"predicted_ms", "time_ms", "ms", "median_ms", NULL};
    const cJSON *ok = cJSON_GetObjectItemCaseSensitive(cost, "ok");
    if (cJSON_IsFalse(ok))
        return NAN;
    return ag_json_find_number(cost, keys);
}
