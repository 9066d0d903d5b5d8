/* jitlog.c — reads the messages out of a PTX JIT (ptxas) log, so the driver
 * can turn them into diagnostics at the PTX line they name:
 *   ptxas application ptx input, line 12; error   : Unknown symbol '%q'
 *   ptxas warning : Value of threads per SM for entry k is out of range
 *   ptxas fatal   : Ptx assembly aborted due to errors
 * "info" lines are skipped there; rt__jit_spills reads the spill and stack
 * bytes of one function out of them.
 */
#include "backend.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *word;
    bool error;
} Severity;

static const Severity severities[] = {
    {"error", true}, {"fatal", true}, {"warning", false},
};

static bool is_space(char c) { return c == ' ' || c == '\t'; }

/* "line 12;" anywhere in [p, end) → 12, else 0. */
static int parse_line_no(const char *p, const char *end)
{
    for (; p + 5 < end; p++)
        if (memcmp(p, "line ", 5) == 0 && p[5] >= '0' && p[5] <= '9')
            return (int)strtol(p + 5, NULL, 10);
    return 0;
}

/* Finds "<severity> *:" in [p, end); sets *text past the colon. */
static const Severity *find_severity(const char *p, const char *end, const char **text)
{
    for (; p < end; p++) {
        for (size_t i = 0; i < sizeof severities / sizeof severities[0]; i++) {
            size_t n = strlen(severities[i].word);
            if ((size_t)(end - p) <= n || memcmp(p, severities[i].word, n) != 0)
                continue;
            const char *q = p + n;
            while (q < end && is_space(*q))
                q++;
            if (q < end && *q == ':') {
                *text = q + 1;
                return &severities[i];
            }
        }
    }
    return NULL;
}

static bool parse_msg(const char *line, const char *end, RtJitMsg *out)
{
    const char *text = NULL;
    const Severity *sev = find_severity(line, end, &text);
    if (!sev)
        return false;
    while (text < end && is_space(*text))
        text++;
    const char *tail = end;
    while (tail > text && (is_space(tail[-1]) || tail[-1] == '\r'))
        tail--;
    out->line = parse_line_no(line, text);
    out->error = sev->error;
    out->text = text;
    out->len = (int)(tail - text);
    return true;
}

bool rt_jit_log_next(const char **cursor, RtJitMsg *out)
{
    const char *p = *cursor;
    while (p && *p) {
        const char *end = strchr(p, '\n');
        if (!end)
            end = p + strlen(p);
        const char *next = *end ? end + 1 : end;
        bool found = parse_msg(p, end, out);
        p = next;
        if (found) {
            *cursor = p;
            return true;
        }
    }
    *cursor = p;
    return false;
}

/* The number just before `phrase` in [p, end), or -1. */
static int number_before(const char *p, const char *end, const char *phrase)
{
    size_t n = strlen(phrase);
    for (const char *q = p; q + n <= end; q++) {
        if (memcmp(q, phrase, n) != 0)
            continue;
        const char *d = q;
        while (d > p && is_space(d[-1]))
            d--;
        while (d > p && d[-1] >= '0' && d[-1] <= '9')
            d--;
        return *d >= '0' && *d <= '9' ? (int)strtol(d, NULL, 10) : -1;
    }
    return -1;
}

/*   ptxas info    : Function properties for vadd
 *   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads */
bool rt__jit_spills(const char *log, const char *name, int out[3])
{
    static const char key[] = "Function properties for ";
    size_t n = strlen(name);
    for (const char *p = strstr(log, key); p; p = strstr(p, key)) {
        p += sizeof key - 1;
        if (strncmp(p, name, n) != 0 || (p[n] != '\n' && p[n] != '\r'))
            continue;
        const char *line = strchr(p, '\n');
        if (!line)
            return false;
        line++;
        const char *end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        out[0] = number_before(line, end, "bytes stack frame");
        out[1] = number_before(line, end, "bytes spill stores");
        out[2] = number_before(line, end, "bytes spill loads");
        return true;
    }
    return false;
}
