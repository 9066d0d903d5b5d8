/* backend.h — what rt.c shares with the backends (cuda.c, hip.c); private to
 * runtime/.
 *
 * A backend is a table of operations (RtOps) over its own state (dev->be).
 * The operations are thin: one driver call or a few, each error turned into a
 * message with rt__fail. Everything the backends have in common — argument
 * checks, the broken-device state, waiting with a timeout, timing, L2 flush —
 * lives in rt.c and timing.c; the driver-neutral pieces of a backend itself
 * (loading the library, opening, reading attribute tables, the shape of an
 * error message) in backend_common.c.
 */
#ifndef CAKE_RT_BACKEND_H
#define CAKE_RT_BACKEND_H

#include "rt.h"

#define RT__PENDING ((RtStatus)-1) /* ops->query: work still running */

typedef enum { RT_H2D, RT_D2H, RT_D2D } RtCopyDir;

typedef struct {
    /* Loads the driver and opens device `ordinal`: fills dev->be and dev->info.
     * Leaves nothing to free on failure. */
    RtStatus (*open)(RtDevice *dev, int ordinal);
    /* Releases everything; with `hung`, makes no driver call (frees host
     * memory only). */
    void (*close)(RtDevice *dev, bool hung);
    RtStatus (*bind)(RtDevice *dev); /* make the device current on this thread */
    RtStatus (*module_load)(RtDevice *dev, const void *image, size_t len, void **mod,
                            char *log, size_t loglen);
    void (*module_unload)(RtDevice *dev, void *mod);
    RtStatus (*function)(RtDevice *dev, void *mod, const char *name, void **fn);
    RtStatus (*func_info)(RtDevice *dev, void *fn, RtFuncInfo *out);
    RtStatus (*func_set_shared)(RtDevice *dev, void *fn, unsigned bytes);
    RtStatus (*func_set_carveout)(RtDevice *dev, void *fn, int percent);   /* NULL: none */
    RtStatus (*alloc)(RtDevice *dev, size_t bytes, RtPtr *out);
    RtStatus (*free)(RtDevice *dev, RtPtr p);
    /* asynchronous on the device's stream: */
    RtStatus (*memset)(RtDevice *dev, RtPtr p, uint32_t value, size_t count, int width);
    /* device addresses come as (void *)(uintptr_t)RtPtr */
    RtStatus (*copy)(RtDevice *dev, RtCopyDir dir, void *dst, const void *src, size_t bytes);
    RtStatus (*launch)(RtDevice *dev, const RtLaunch *l, void *fn);
    /* RT_OK when the stream is idle, RT__PENDING while it runs, else the error
     * (RT_FAULT for a sticky kernel fault) with its message in dev->err. */
    RtStatus (*query)(RtDevice *dev);
    RtStatus (*event_create)(RtDevice *dev, void **ev);
    void (*event_destroy)(RtDevice *dev, void *ev);
    RtStatus (*event_record)(RtDevice *dev, void *ev);
    RtStatus (*event_query)(RtDevice *dev, void *ev); /* like query, for one event */
    RtStatus (*event_elapsed)(RtDevice *dev, void *start, void *stop, float *ms);
    RtStatus (*tma_encode)(RtDevice *dev, const RtTmaDesc *d, RtTensorMap *out);
    /* A gate for timing: a word of pinned host memory the device can read;
     * wait_value queues "block the stream until the word >= value". */
    RtStatus (*gate_create)(RtDevice *dev, volatile uint32_t **host, RtPtr *dptr);
    void (*gate_free)(RtDevice *dev, volatile uint32_t *host);
    RtStatus (*wait_value)(RtDevice *dev, RtPtr dptr, uint32_t value);
    /* queues a one-thread kernel that spins ns nanoseconds (NULL: none) */
    RtStatus (*spin)(RtDevice *dev, uint64_t ns);
} RtOps;

struct RtDevice {
    const RtOps *ops;
    void *be;              /* the backend's state */
    RtDeviceInfo info;
    double timeout_s;
    RtStatus health;       /* RT_OK, or RT_FAULT / RT_TIMEOUT once broken */
    char kernel[128];      /* the last kernel launched and not yet waited for */
    int pending;           /* kernels launched since the last completed wait */
    RtPtr flush;           /* L2 flush buffer, allocated on first use */
    size_t flush_bytes;
    char err[2048];
};

struct RtFunction {
    RtModule *mod;
    void *handle;
    RtFunction *next;
    char name[];
};

