/* rt.h — the device runtime of cakec: one small C interface over the CUDA
 * Driver API and the HIP runtime.
 *
 * Both drivers are loaded with dlopen when a device is opened, so cakec has no
 * link-time dependency on libcuda or libamdhip64 and runs (and says why it
 * cannot run kernels) on machines with neither. Everything here takes an
 * explicit RtDevice; there is no global state. An RtDevice is not thread-safe:
 * use it from one thread at a time (any thread; the context is re-bound on each
 * call).
 *
 * Errors. Every call returns an RtStatus; on anything but RT_OK, rt_error(dev)
 * holds one line of text saying what failed and what the driver said, e.g.
 *   "kernel 'vadd' faulted: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory
 *    access was encountered)".
 * cakec maps RT_INVALID to exit 2 (it should have verified the request) and
 * every other failure to exit 3.
 *
 * Ordering. One stream per device. rt_launch is asynchronous; rt_wait,
 * rt_run, the copies and the memsets return only when the device is done (or
 * the timeout passed), so a host buffer may be read or reused right after.
 *
 * Faults and hangs. A kernel that faults leaves the device unusable: every
 * later call returns RT_FAULT with the same message, and rt_close is safe.
 * CUDA's faults are sticky for the whole process (a fresh rt_open fails too:
 * "the process must be terminated and relaunched"), so a program that must
 * survive a bad kernel, like the agent loop, runs candidates in a child
 * process. On HIP, the HSA runtime aborts the process on a GPU memory fault.
 * A kernel that runs past the timeout (default 10 s, rt_set_timeout) gives
 * RT_TIMEOUT; the device is then "hung": a hung context cannot be destroyed
 * (that would wait for the kernel forever), so every later call returns
 * RT_TIMEOUT at once, rt_close frees host memory only, and the caller must
 * end the process without waiting: rt_exit_now(code).
 *
 * Environment: CAKE_LIBCUDA / CAKE_LIBHIP, when set, name the driver library
 * to dlopen instead of libcuda.so.1 / libamdhip64.so.
 */
#ifndef CAKE_RT_H
#define CAKE_RT_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    RT_OK,
    RT_NO_DEVICE,    /* no driver library, no GPU, or the driver refused to start */
    RT_LOAD_ERROR,   /* module image rejected (JIT error, wrong arch, bad image) */
    RT_LAUNCH_ERROR, /* launch refused (too many threads/registers/shared bytes) */
    RT_FAULT,        /* a kernel faulted; the device (on CUDA, the process) is unusable */
    RT_TIMEOUT,      /* the kernel ran past the timeout; exit without waiting */
    RT_OOM,          /* out of device memory */
    RT_INVALID,      /* the caller's request is wrong (bad TMA box, missing name) */
    RT_UNSUPPORTED,  /* this backend or driver cannot do that (TMA on HIP) */
    RT_ERROR         /* any other driver error */
} RtStatus;

typedef enum { RT_AUTO, RT_CUDA, RT_HIP } RtBackend;

typedef uint64_t RtPtr; /* a device address; kernels take its address as a parameter */

typedef struct RtDevice RtDevice;
typedef struct RtModule RtModule;
typedef struct RtFunction RtFunction;

const char *rt_status_name(RtStatus s); /* "RT_OK", "RT_FAULT", ... */
const char *rt_backend_name(RtBackend b); /* "auto", "cuda", "hip" */

/* ---- devices ---------------------------------------------------------- */

typedef struct {
    RtBackend backend;
    char name[256];             /* "NVIDIA H200" */
    char arch[64];              /* "sm_90" or "gfx942" (features stripped) */
    int cc_major, cc_minor;     /* compute capability (HIP: what HIP reports) */
    int sm_count;               /* SMs, or compute units */
    int warp_size;
    int max_threads_per_block;
    int regs_per_sm;
    size_t l2_bytes;
    size_t shared_per_block;       /* without opt-in */
    size_t shared_per_block_optin; /* with rt_func_set_shared */
    size_t shared_per_sm;
    size_t global_bytes;
    int clock_khz, mem_clock_khz, mem_bus_bits;
    double peak_gbps;           /* 2 * mem clock * bus width: a hint, not a measurement */
    int driver_version;         /* CUDA: 13000 for 13.0; HIP: hipDriverGetVersion */
    int pci_domain, pci_bus, pci_device;   /* where it sits (CUDA; 0 on HIP) */
} RtDeviceInfo;

