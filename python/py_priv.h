/* py_priv.h — what the files of the Python module `cake` (the extension
 * _cake.abi3.so) share.
 *
 * The module is built against the stable ABI (Py_LIMITED_API 3.11), so one
 * shared object serves every CPython from 3.11 on. Its parts:
 *   py_module.c  the module: its state (devices, interned names, the stream
 *                getter, CakeError), device_info, compile
 *   py_kernel.c  the Kernel type: a compiled kernel, its call (the fast path
 *                through the launch cache) and bind/launch_config/time_launches
 *   py_kattr.c   its attributes (name, target, args, params, image, ...)
 *   py_args.c    reading a call's arguments: tensors by duck typing (torch's
 *                data_ptr/shape/stride/dtype/device) or DLPack, and scalars
 *   py_bind.c    pure C, no Python: binding dims from shapes and checking every
 *                argument against the signature and the assumes
 *   py_diag.c    compiler diagnostics as a CakeError with attributes
 *   py_lib.c     the Library type: the kernel library's ops, dispatch and variants
 * No global state: what the module keeps lives in its module state (PyState).
 */
#ifndef CAKE_PY_PRIV_H
#define CAKE_PY_PRIV_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "cake.h"

#define PY_MAX_ARGS 32      /* arguments of one kernel */
#define PY_MAX_DEVICES 16
#define PY_CACHE_SLOTS 16   /* prepared launches kept per kernel */

/* ---- the signature: one row per declared argument ------------------------ */

typedef struct {
    const char *name;
    int tensor;                   /* a global tensor (else a scalar) */
    DType dtype;
    int rank;
    int align;                    /* bytes the base address must be a multiple of */
    Sym bare[IR_MAX_RANK];        /* the dim an extent names alone, else 0 */
} PySigArg;

typedef struct {
    uint32_t nargs;
    PySigArg args[PY_MAX_ARGS];
} PySig;

/* Fills sig from kernel k; 0 when it has more arguments than PY_MAX_ARGS. */
int py_sig_build(const CakeCtx *ctx, const Kernel *k, PySig *sig);
/* "bf16[M, N] align 16" or "f32": the declared type of argument i, as written */
void py_sig_type_text(const CakeCtx *ctx, const Kernel *k, uint32_t i, char *buf, size_t len);

/* ---- an argument of one call ------------------------------------------- */

enum { PY_DEV_CPU, PY_DEV_CUDA, PY_DEV_OTHER };

typedef struct {
    int tensor;
    RtPtr ptr;
    int dtype;                    /* DType, or -1 when it has none of ours */
    const char *dtype_name;       /* as the tensor says it, for messages (into dtype_buf, or
                                     a string the module's dtype map keeps) */
    char dtype_buf[48];
    int dev_type, dev_index;
    int rank;
    int64_t shape[IR_MAX_RANK], stride[IR_MAX_RANK];   /* strides in elements */
    int is_float;                 /* scalars: the Python value was a float */
    int64_t i;
    double f;
} PyArgVal;

/* ---- binding and checking (py_bind.c) ----------------------------------- */

typedef enum { PY_OK, PY_TYPE_ERROR, PY_VALUE_ERROR, PY_BUG } PyCheck;

/* Binds the dims of k from the tensors' shapes and the integer scalars into
 * env (which holds the compiled parameters already), then checks each
 * argument: kind, dtype, rank, extents, strides, device, alignment, and the
 * assumes. On failure returns the exception's kind and the message in err,
 * naming the argument and what is wrong. Runs protected (never exits). */
PyCheck py_bind_check(CakeCtx *ctx, const Kernel *k, const PySig *sig, const PyArgVal *vals,
                      ShapeEnv *env, char *err, size_t errlen);

/* ---- the module state (py_module.c) -------------------------------------- */

typedef struct {
    RtDevice *devs[PY_MAX_DEVICES];
    PyObject *stream_getter;      /* callable(device index) -> stream as int, or NULL */
    PyObject *stream_setup;       /* callable() that sets the getter once torch is imported */
    PyObject *error;              /* cake.CakeError */
    PyObject *dtype_map;          /* dtype object -> DType (int), filled as seen */
    PyObject *s_data_ptr, *s_shape, *s_stride, *s_dtype, *s_device, *s_type, *s_index,
             *s_dlpack, *s_stream;
} PyState;

/* The device of that ordinal, opened on first use (its primary context);
 * NULL with RuntimeError set when there is none. */
RtDevice *py_device(PyState *st, int ordinal);

/* ---- reading arguments (py_args.c) --------------------------------------- */

/* Reads obj as argument i (a tensor or a scalar as sig says) into v; -1 with
 * TypeError set when it is neither. */
int py_read_arg(PyState *st, const PySig *sig, uint32_t i, PyObject *obj, PyArgVal *v);

/* ---- diagnostics (py_diag.c) --------------------------------------------- */

/* Sets CakeError from the diagnostics of ctx (rc: the libcake return code) and
 * returns NULL. */
PyObject *py_raise_diags(PyState *st, CakeCtx *ctx, int rc, const char *what);

/* ---- the Kernel type (py_kernel.c, py_kattr.c) ----------------------------- */

#define PY_KEY_MAX (PY_MAX_ARGS * (4 + 2 * IR_MAX_RANK))

/* a scalar argument in its declared dtype's encoding */
typedef union {
    float f32; double f64; _Float16 f16; uint16_t bits16;
    int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32;
    int64_t i64; uint64_t u64;
} PyScalar;

/* one slot of a kernel's launch cache: the key of a call and its prepared launch */
typedef struct {
    int used;
    int nothing;                  /* a grid extent is 0: there is nothing to launch */
    uint32_t nkey;
    int64_t key[PY_KEY_MAX];
    PyScalar scalars[PY_MAX_ARGS];
    CakePrepared p;
} PyLaunch;

typedef struct {
    PyObject_HEAD
    CakeCtx *ctx;
    CakeKernel ck;
    int device;                   /* the ordinal it is loaded on; -1: not yet */
    ShapeEnv params;              /* the compile-time parameters' values */
    PySig sig;
    PyLaunch *cache;              /* PY_CACHE_SLOTS, replaced round robin */
    uint32_t next_slot;
    unsigned long long hits, misses;
    PyObject *owner;              /* a Library whose kernel and context this borrows, or NULL */
} PyKernel;

static inline const char *py_kernel_name(const PyKernel *kn)
{
    return ir_symstr(kn->ctx, kn->ck.k->name);
}

extern PyGetSetDef py_kernel_getset[];
PyObject *py_kernel_repr(PyObject *self);
PyObject *py_kernel_cache_info(PyObject *self, PyObject *unused);

extern PyType_Spec py_kernel_spec;
/* A Kernel object for a compiled ck of ctx (both owned by it from now on). */
PyObject *py_kernel_new(PyObject *module, PyTypeObject *type, CakeCtx *ctx,
                        const CakeKernel *ck, const ShapeEnv *params);

/* A Kernel over the compiled kernel ck of a library (owner), loaded on device
 * `device`: it borrows ck and ctx and keeps owner alive. */
PyObject *py_kernel_borrow(PyTypeObject *type, CakeCtx *ctx, const CakeKernel *ck,
                           const ShapeEnv *params, int device, PyObject *owner);

/* ---- the Library type (py_lib.c) ------------------------------------------ */

extern PyType_Spec py_library_spec;
/* open_library(path): an artifact (*.cakelib) or a library folder */
PyObject *py_open_library(PyObject *module, PyObject *path);

#endif
