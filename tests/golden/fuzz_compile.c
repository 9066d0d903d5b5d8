/* fuzz_compile.c — cake_fuzz_compile: the compile-mode fuzzer. Mutants of the
 * examples that `cakec check` accepts must compile: each goes through what
 * `cakec FILE --emit ptx` does (cake_compile_module for every kernel, on its
 * first NVIDIA target) and, where ptxas is given, through ptxas. A signal, an
 * internal error (exit 2) or a ptxas rejection is a failure; a diagnostic (E0902
 * for what has no lowering yet, any user error) is not.
 *
 *   cake_fuzz_compile [--seconds S | --count N] [--seed X] [--ptxas PATH]
 *                     [--out DIR] [--progress EVERY] [--ptxas-every N] FILE...
 *
 * Mutations (1 or 2 per mutant, seeded): an integer literal replaced by an
 * interesting value, an operator by another of its class, a dtype by another,
 * an identifier by another of the file's, a line deleted, duplicated or moved
 * down one. Each mutant runs in a forked child, so a crash is counted (and its
 * input kept in DIR as crash-N.tir) and the campaign goes on; internal errors
 * and ptxas rejections are kept as bug-N.tir / ptxas-N.tir; a compile over a minute
 * of CPU time (SIGXCPU; on a loaded machine wall time says little) or ten minutes of
 * wall time (SIGALRM) is counted apart and kept as slow-N.tir. ptxas runs once per
 * distinct PTX text (on every Nth one with --ptxas-every N: ptxas costs more
 * than the rest of a mutant); a mutant drawn again is skipped. Prints the counts and the share that reached PTX; exit 1
 * when anything failed. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cake.h"

enum { R_REJECTED = 10, R_NO_PTX = 11, R_PTX = 12, R_BUG = 13 };

typedef struct { char *text; size_t len; const char *path; } Src;

static uint64_t rng(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* 1 in a build with AddressSanitizer, where an address-space limit fails every mmap */
static int sanitized(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return 1;
#else
    return 0;
#endif
#else
    return 0;
#endif
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(b);
        return NULL;
    }
    fclose(f);
    b[n] = 0;
    *len = (size_t)n;
    return b;
}

/* ---- mutations on the text ------------------------------------------------- */

typedef struct { char *s; size_t n, cap; } Buf;

static void put(Buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->s = realloc(b->s, b->cap);
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}

static int is_id(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (c >= '0' && c <= '9'); }

/* the [start, end) spans of the tokens of one kind in t (kind 0 integers, 1
 * operators, 2 identifiers), outside comments */
static size_t spans(const char *t, size_t n, int kind, size_t *lo, size_t *hi, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k < cap;) {
        if (t[i] == '#') {
            while (i < n && t[i] != '\n')
                i++;
            continue;
        }
        if (is_id(t[i])) {
            size_t j = i;
            while (j < n && (is_id(t[j]) || t[j] == '.'))
                j++;
            int num = t[i] >= '0' && t[i] <= '9';
            if ((kind == 0 && num) || (kind == 2 && !num)) {
                lo[k] = i;
                hi[k++] = j;
            }
            i = j;
            continue;
        }
        if (kind == 1 && strchr("+-*/%<>", t[i])) {
            lo[k] = i;
            hi[k++] = i + 1 + (t[i + 1] == '=');
        }
        i++;
    }
    return k;
}

static const char *const nums[] = {"0", "1", "2", "3", "4", "7", "8", "16", "31", "32", "33", "63", "64",
                                   "65", "96", "100", "127", "128", "129", "192", "255", "256", "512",
                                   "1024", "4096", "65536"};
static const char *const ops[] = {"+", "-", "*", "/", "%", "<", "<=", ">", ">="};
static const char *const dtypes[] = {"f32", "f16", "bf16", "e4m3", "e5m2", "i32", "u32", "i8", "f64", "tf32"};

static int is_dtype(const char *t, size_t a, size_t b)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
        if (strlen(dtypes[i]) == b - a && !memcmp(t + a, dtypes[i], b - a))
            return 1;
    return 0;
}