/* The device's PCI address "DDDDDDDD:BB:DD.0" (NVML's form) into buf; a
 * device stays the same device under any CUDA_VISIBLE_DEVICES. */
void rt_pci_bus_id(const RtDevice *dev, char *buf, size_t cap);

/* The SM clock now, in MHz, read through NVML (libnvidia-ml.so.1, dlopen'd
 * by rt_clock_open; clock.c): 0 where there is no NVML, the device is not
 * NVIDIA or NVML does not know it. A timing records it before and after its
 * runs (a clock that dropped between the two says the GPU throttled). */
/* How many CUDA devices the driver sees (under this process's
 * CUDA_VISIBLE_DEVICES), without creating a context: cuInit and
 * cuDeviceGetCount through libcuda.so.1 (or $CAKE_LIBCUDA); 0 without a
 * driver or a GPU. The tuners spread their workers over them. */
int rt_gpu_count(void);

typedef struct RtClock RtClock;
RtClock *rt_clock_open(const RtDevice *dev);   /* NULL when there is no NVML */
int rt_clock_sm_mhz(RtClock *c);               /* NULL is fine: 0 */
void rt_clock_close(RtClock *c);               /* NULL is fine */

/* Opens device `ordinal` of the given backend (RT_AUTO: CUDA, then HIP). On
 * failure *out is NULL and err holds why, e.g. "no CUDA driver: libcuda.so.1
 * not found"; the status is RT_NO_DEVICE when there is simply no usable GPU. */
RtStatus rt_open(RtBackend which, int ordinal, RtDevice **out, char *err, size_t errlen);
/* Frees the device (unload its modules first). NULL is fine; see "Faults and
 * hangs" above. */
void rt_close(RtDevice *dev);
const RtDeviceInfo *rt_info(const RtDevice *dev);
const char *rt_error(const RtDevice *dev); /* the last failure's message, "" if none */
RtStatus rt_health(const RtDevice *dev);   /* RT_OK, or RT_FAULT / RT_TIMEOUT once broken */

void rt_set_timeout(RtDevice *dev, double seconds); /* <= 0: wait forever; default 10 */
double rt_timeout(const RtDevice *dev);

/* Flushes stdout and stderr and ends the process at once, skipping atexit
 * handlers and driver teardown: what to do after RT_TIMEOUT. */
_Noreturn void rt_exit_now(int code);

/* ---- modules and functions -------------------------------------------- */

/* Loads a module image: PTX text (NUL-terminated, or len bytes), a cubin or
 * fatbin (CUDA), or an AMDGPU code object (HIP); the kind is detected from the
 * bytes (len may be 0 for NUL-terminated text). PTX is JIT-compiled by the
 * driver: on RT_LOAD_ERROR `log` holds the JIT's error log (read it with
 * rt_jit_log_next); on success it holds the JIT's verbose info log (ptxas-style
 * "Used N registers, M bytes spill stores" lines, also read into
 * rt_func_info). log may be NULL. */
RtStatus rt_module_load(RtDevice *dev, const void *image, size_t len, RtModule **out,
                        char *log, size_t loglen);
void rt_module_unload(RtModule *mod); /* also frees its RtFunctions; NULL is fine */

/* Looks up a kernel by its (mangled) name; RT_INVALID if there is none. The
 * RtFunction lives as long as its module. */
RtStatus rt_function(RtModule *mod, const char *name, RtFunction **out);
const char *rt_function_name(const RtFunction *fn);

typedef struct {
    int regs;                 /* registers per thread */
    int local_bytes;          /* local memory per thread: spills and local arrays */
    int static_shared_bytes;
    int const_bytes;
    int max_threads;          /* most threads per block this function can launch with */
    int max_dyn_shared_bytes; /* current dynamic shared limit (rt_func_set_shared) */
    int ptx_version;          /* virtual arch of the PTX, e.g. 80 for .target sm_80; 0 on HIP */
    int binary_version;       /* e.g. 90 for sm_90 SASS; 0 on HIP */
    /* From the JIT's info log, for modules loaded from PTX; -1 when unknown
     * (cubin, HIP, or the driver's JIT cache served the module and logged
     * nothing; CUDA_CACHE_DISABLE=1 turns that cache off): */
    int spill_store_bytes, spill_load_bytes, stack_bytes;
} RtFuncInfo;

RtStatus rt_func_info(RtFunction *fn, RtFuncInfo *out);
/* Allows launches with up to `bytes` of dynamic shared memory (CUDA's
 * MAX_DYNAMIC_SHARED_SIZE_BYTES; needed above 48 KiB). */
