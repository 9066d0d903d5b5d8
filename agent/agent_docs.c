/* agent_docs.c — the `docs` tool and `cakec docs TOPIC`: the section of
 * docs/diagnostics.md for a code (E0801) or of docs/tir.md for a construct
 * (mbarrier, cp.async, "8.5 Pipelines"). The docs folder is found at run
 * time: --docs DIR, $CAKE_DOCS, or next to the executable (build/../docs in
 * a build tree, ../share/cake/docs when installed). */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "agent.h"

static int has_tir_md(const char *dir)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/tir.md", dir);
    return access(p, R_OK) == 0;
}

const char *ag_docs_dir(const char *flag, char *buf, size_t cap)
{
    const char *env = getenv("CAKE_DOCS");
    const char *given = flag ? flag : env;
    if (given) {
        snprintf(buf, cap, "%s", given);
        return has_tir_md(buf) ? buf : NULL;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = 0;
    static const char *const rel[] = {"../docs", "../share/cake/docs", "docs", "../../docs"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        snprintf(buf, cap, "%s/%s", exe, rel[i]);
        if (has_tir_md(buf))
            return buf;
    }
    return NULL;
}

static int heading_level(const char *line)
{
    int n = 0;
    while (line[n] == '#')
        n++;
    return n > 0 && line[n] == ' ' ? n : 0;
}

static int is_code(const char *t)
{
    if (strlen(t) != 5 || (toupper((unsigned char)t[0]) != 'E' && toupper((unsigned char)t[0]) != 'W'))
        return 0;
    for (int i = 1; i < 5; i++)
        if (!isdigit((unsigned char)t[i]))
            return 0;
    return 1;
}

/* the end of the section that starts at `start` (a heading of `level`) */
static const char *section_end(const char *start, int level)
{
    const char *p = strchr(start, '\n');
    while (p && p[1]) {
        p++;
        int l = heading_level(p);
        if (l && l <= level)
            return p;
        p = strchr(p, '\n');
    }
    return start + strlen(start);
}

static int heading_matches(const char *line, const char *topic, int code)
{
    const char *eol = strchr(line, '\n');
    size_t len = eol ? (size_t)(eol - line) : strlen(line);
    char h[512];
    snprintf(h, sizeof h, "%.*s", (int)(len < sizeof h - 1 ? len : sizeof h - 1), line);
    if (code) {
        const char *t = h + heading_level(h) + 1;
        return !strncasecmp(t, topic, 5) && !isdigit((unsigned char)t[5]);
    }
    return strcasestr(h, topic) != NULL;
}

/* the first heading matching the topic; else, the first section whose text
 * names it in backticks */
static const char *find_section(const char *text, const char *topic, int code)
{
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (heading_level(p) && heading_matches(p, topic, code))
            return p;
    if (code)
        return NULL;
    char *tick = ag_printf("`%s", topic);
    const char *hit = tick ? strcasestr(text, tick) : NULL;
    free(tick);
    if (!hit)
        return NULL;
    const char *best = NULL;
    for (const char *p = text; p && p < hit; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (heading_level(p) >= 2)
            best = p;
    return best;
}

cJSON *ag_docs_lookup(const char *docs_dir, const char *topic, size_t max_chars)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "command", "docs");
    cJSON_AddStringToObject(j, "topic", topic);
    int code = is_code(topic);
    static const char *const order_code[] = {"diagnostics.md", NULL};
    static const char *const order_word[] = {"tir.md", "diagnostics.md", "tirl.md", "checking.md",
                                             "agent.md", NULL};
    for (const char *const *f = code ? order_code : order_word; *f; f++) {
        char *path = ag_printf("%s/%s", docs_dir, *f);
        char *text = path ? ag_read_file(path, NULL) : NULL;
        const char *start = text ? find_section(text, topic, code) : NULL;
        if (start) {
            const char *end = section_end(start, heading_level(start));
            size_t len = (size_t)(end - start);
            int cut = max_chars && len > max_chars;
            const char *eol = strchr(start, '\n');
            char *heading = ag_printf("%.*s", (int)(eol ? eol - start : 80), start);
            char *body = ag_printf("%.*s%s", (int)(cut ? max_chars : len), start,
                                   cut ? "\n[... cut: ask for a narrower topic]\n" : "");
            cJSON_AddBoolToObject(j, "ok", 1);
            cJSON_AddStringToObject(j, "file", *f);
            cJSON_AddStringToObject(j, "heading", heading ? heading : "");
            cJSON_AddStringToObject(j, "text", body ? body : "");
            free(heading);
            free(body);
            free(text);
            free(path);
            return j;
        }
        free(text);
        free(path);
    }
    cJSON_AddBoolToObject(j, "ok", 0);
    cJSON_AddStringToObject(j, "error", code ? "no such diagnostic code in docs/diagnostics.md"
                                             : "no section of the docs names this topic");
    return j;
}