struct RtModule {
    RtDevice *dev;
    void *handle;
    RtFunction *funcs;
    char *jitlog; /* the JIT's info log, or NULL */
};

#define RT__LOG_BYTES (1 << 17) /* the log buffer module_load writes into */

/* Reads "N bytes stack frame, N bytes spill stores, N bytes spill loads" for
 * function `name` from a JIT info log into out[0..3); false if absent. */
bool rt__jit_spills(const char *log, const char *name, int out[3]);

extern const RtOps rt__cuda_ops;
extern const RtOps rt__hip_ops;

/* Formats dev->err and returns st. With RT_FAULT it also breaks the device
 * and names the kernel last launched in the message. */
RtStatus rt__fail(RtDevice *dev, RtStatus st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Copies at most n-1 bytes of src into dst and NUL-terminates it (n > 0). */
void rt__copystr(char *dst, size_t n, const char *src);
/* Enters a public call: RT_OK if the device is healthy and bound. */
RtStatus rt__enter(RtDevice *dev);
/* Waits for the stream with the timeout; names dev->kernel in messages. */
RtStatus rt__sync(RtDevice *dev);
/* The same for one event (NULL: the stream), without forgetting the
 * kernels launched after it. */
RtStatus rt__wait_event(RtDevice *dev, void *ev);
/* Seconds on a monotonic clock. */
double rt__now(void);

/* A launch dimension of 0 means 1. */
static inline unsigned rt__dim1(unsigned v) { return v ? v : 1; }

/* ---- backend_common.c: what cuda.c and hip.c share ---------------------- */

/* The first member of a backend's state (dev->be): the driver library. */
typedef struct {
    void *lib;
    const char *libname;
    bool inited; /* the driver was initialised: the library stays loaded */
} RtLib;

/* One entry point: stored at byte `off` of the backend's table of function
 * pointers. */
typedef struct {
    size_t off;
    const char *name, *alt; /* alt: an older name, for older drivers; or NULL */
    bool optional;          /* absent: NULL instead of an error */
} RtSym;

typedef struct {
    const char *what;     /* "CUDA driver": for messages */
    const char *env;      /* a variable that names the one library to try */
    const char *names[4]; /* else these, in order, NULL-terminated */
    const char *too_old;  /* appended to "has no <symbol>" */
    const RtSym *syms;
    size_t nsyms;
} RtLibSpec;

/* dlopens the first library of spec that loads and resolves its symbols
 * into api; RT_NO_DEVICE with a message if either fails. */
RtStatus rt__load_lib(RtDevice *dev, RtLib *lib, const RtLibSpec *spec, void *api);

typedef RtStatus (*RtOpenStep)(RtDevice *dev, int ordinal);
/* ops->open's skeleton: allocates dev->be (state_bytes, zeroed, an RtLib
 * first), runs the steps in order and, when one fails, ops->close(dev, false).
 * On success derives what the backend-neutral info needs (peak_gbps). */
RtStatus rt__open_steps(RtDevice *dev, int ordinal, size_t state_bytes,
                        const RtOpenStep *steps, size_t nsteps);
/* ops->close's tail: unloads a library whose driver never started and frees
 * dev->be. */
void rt__free_state(RtDevice *dev);

/* An attribute read into an int or size_t field at byte `off` of a struct. */
typedef struct {
    int attr;      /* the driver's enum value */
    size_t off;
    bool wide;     /* a size_t field */
    bool optional; /* passed to the getter */
} RtAttr;
#define RT__ATTR(type, a, field, opt)                                                  \
    {(int)(a), offsetof(type, field),                                                  \
     _Generic(((type *)0)->field, size_t: true, default: false), opt}

/* Reads one attribute of obj (NULL: the device). */
typedef RtStatus (*RtAttrGet)(RtDevice *dev, void *obj, int attr, bool optional, int *out);
/* Reads each attribute of tab, in order, into base; stops at the first error. */
RtStatus rt__read_attrs(RtDevice *dev, RtAttrGet get, void *obj, const RtAttr *tab, size_t n,
                        void *base);

/* "what: name (text)" as dev->err, via rt__fail; what and text may be NULL;
 * with no name, "<kind> <code>" (e.g. "CUresult 999"). */
RtStatus rt__fail_driver(RtDevice *dev, RtStatus st, const char *what, const char *name,
                         const char *text, const char *kind, int code);
/* RT_OOM for an allocation of `bytes`, with the device's free and total bytes. */
RtStatus rt__fail_oom(RtDevice *dev, size_t bytes, size_t freeb, size_t total);

#endif