/* one mutation of src into out */
static void mutate(const char *t, size_t n, uint64_t *st, Buf *out)
{
    static size_t lo[1 << 16], hi[1 << 16];
    out->n = 0;
    int kind = (int)(rng(st) % 7);
    if (kind <= 3) { /* 0 number, 1 operator, 2 identifier, 3 dtype */
        size_t k = spans(t, n, kind == 3 ? 2 : kind, lo, hi, sizeof lo / sizeof *lo);
        if (kind == 3) { /* keep the dtypes only */
            size_t w = 0;
            for (size_t i = 0; i < k; i++)
                if (is_dtype(t, lo[i], hi[i])) {
                    lo[w] = lo[i];
                    hi[w++] = hi[i];
                }
            k = w;
        }
        if (!k) {
            put(out, t, n);
            return;
        }
        size_t i = rng(st) % k;
        char rep[64];
        if (kind == 0)
            snprintf(rep, sizeof rep, "%s", nums[rng(st) % (sizeof nums / sizeof *nums)]);
        else if (kind == 1)
            snprintf(rep, sizeof rep, "%s", ops[rng(st) % (sizeof ops / sizeof *ops)]);
        else if (kind == 3)
            snprintf(rep, sizeof rep, "%s", dtypes[rng(st) % (sizeof dtypes / sizeof *dtypes)]);
        else {
            size_t j = rng(st) % k, len = hi[j] - lo[j];
            snprintf(rep, sizeof rep, "%.*s", (int)(len < 63 ? len : 63), t + lo[j]);
        }
        put(out, t, lo[i]);
        put(out, rep, strlen(rep));
        put(out, t + hi[i], n - hi[i]);
        return;
    }
    /* lines: 4 delete, 5 duplicate, 6 move down one */
    size_t nl = 0;
    static size_t ls[1 << 14];
    ls[nl++] = 0;
    for (size_t i = 0; i < n && nl < (1 << 14) - 1; i++)
        if (t[i] == '\n')
            ls[nl++] = i + 1;
    ls[nl] = n;
    size_t l = rng(st) % nl, a = ls[l], b = l + 1 <= nl ? ls[l + 1] : n;
    if (kind == 4) {
        put(out, t, a);
        put(out, t + b, n - b);
    } else if (kind == 5) {
        put(out, t, b);
        put(out, t + a, b - a);
        put(out, t + b, n - b);
    } else {
        size_t c = l + 2 <= nl ? ls[l + 2] : n;
        put(out, t, a);
        put(out, t + b, c - b);
        put(out, t + a, b - a);
        put(out, t + c, n - c);
    }
}

/* ---- one mutant, in a child --------------------------------------------------- */

static Target nvidia_target(const Kernel *k)
{
    if (k->targets[TG_SM90A])
        return TG_SM90A;
    if (k->targets[TG_SM80])
        return TG_SM80;
    for (int t = 0; t < TG__COUNT; t++)
        if (k->targets[t])
            return TG__COUNT; /* AMD or sm_100a only */
    return TG_SM90A;      /* no target clause: cakec's default */
}

/* check, then compile every kernel; PTX concatenated into ptx_path */
static int compile_one(const char *text, size_t len, const char *ptx_path)
{
    CakeCtx *ctx = ctx_new();
    uint32_t file = ctx_add_file(ctx, "mutant.tir", text, (uint32_t)len);
    Module *m;
    int rc = cake_verify_source(ctx, file, NULL, &m);
    if (rc == 2)
        return R_BUG;
    if (rc || ctx->nerrors || !m || !m->nkernels)
        return R_REJECTED;
    uint32_t nk = m->nkernels;
    const char *names[16];
    Target tgs[16];
    for (uint32_t i = 0; i < nk && i < 16; i++) {
        names[i] = ir_symstr(ctx, m->kernels[i]->name);
        tgs[i] = nvidia_target(m->kernels[i]);
    }
    int any = 0;
    FILE *out = fopen(ptx_path, "w");
    for (uint32_t i = 0; i < nk && i < 16; i++) {
        if (tgs[i] == TG__COUNT)
            continue;
        CakeCtx *c2 = ctx_new(); /* a fresh parse per kernel: compiling lowers the module */
        uint32_t f2 = ctx_add_file(c2, "mutant.tir", text, (uint32_t)len);
        Module *m2;
        CakeKernel ck;
        memset(&ck, 0, sizeof ck);
        int r = cake_verify_source(c2, f2, NULL, &m2);
        if (r == 0)
            r = cake_compile_module(c2, m2, names[i], tgs[i], NULL, &ck);
        if (r == 2) {
            fclose(out);
            return R_BUG;
        }
        if (r == 0 && ck.image && out) {
            fwrite(ck.image, 1, ck.len, out);
            fputc('\n', out);
            any = 1;
        }
        free(ck.image);
        ctx_free(c2);
    }
    if (out)
        fclose(out);
    ctx_free(ctx);
    return any ? R_PTX : R_NO_PTX;
}

