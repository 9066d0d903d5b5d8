/* diagcheck.c — the golden diagnostics checker.
 *
 *   cake_diagcheck CAKEC FILE...
 *
 * For every FILE it runs `CAKEC check --json FILE` and `CAKEC check FILE`, and
 * compares what cakec reported with the expectations written in the file:
 *
 *   # expect error[E0201] at 12:9        an error with this code at line 12, column 9
 *   # expect warning[W0101] at 3:1       the same for a warning
 *   # expect note[E0822] at 43:1         the same for a diagnostic of severity note
 *   # expect note at 4:17                the diagnostic above carries a note there
 *   # expect help: did you mean `acc`    ... and says this (message, note, help or fix-it)
 *   # check-args: --set STAGES=9         more arguments for `check` (at most 6, split at spaces)
 *
 * A file with no expectations must check clean. The reported (severity, code,
 * line, col) multiset must equal the expected one; the exit code must be 1 when
 * an error is expected and 0 otherwise; stdout must be exactly one JSON
 * document; every span must be well formed; the text diagnostics on stderr must
 * name the same places (`FILE:L:C: error[CODE]:`). Prints a diff per failing
 * file and `N passed, N failed` at the end; exits 1 when any file failed.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cjson/cJSON.h>

typedef struct {
    char sev[16], code[16];
    int line, col;
    int has_note, note_line, note_col; /* at most one pinned note per expectation */
    char help[256];                    /* "" when no help is pinned */
    int matched;
} Expect;

typedef struct { char *data; size_t len; } Buf;

static int verbose;

static char *read_all(FILE *f, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *s = malloc(cap);
    size_t r;
    while (s && (r = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n < 2) {
            char *t = realloc(s, cap * 2);
            if (!t) {
                free(s);
                return NULL;
            }
            s = t;
            cap *= 2;
        }
    }
    if (s)
        s[n] = 0;
    if (len)
        *len = n;
    return s;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *s = read_all(f, NULL);
    fclose(f);
    return s;
}

enum { MAX_EXTRA = 6 };
static char extra_buf[256];
static char *extra[MAX_EXTRA + 1];   /* the file's `# check-args:`, NULL-terminated */

/* reads the `# check-args:` line of text into extra */
static void parse_extra(const char *text)
{
    int n = 0;
    const char *h = strstr(text, "# check-args:");
    extra_buf[0] = 0;
    if (h) {
        const char *eol = strchr(h, '\n');
        size_t len = eol ? (size_t)(eol - h - 13) : strlen(h + 13);
        snprintf(extra_buf, sizeof extra_buf, "%.*s", (int)len, h + 13);
        for (char *t = strtok(extra_buf, " \t\r"); t && n < MAX_EXTRA; t = strtok(NULL, " \t\r"))
            extra[n++] = t;
    }
    extra[n] = NULL;
}

/* runs `CAKEC a1 [a2] EXTRA... file`: stdout through a pipe, stderr into an
 * unlinked temp file (no deadlock whatever the sizes); returns the wait status */
static int run_capture(const char *cakec, const char *a1, const char *a2, const char *file,
                       Buf *out, Buf *err)
{
    int po[2];
    char tmpl[] = "/tmp/cake_diagcheck_XXXXXX";
    int te = mkstemp(tmpl);
    if (te < 0 || pipe(po))
        return -1;
    unlink(tmpl);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(po[1], 1);
        dup2(te, 2);
        close(po[0]);
        close(po[1]);
        close(te);
        char *argv[MAX_EXTRA + 5];
        int n = 0;
        argv[n++] = (char *)cakec;
        argv[n++] = (char *)a1;
        if (a2)
            argv[n++] = (char *)a2;
        for (int i = 0; extra[i]; i++)
            argv[n++] = extra[i];
        argv[n++] = (char *)file;
        argv[n] = NULL;
        execv(cakec, argv);
        _exit(127);
    }
    close(po[1]);
    FILE *fo = fdopen(po[0], "rb");
    out->data = read_all(fo, &out->len);
    fclose(fo);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    lseek(te, 0, SEEK_SET);
    FILE *fe = fdopen(te, "rb");
    err->data = read_all(fe, &err->len);
    fclose(fe);
    return status;
}

/* ---- expectations --------------------------------------------------- */

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* parses "L:C" */
static int parse_at(const char *p, int *line, int *col)
{
    p = skip_ws(p);
    if (strncmp(p, "at", 2) != 0)
        return 0;
    p = skip_ws(p + 2);
    char *e;
    long l = strtol(p, &e, 10);
    if (e == p || *e != ':')
        return 0;
    p = e + 1;
    long c = strtol(p, &e, 10);
    if (e == p || l < 1 || c < 1)
        return 0;
    *line = (int)l;
    *col = (int)c;
    return 1;
}