RtStatus rt_func_set_shared(RtFunction *fn, unsigned bytes);
/* The kernel's preferred shared-memory carve-out, percent of the unified L1 and
 * shared memory (CUDA's PREFERRED_SHARED_MEMORY_CARVEOUT; -1: the driver's
 * default); RT_UNSUPPORTED on a backend without one. */
RtStatus rt_func_set_carveout(RtFunction *fn, int percent);

/* One message of a JIT log: "ptxas application ptx input, line 12; error   :
 * Unknown symbol 'x'". line is 0 when the message names none. */
typedef struct {
    int line;
    bool error;       /* false: warning or info */
    const char *text; /* the message after "error   : ", not NUL-terminated */
    int len;
} RtJitMsg;

/* Iterates the error and warning messages of a JIT log: start with *cursor =
 * log; returns false when there are no more. Lines that are neither are
 * skipped. */
bool rt_jit_log_next(const char **cursor, RtJitMsg *out);

/* PTX to a cubin for `arch` ("sm_90a") in process, through libnvJitLink
 * (dlopen'd once by rt_jitlink_open, nvjitlink.c; NULL when there is none).
 * *out is malloc'd; RT_UNSUPPORTED without a linker, RT_LOAD_ERROR with its
 * error log in `log` when it refuses. */
typedef struct RtJitLinker RtJitLinker;
RtJitLinker *rt_jitlink_open(void);
void *rt_nvjitlink_dlopen(void);         /* the library itself (dlclose it), NULL without */
void rt_jitlink_close(RtJitLinker *l);   /* NULL is fine */
RtStatus rt_jitlink_ptx(RtJitLinker *l, const char *arch, const char *ptx, size_t len, void **out,
                        size_t *out_len, char *log, size_t loglen);
/* Separate compilation, which nvJitLink does, ignores `setmaxnreg` (ptxas info
 * C7504) and serializes every wgmma.mma_async (C7509). So PTX that holds either
 * is assembled whole by the ptxas program instead (cached like a link), as the
 * driver's JIT would; without ptxas, rt_jitlink_ptx refuses it (RT_UNSUPPORTED,
 * the reason in `log`) and the caller keeps the PTX for the driver's JIT. On
 * success `log` names the assembler ("nvJitLink" or "ptxas"). */
int rt_ptx_needs_whole_program(const char *ptx, size_t len);
/* ptxas as a program ($CAKE_PTXAS, PATH, /usr/local/cuda/bin; ptxinfo.c):
 * rt_ptxas_id writes what identifies it (path, size, time) for a cache key and
 * returns 0 without one; rt_ptxas_cubin assembles ptx whole for arch, the cubin
 * malloc'd, NULL when there is no ptxas or it refuses. */
int rt_ptxas_id(char *buf, size_t cap);
void *rt_ptxas_cubin(const char *ptx, size_t len, const char *arch, size_t *cubin_len);
/* ---- resources without a device (ptxinfo.c) ----------------------------- */

/* One kernel's resources as the PTX assembler reports them. */
typedef struct {
    char name[128];
    int regs;                 /* registers per thread */
    int stack_bytes;          /* the stack frame: local memory per thread */
    int spill_store_bytes, spill_load_bytes;
    int separate;             /* nvJitLink compiled it as a separate unit: setmaxnreg ignored */
} RtPtxRes;

/* Assembles PTX text (len bytes) for arch ("sm_90a") with the ptxas program
 * or, without it, nvJitLink in process, and reads each entry function's resources
 * into out (at most max). Returns how many, or -1 when no assembler is there
 * or it rejects the PTX; *tool names the one used ("nvJitLink", "ptxas"). Needs
 * no GPU and no CUDA driver. */
int rt_ptx_resources(const char *ptx, size_t len, const char *arch, RtPtxRes *out, int max,
                     const char **tool);

/* ---- buffers ---------------------------------------------------------- */

RtStatus rt_alloc(RtDevice *dev, size_t bytes, RtPtr *out);
RtStatus rt_free(RtDevice *dev, RtPtr p); /* 0 is fine */
RtStatus rt_memset_d8(RtDevice *dev, RtPtr p, uint8_t value, size_t count);
RtStatus rt_memset_d32(RtDevice *dev, RtPtr p, uint32_t value, size_t count);
RtStatus rt_copy_h2d(RtDevice *dev, RtPtr dst, const void *src, size_t bytes);
RtStatus rt_copy_d2h(RtDevice *dev, void *dst, RtPtr src, size_t bytes);
RtStatus rt_copy_d2d(RtDevice *dev, RtPtr dst, RtPtr src, size_t bytes);