static uint64_t hash(const char *s, size_t n)
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * UINT64_C(1099511628211);
    return h;
}

static int seen(uint64_t *set, size_t cap, uint64_t h)
{
    size_t i = h % cap;
    while (set[i]) {
        if (set[i] == h)
            return 1;
        i = (i + 1) % cap;
    }
    set[i] = h;
    return 0;
}

/* ptxas on each PTX module of the file (split at `.version`): 1 accepted */
static int run_ptxas(const char *ptxas, const char *ptx_path, const char *dir)
{
    size_t n;
    char *p = slurp(ptx_path, &n);
    if (!p)
        return 1;
    int ok = 1;
    char *at = strstr(p, ".version");
    while (at && ok) {
        char *next = strstr(at + 8, ".version");
        size_t len = next ? (size_t)(next - at) : strlen(at);
        const char *arch = strstr(at, "sm_90a") && (!next || strstr(at, "sm_90a") < next) ? "sm_90a" : "sm_80";
        char one[512], cmd[1400];
        snprintf(one, sizeof one, "%s/one.ptx", dir);
        FILE *f = fopen(one, "w");
        if (f) {
            fwrite(at, 1, len, f);
            fclose(f);
            /* bounded: a huge mutant (a 4096-way unroll) can keep ptxas for an hour in 6 GB */
            snprintf(cmd, sizeof cmd, "ulimit -v 4000000; timeout 120 %s -arch=%s %s -o /dev/null > %s/ptxas.log 2>&1",
                     ptxas, arch, one, dir);
            int rc = system(cmd);
            ok = rc == 0 || (WIFEXITED(rc) && WEXITSTATUS(rc) == 124); /* a timeout: not a rejection */
        }
        at = next;
    }
    free(p);
    return ok;
}

static void keep(const char *dir, const char *what, unsigned long id, const char *t, size_t n)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s-%lu.tir", dir, what, id);
    FILE *f = fopen(path, "w");
    if (f) {
        fwrite(t, 1, n, f);
        fclose(f);
    }
}