/* collects the `# expect` lines of text; returns -1 (and says why) on a malformed one */
static int parse_expects(const char *path, const char *text, Expect **out, int *n)
{
    int cap = 0, lineno = 0;
    *out = NULL;
    *n = 0;
    for (const char *l = text; *l; ) {
        const char *eol = strchr(l, '\n');
        size_t len = eol ? (size_t)(eol - l) : strlen(l);
        lineno++;
        char line[512];
        if (len >= sizeof line)
            len = sizeof line - 1;
        memcpy(line, l, len);
        line[len] = 0;
        while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
            line[--len] = 0;
        l = eol ? eol + 1 : l + strlen(l);
        char *h = strstr(line, "# expect");
        if (!h)
            continue;
        const char *p = skip_ws(h + 8);
        if (!strncmp(p, "error[", 6) || !strncmp(p, "warning[", 8) || !strncmp(p, "note[", 5)) {
            if (*n == cap) {
                cap = cap ? cap * 2 : 8;
                *out = realloc(*out, (size_t)cap * sizeof **out);
            }
            Expect *x = &(*out)[(*n)++];
            memset(x, 0, sizeof *x);
            const char *br = strchr(p, '['), *cl = strchr(p, ']');
            if (!cl || cl - br - 1 <= 0 || cl - br - 1 >= (long)sizeof x->code)
                goto bad;
            memcpy(x->sev, p, (size_t)(br - p));
            memcpy(x->code, br + 1, (size_t)(cl - br - 1));
            if (!parse_at(cl + 1, &x->line, &x->col))
                goto bad;
        } else if (!strncmp(p, "note", 4)) {
            if (!*n || (*out)[*n - 1].has_note)
                goto bad;
            Expect *x = &(*out)[*n - 1];
            if (!parse_at(p + 4, &x->note_line, &x->note_col))
                goto bad;
            x->has_note = 1;
        } else if (!strncmp(p, "help:", 5)) {
            if (!*n)
                goto bad;
            snprintf((*out)[*n - 1].help, sizeof (*out)[*n - 1].help, "%s", skip_ws(p + 5));
        } else {
            goto bad;
        }
        continue;
    bad:
        printf("FAIL %s\n  %d: malformed expectation: %s\n", path, lineno, h);
        return -1;
    }
    return 0;
}

/* ---- reported diagnostics ------------------------------------------- */

static int num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valueint : -1;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* does any string inside the JSON value v contain needle? */
static int json_contains(const cJSON *v, const char *needle)
{
    if (cJSON_IsString(v) && strstr(v->valuestring, needle))
        return 1;
    for (const cJSON *c = v ? v->child : NULL; c; c = c->next)
        if (json_contains(c, needle))
            return 1;
    return 0;
}

static int has_note_at(const cJSON *d, int line, int col)
{
    const cJSON *notes = cJSON_GetObjectItemCaseSensitive(d, "notes"), *n;
    cJSON_ArrayForEach(n, notes) {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(n, "span");
        if (num(s, "line") == line && num(s, "col") == col)
            return 1;
    }
    return 0;
}

/* is s a well-formed span object? */
static int span_ok(const cJSON *s)
{
    if (!cJSON_IsObject(s))
        return 0;
    int l = num(s, "line"), c = num(s, "col"), el = num(s, "end_line"), ec = num(s, "end_col");
    if (l < 1 || c < 1 || el < l || ec < 1)
        return 0;
    if (el == l && ec < c)
        return 0;
    return 1;
}

static int fails;
static const char *cur_path;