/* ---- launches --------------------------------------------------------- */

typedef struct {
    RtFunction *fn;
    unsigned grid[3];     /* blocks; 0 counts as 1 */
    unsigned block[3];    /* threads; 0 counts as 1 */
    unsigned cluster[3];  /* thread-block cluster (sm_90+); all 0: none */
    unsigned shared_bytes; /* dynamic shared memory */
    void **params;        /* one pointer per kernel parameter, to its value */
    void *stream;         /* a CUstream / hipStream_t of the caller in the device's primary
                             context; NULL: the runtime's own. rt_wait and rt_time wait on
                             the runtime's stream only: the caller syncs its own */
} RtLaunch;

RtStatus rt_launch(RtDevice *dev, const RtLaunch *l); /* asynchronous */
/* Waits until the device is idle: RT_OK, RT_FAULT naming the kernel, or
 * RT_TIMEOUT ("kernel 'spin' still running after 10.0 s; ...") */
RtStatus rt_wait(RtDevice *dev);
RtStatus rt_run(RtDevice *dev, const RtLaunch *l); /* rt_launch, then rt_wait */

/* ---- timing ----------------------------------------------------------- */

typedef struct {
    int warmup;    /* untimed runs first; 0: 3 (negative: none) */
    int runs;      /* timed runs; 0: 20 */
    bool no_flush; /* keep L2 warm between runs (default: flush it) */
    int variants;  /* seq holds `variants` copies of the n launches, e.g. over
                      rotated input buffers; run r uses copy r % variants. 0: 1 */
} RtTimeOpts;

typedef struct {
    int runs;
    double median_ms, min_ms, mean_ms, max_ms;
} RtTiming;

/* Times a sequence of n launches as one sample, between device events.
 * Before each run (outside the timed events) L2 is flushed by writing a
 * buffer of twice its size. The stream is held (a wait on a host-mapped word)
 * until the whole run is queued, so the events never include the host's
 * launch overhead. The timeout applies to each run. samples, if not NULL,
 * receives each run's time in ms (runs entries, in run order). */
RtStatus rt_time(RtDevice *dev, const RtLaunch *seq, int n, const RtTimeOpts *opts,
                 RtTiming *out, double *samples);

/* Median of v[0..n) (sorts v); 0 when n == 0. */
double rt_median(double *v, int n);
/* Fills out from n samples (sorts ms). */
void rt_stats(double *ms, int n, RtTiming *out);

/* ---- TMA (Hopper tensor maps) ----------------------------------------- */

typedef enum { /* the order of CUtensorMapDataType */
    RT_TMA_U8, RT_TMA_U16, RT_TMA_U32, RT_TMA_I32, RT_TMA_U64, RT_TMA_I64,
    RT_TMA_F16, RT_TMA_F32, RT_TMA_F64, RT_TMA_BF16, RT_TMA_F32_FTZ,
    RT_TMA_TF32, RT_TMA_TF32_FTZ
} RtTmaDtype;

typedef struct {
    RtTmaDtype dtype;
    unsigned rank;           /* 1..5 */
    RtPtr base;              /* 16-byte aligned */
    uint64_t dims[5];        /* elements per dim, innermost first */
    uint64_t strides[4];     /* bytes between consecutive indices of dims 1..rank-1 */
    uint32_t box[5];         /* elements per dim copied by one TMA op, each <= 256 */
    uint32_t elem_strides[5]; /* 0 counts as 1 */
    unsigned swizzle;        /* bytes: 0, 32, 64 or 128 */
    unsigned l2_promote;     /* bytes: 0, 64, 128 or 256 */
    bool oob_nan;            /* fill out-of-bounds elements with NaN, not 0 */
} RtTmaDesc;

typedef struct {
    alignas(64) unsigned char bytes[128]; /* a CUtensorMap: pass its address as a param */
} RtTensorMap;

/* Checks a descriptor against the tensor-map rules without a device:
 * RT_INVALID with the rule broken in err, or RT_OK. */
RtStatus rt_tma_check(const RtTmaDesc *d, char *err, size_t errlen);
/* Checks, then encodes with cuTensorMapEncodeTiled. RT_UNSUPPORTED on HIP or
 * on drivers older than CUDA 12. */
RtStatus rt_tma_encode(RtDevice *dev, const RtTmaDesc *d, RtTensorMap *out);

#endif