int main(int argc, char **argv)
{
    double seconds = 0;
    unsigned long count = 0, progress = 0, ptxas_every = 1;
    int keep_noptx = 0;
    uint64_t seed = 1;
    const char *ptxas = NULL, *dir = "fuzz-compile";
    Src src[64];
    int nsrc = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--count") && i + 1 < argc)
            count = strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--keep-noptx"))
            keep_noptx = 1; /* the mutants check accepts and code generation refuses: rules for check? */
        else if (!strcmp(argv[i], "--ptxas-every") && i + 1 < argc)
            ptxas_every = strtoul(argv[++i], NULL, 0) ? strtoul(argv[i], NULL, 0) : 1;
        else if (!strcmp(argv[i], "--progress") && i + 1 < argc)
            progress = strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--ptxas") && i + 1 < argc)
            ptxas = argv[++i];
        else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            dir = argv[++i];
        else if (nsrc < 64 && (src[nsrc].text = slurp(argv[i], &src[nsrc].len)))
            src[nsrc++].path = argv[i];
    }
    if (!nsrc || (seconds <= 0 && !count)) {
        fprintf(stderr, "usage: cake_fuzz_compile [--seconds S | --count N] [--seed X] [--ptxas PATH] "
                        "[--out DIR] FILE...\n");
        return 2;
    }
    if (ptxas && !*ptxas)
        ptxas = NULL;
    mkdir(dir, 0777);
    char ptx_path[600];
    snprintf(ptx_path, sizeof ptx_path, "%s/mutant.ptx", dir);
    compile_one(src[0].text, src[0].len, ptx_path); /* loads the code generator once, before the forks */
    size_t hcap = 1 << 20;
    uint64_t *hs = calloc(hcap, sizeof *hs);
    unsigned long n = 0, rejected = 0, noptx = 0, ptx = 0, assembled = 0, crashes = 0, bugs = 0, ptxfail = 0;
    unsigned long huge = 0, timeouts = 0, distinct = 0;
    time_t t0 = time(NULL);
    Buf a = {0}, b = {0};
    while ((count && n < count) || (!count && difftime(time(NULL), t0) < seconds)) {
        const Src *s = &src[rng(&seed) % (uint64_t)nsrc];
        mutate(s->text, s->len, &seed, &a);
        const Buf *m = &a;
        if (rng(&seed) % 3 == 0) {
            mutate(a.s, a.n, &seed, &b);
            m = &b;
        }
        if (seen(hs, hcap, hash(m->s, m->n) ^ UINT64_C(0x5eed))) /* the same mutant again */
            continue;
        n++;
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            if (!sanitized()) { /* ASan reserves terabytes of shadow address space */
                struct rlimit mem = {(rlim_t)4 << 30, (rlim_t)4 << 30}; /* a shared machine: 4 GB at most */
                setrlimit(RLIMIT_AS, &mem);
            }
            struct rlimit cpu = {60, 61}; /* a minute of CPU time: SIGXCPU */
            setrlimit(RLIMIT_CPU, &cpu);
            alarm(600);
            _exit(compile_one(m->s, m->n, ptx_path));
        }
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        if (progress && n % progress == 0)
            printf("fuzz_compile: %lu mutants, %lu reached PTX, %lu failures, %.0f s\n", n, ptx,
                   crashes + bugs + ptxfail, difftime(time(NULL), t0));
        if (rc == R_REJECTED) {
            rejected++;
        } else if (rc == R_NO_PTX) {
            noptx++;
            if (keep_noptx)
                keep(dir, "noptx", n, m->s, m->n);
        } else if (rc == R_PTX) {
            ptx++;
            size_t pn;
            char *p = ptxas ? slurp(ptx_path, &pn) : NULL;
            if (p && pn > ((size_t)1 << 20)) { /* more than 1 MB of PTX: not assembled, counted */
                huge++;
            } else if (p && !seen(hs, hcap, hash(p, pn)) && distinct++ % ptxas_every == 0) {
                if (run_ptxas(ptxas, ptx_path, dir)) {
                    assembled++;
                } else {
                    ptxfail++;
                    keep(dir, "ptxas", n, m->s, m->n);
                    fprintf(stderr, "ptxas rejected mutant %lu of %s (kept in %s)\n", n, s->path, dir);
                }
            }
            free(p);
        } else if (rc == R_BUG) {
            bugs++;
            keep(dir, "bug", n, m->s, m->n);
            fprintf(stderr, "internal error on mutant %lu of %s (kept in %s)\n", n, s->path, dir);
        } else if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGALRM)) {
            timeouts++; /* compiling took more than a minute of CPU: kept, counted apart */
            keep(dir, "slow", n, m->s, m->n);
        } else {
            crashes++;
            keep(dir, "crash", n, m->s, m->n);
            fprintf(stderr, "mutant %lu of %s: %s %d (kept in %s)\n", n, s->path,
                    WIFSIGNALED(status) ? "signal" : "exit", WIFSIGNALED(status) ? WTERMSIG(status) : rc, dir);
        }
    }
    printf("fuzz_compile: %lu mutants in %.0f s: %lu rejected by check, %lu accepted without PTX "
           "(a diagnostic), %lu reached PTX (%.1f%%), %lu distinct PTX assembled by ptxas%s (%lu over 1 MB "
           "not assembled); %lu compiles over a minute of CPU; failures: %lu crashes, %lu internal errors, %lu ptxas "
           "rejections\n",
           n, difftime(time(NULL), t0), rejected, noptx, ptx, n ? 100.0 * (double)ptx / (double)n : 0.0,
           assembled, ptxas ? "" : " (no ptxas)", huge, timeouts, crashes, bugs, ptxfail);
    free(hs);
    free(a.s);
    free(b.s);
    for (int i = 0; i < nsrc; i++)
        free(src[i].text);
    return crashes || bugs || ptxfail ? 1 : 0;
}