static void fail(const char *fmt, ...)
{
    if (!fails)
        printf("FAIL %s\n", cur_path);
    fails++;
    va_list ap;
    va_start(ap, fmt);
    fputs("  ", stdout);
    vprintf(fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
}

static void describe_status(int st, char *buf, size_t n)
{
    if (WIFSIGNALED(st))
        snprintf(buf, n, "killed by signal %d", WTERMSIG(st));
    else
        snprintf(buf, n, "exit %d", WEXITSTATUS(st));
}

/* checks one file; returns 1 when it passes */
static int check_file(const char *cakec, const char *path)
{
    cur_path = path;
    fails = 0;
    char *text = read_file(path);
    if (!text) {
        printf("FAIL %s\n  cannot read: %s\n", path, strerror(errno));
        return 0;
    }
    Expect *ex;
    int nex;
    parse_extra(text);
    if (parse_expects(path, text, &ex, &nex) < 0) {
        free(text);
        free(ex);
        return 0;
    }
    int want_errors = 0;
    for (int i = 0; i < nex; i++)
        want_errors |= !strcmp(ex[i].sev, "error");
    int want_exit = want_errors ? 1 : 0;

    Buf out = {0}, err = {0};
    int st = run_capture(cakec, "check", "--json", path, &out, &err);
    char sdesc[64];
    describe_status(st, sdesc, sizeof sdesc);
    if (st < 0) {
        fail("cannot run %s", cakec);
        goto done;
    }
    if (WIFSIGNALED(st) || WEXITSTATUS(st) != want_exit)
        fail("check --json: %s, expected exit %d", sdesc, want_exit);
    if (WIFSIGNALED(st) || (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 1)) {
        fail("stderr:\n%s", err.data ? err.data : "");
        goto done;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(out.data ? out.data : "", &end, 0);
    if (!root) {
        fail("stdout is not JSON (error near: %.40s)", end ? end : "");
        goto done;
    }
    end = end ? end : "";
    while (*end && isspace((unsigned char)*end))
        end++;
    if (*end)
        fail("stdout holds more than one JSON document (trailing: %.40s)", end);
    const cJSON *diags = cJSON_IsArray(root) ? root : cJSON_GetObjectItemCaseSensitive(root, "diagnostics");
    if (!cJSON_IsArray(diags)) {
        fail("JSON has no \"diagnostics\" array");
        cJSON_Delete(root);
        goto done;
    }

    /* match reported against expected */
    const cJSON *d;
    int nrep = cJSON_GetArraySize(diags);
    char *used = calloc((size_t)nrep + 1, 1);
    int idx = 0;
    cJSON_ArrayForEach(d, diags) {
        const cJSON *sp = cJSON_GetObjectItemCaseSensitive(d, "span");
        int line = num(sp, "line"), col = num(sp, "col");
        if (!span_ok(sp))
            fail("%s[%s]: malformed span (line %d col %d end %d:%d)", str(d, "severity"),
                 str(d, "code"), line, col, num(sp, "end_line"), num(sp, "end_col"));
        for (int i = 0; i < nex; i++) {
            Expect *x = &ex[i];
            if (!x->matched && !strcmp(x->sev, str(d, "severity")) && !strcmp(x->code, str(d, "code"))
                && x->line == line && x->col == col) {
                x->matched = 1;
                used[idx] = 1;
                if (x->has_note && !has_note_at(d, x->note_line, x->note_col))
                    fail("%s[%s] at %d:%d: no note at %d:%d", x->sev, x->code, line, col,
                         x->note_line, x->note_col);
                if (x->help[0] && !json_contains(d, x->help))
                    fail("%s[%s] at %d:%d: does not say \"%s\"", x->sev, x->code, line, col, x->help);
                break;
            }
        }
        idx++;
    }
    for (int i = 0; i < nex; i++)
        if (!ex[i].matched)
            fail("- %s[%s] at %d:%d   (expected, not reported)", ex[i].sev, ex[i].code, ex[i].line, ex[i].col);
    idx = 0;
    cJSON_ArrayForEach(d, diags) {
        if (!used[idx]) {
            const cJSON *sp = cJSON_GetObjectItemCaseSensitive(d, "span");
            fail("+ %s[%s] at %d:%d: %s   (reported, not expected)", str(d, "severity"), str(d, "code"),
                 num(sp, "line"), num(sp, "col"), str(d, "message"));
        }
        idx++;
    }
    free(used);

    /* the text rendering must name the same places and exit the same way */
    Buf tout = {0}, terr = {0};
    int tst = run_capture(cakec, "check", NULL, path, &tout, &terr);
    if (tst != st) {
        char tdesc[64];
        describe_status(tst, tdesc, sizeof tdesc);
        fail("check (text): %s, but check --json: %s", tdesc, sdesc);
    }
    cJSON_ArrayForEach(d, diags) {
        const cJSON *sp = cJSON_GetObjectItemCaseSensitive(d, "span");
        char want[1024];
        snprintf(want, sizeof want, "%s:%d:%d: %s[%s]: ", path, num(sp, "line"), num(sp, "col"),
                 str(d, "severity"), str(d, "code"));
        if (!terr.data || !strstr(terr.data, want))
            fail("text diagnostics lack \"%s\"", want);
    }
    if (fails && verbose)
        printf("  text output:\n%s", terr.data ? terr.data : "");
    free(tout.data);
    free(terr.data);
    cJSON_Delete(root);
done:
    free(out.data);
    free(err.data);
    free(text);
    free(ex);
    return fails == 0;
}

int main(int argc, char **argv)
{
    int a = 1;
    if (a < argc && !strcmp(argv[a], "-v")) {
        verbose = 1;
        a++;
    }
    if (argc - a < 1) {
        fprintf(stderr, "usage: cake_diagcheck [-v] CAKEC FILE...\n");
        return 2;
    }
    const char *cakec = argv[a++];
    if (access(cakec, X_OK) != 0) {
        fprintf(stderr, "cake_diagcheck: %s is not executable\n", cakec);
        return 2;
    }
    int passed = 0, failed = 0;
    for (; a < argc; a++) {
        if (check_file(cakec, argv[a]))
            passed++;
        else
            failed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
