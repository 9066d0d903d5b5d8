/* py_kernel.c — cake.Kernel: a compiled kernel that Python calls with
 * tensors and scalars.
 *
 * A call reads its arguments (py_args.c) into a key: every tensor's dtype,
 * device, shape and strides and every scalar's value (not the addresses). A
 * key seen before finds its prepared launch (parameters, tensor maps, grid) in
 * the kernel's cache, checks the tensors' alignment, binds their addresses into
 * it (cake_prepared_rebind: a tensor map is encoded again only for a tensor
 * that moved) and goes straight to rt_launch; a new key is bound and
 * checked (py_bind.c), the kernel is loaded on the tensors' device the first
 * time, and the launch is prepared (cake_prepare) into a cache slot. The
 * launch goes on the caller's stream (stream=: an int or a torch.cuda.Stream),
 * else on the stream the module's stream getter names (torch's current
 * stream), else on the runtime's own stream; nothing in it allocates or waits,
 * so it can be captured into a CUDA graph (the graph copies the parameters at
 * capture).
 */
#include "py_priv.h"
#include <string.h>
#include <time.h>

static PyState *state_of(PyObject *self) { return PyType_GetModuleState(Py_TYPE(self)); }

/* ---- collecting the arguments ---------------------------------------------- */

static int arg_count_error(PyKernel *kn, Py_ssize_t got)
{
    char names[512] = "";
    size_t used = 0;
    for (uint32_t i = 0; i < kn->sig.nargs && used < sizeof names; i++)
        used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                                 kn->sig.args[i].name);
    PyErr_Format(PyExc_TypeError, "kernel `%s` takes %u arguments (%s), got %zd", py_kernel_name(kn),
                 kn->sig.nargs, names, got);
    return -1;
}

/* the argument objects in declaration order (borrowed), and stream= */
static int collect(PyState *st, PyKernel *kn, PyObject *args, PyObject *kw, PyObject **objs,
                   PyObject **stream)
{
    Py_ssize_t n = PyTuple_Size(args), nkw = 0;
    *stream = NULL;
    if (n > (Py_ssize_t)kn->sig.nargs)
        return arg_count_error(kn, n);
    for (uint32_t i = 0; i < kn->sig.nargs; i++)
        objs[i] = i < (uint32_t)n ? PyTuple_GetItem(args, i) : NULL;
    if (kw) {
        PyObject *key, *val;
        Py_ssize_t pos = 0;
        while (PyDict_Next(kw, &pos, &key, &val)) {
            nkw++;
            if (PyObject_RichCompareBool(key, st->s_stream, Py_EQ) == 1) {
                *stream = val;
                continue;
            }
            const char *s = PyUnicode_AsUTF8AndSize(key, NULL);
            uint32_t i = 0;
            while (s && i < kn->sig.nargs && strcmp(kn->sig.args[i].name, s))
                i++;
            if (!s || i == kn->sig.nargs) {
                PyErr_Format(PyExc_TypeError, "kernel `%s` has no argument `%S`", py_kernel_name(kn), key);
                return -1;
            }
            if (objs[i]) {
                PyErr_Format(PyExc_TypeError, "kernel `%s`: argument `%s` given twice", py_kernel_name(kn), s);
                return -1;
            }
            objs[i] = val;
        }
    }
    for (uint32_t i = 0; i < kn->sig.nargs; i++)
        if (!objs[i])
            return arg_count_error(kn, n + nkw - (*stream ? 1 : 0));
    return 0;
}

static int read_args(PyState *st, PyKernel *kn, PyObject *args, PyObject *kw, PyArgVal *vals,
                     PyObject **stream)
{
    PyObject *objs[PY_MAX_ARGS];
    if (collect(st, kn, args, kw, objs, stream) < 0)
        return -1;
    for (uint32_t i = 0; i < kn->sig.nargs; i++)
        if (py_read_arg(st, &kn->sig, i, objs[i], &vals[i]) < 0)
            return -1;
    return 0;
}

/* ---- the launch cache ------------------------------------------------------ */

static uint32_t make_key(const PyKernel *kn, const PyArgVal *vals, int64_t *key)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < kn->sig.nargs; i++) {
        const PyArgVal *v = &vals[i];
        if (!v->tensor) {
            int64_t bits;
            memcpy(&bits, &v->f, sizeof bits);
            key[n++] = v->is_float;
            key[n++] = v->is_float ? bits : v->i;
            continue;
        }
        key[n++] = v->dtype;
        key[n++] = v->dev_type * 1024 + v->dev_index;
        key[n++] = v->rank;
        for (int j = 0; j < v->rank; j++) {
            key[n++] = v->shape[j];
            key[n++] = v->stride[j];
        }
    }
    return n;
}

static PyLaunch *lookup(PyKernel *kn, const int64_t *key, uint32_t nkey)
{
    for (uint32_t s = 0; s < PY_CACHE_SLOTS; s++) {
        PyLaunch *L = &kn->cache[s];
        if (L->used && L->nkey == nkey && !memcmp(L->key, key, nkey * sizeof *key))
            return L;
    }
    return NULL;
}

/* a scalar in its declared dtype's encoding */
static void encode_scalar(DType dt, const PyArgVal *v, PyScalar *out)
{
    memset(out, 0, sizeof *out);
    switch (dt) {
    case DT_F32: out->f32 = (float)v->f; break;
    case DT_F64: out->f64 = v->f; break;
    case DT_F16: out->f16 = (_Float16)v->f; break;
    case DT_BF16: {
        float f = (float)v->f;
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        out->bits16 = (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
        break;
    }
    case DT_I8: out->i8 = (int8_t)v->i; break;
    case DT_U8: case DT_BOOL: out->u8 = (uint8_t)v->i; break;
    case DT_I16: out->i16 = (int16_t)v->i; break;
    case DT_U16: out->u16 = (uint16_t)v->i; break;
    case DT_I32: out->i32 = (int32_t)v->i; break;
    case DT_U32: out->u32 = (uint32_t)v->i; break;
    default: out->i64 = v->i; break;
    }
}

/* loads the kernel on device `ordinal` the first time; -1 with an exception */
static int ensure_loaded(PyState *st, PyKernel *kn, int ordinal)
{
    if (kn->device >= 0) {
        if (kn->device == ordinal)
            return 0;
        PyErr_Format(PyExc_ValueError, "kernel `%s` is loaded on cuda:%d; the tensors are on "
                     "cuda:%d (load it again for that device)", py_kernel_name(kn), kn->device, ordinal);
        return -1;
    }
    RtDevice *dev = py_device(st, ordinal);
    if (!dev)
        return -1;
    kn->ctx->ndiags = kn->ctx->nerrors = kn->ctx->nwarnings = 0;
    int rc = cake_load(kn->ctx, dev, &kn->ck);
    if (rc) {
        py_raise_diags(st, kn->ctx, rc, "cannot load the kernel on the device");
        return -1;
    }
    kn->device = ordinal;
    return 0;
}

static int raise_check(PyCheck r, const char *msg)
{
    PyErr_SetString(r == PY_TYPE_ERROR ? PyExc_TypeError
                    : r == PY_VALUE_ERROR ? PyExc_ValueError : PyExc_RuntimeError, msg);
    return -1;
}

/* binds and checks vals; env gets the dims */
static int check_args(PyKernel *kn, const PyArgVal *vals, ShapeEnv *env)
{
    char err[1024];
    *env = kn->params;
    PyCheck r = py_bind_check(kn->ctx, kn->ck.k, &kn->sig, vals, env, err, sizeof err);
    return r == PY_OK ? 0 : raise_check(r, err);
}

static int first_device(const PyKernel *kn, const PyArgVal *vals)
{
    for (uint32_t i = 0; i < kn->sig.nargs; i++)
        if (vals[i].tensor)
            return vals[i].dev_index;
    return 0;
}

/* cake_prepare of vals at env into p; scalars' storage in sc */
static int prepare_into(PyState *st, PyKernel *kn, const PyArgVal *vals, const ShapeEnv *env,
                        PyScalar *sc, CakePrepared *p)
{
    RtPtr tensors[PY_MAX_ARGS];
    const void *scalars[PY_MAX_ARGS];
    uint32_t nt = 0, ns = 0;
    for (uint32_t i = 0; i < kn->sig.nargs; i++) {
        if (vals[i].tensor) {
            tensors[nt++] = vals[i].ptr;
            continue;
        }
        encode_scalar(kn->sig.args[i].dtype, &vals[i], &sc[i]);
        scalars[ns++] = &sc[i];
    }
    kn->ctx->ndiags = kn->ctx->nerrors = kn->ctx->nwarnings = 0;
    int rc = cake_prepare(kn->ctx, &kn->ck, env, tensors, scalars, p);
    if (rc) {
        py_raise_diags(st, kn->ctx, rc, "cannot prepare the launch");
        return -1;
    }
    return 0;
}

static PyLaunch *prepare(PyState *st, PyKernel *kn, const PyArgVal *vals, const int64_t *key,
                         uint32_t nkey)
{
    ShapeEnv env;
    if (check_args(kn, vals, &env) < 0 || ensure_loaded(st, kn, first_device(kn, vals)) < 0)
        return NULL;
    PyLaunch *L = &kn->cache[kn->next_slot];
    if (L->used)
        cake_prepared_free(&L->p);
    L->used = 0;
    if (prepare_into(st, kn, vals, &env, L->scalars, &L->p) < 0)
        return NULL;
    kn->next_slot = (kn->next_slot + 1) % PY_CACHE_SLOTS;
    L->used = 1;
    L->nkey = nkey;
    memcpy(L->key, key, nkey * sizeof *key);
    L->nothing = 0; /* a grid dim the clause gives is 0 (the runtime counts 0 as 1) */
    for (uint32_t d = 0; d < kn->ck.k->ngrid && d < 3; d++)
        L->nothing |= L->p.rl.grid[d] == 0;
    return L;
}

/* ---- the call ------------------------------------------------------------------ */

/* the stream to launch on as RtLaunch.stream: NULL is the runtime's own, and
 * a stream of 0 (CUDA's legacy default stream) is CU_STREAM_LEGACY */
static int stream_of(PyState *st, PyObject *given, int device, void **out)
{
    *out = NULL;
    PyObject *s = given;
    if ((!s || s == Py_None) && !st->stream_getter && st->stream_setup &&
        PyDict_GetItemString(PyImport_GetModuleDict(), "torch")) { /* torch came after cake */
        PyObject *r = PyObject_CallNoArgs(st->stream_setup);
        if (!r)
            return -1;
        Py_DECREF(r);
    }
    if (!s || s == Py_None) {
        if (!st->stream_getter)
            return 0;
        PyObject *idx = PyLong_FromLong(device);
        s = idx ? PyObject_CallFunctionObjArgs(st->stream_getter, idx, NULL) : NULL;
        Py_XDECREF(idx);
        if (!s)
            return -1;
    } else {
        Py_INCREF(s);
    }
    if (!PyLong_Check(s)) { /* a torch.cuda.Stream */
        PyObject *raw = PyObject_GetAttrString(s, "cuda_stream");
        Py_DECREF(s);
        if (!raw)
            return -1;
        s = raw;
    }
    uintptr_t v = (uintptr_t)PyLong_AsUnsignedLongLongMask(s);
    Py_DECREF(s);
    *out = (void *)(v ? v : 1);
    return PyErr_Occurred() ? -1 : 0;
}

/* a kept launch L bound to the call's tensors (their addresses aligned as the
   kernel declares: else -1 with nothing raised, and the caller prepares afresh,
   which says what is wrong): 0, or -1 with the error raised (raised is 1) */
static int rebind(PyState *st, PyKernel *kn, PyLaunch *L, const PyArgVal *vals, int *raised)
{
    RtPtr tensors[PY_MAX_ARGS];
    const void *scalars[PY_MAX_ARGS];
    uint32_t nt = 0, ns = 0;
    *raised = 0;
    for (uint32_t i = 0; i < kn->sig.nargs; i++) {
        if (!vals[i].tensor) {
            scalars[ns++] = &L->scalars[i];
            continue;
        }
        if (vals[i].ptr % (RtPtr)kn->sig.args[i].align)
            return -1;
        tensors[nt++] = vals[i].ptr;
    }
    kn->ctx->ndiags = kn->ctx->nerrors = kn->ctx->nwarnings = 0;
    int rc = cake_prepared_rebind(kn->ctx, &kn->ck, &L->p, tensors, scalars);
    if (!rc)
        return 0;
    L->used = 0;   /* made again by the next call */
    py_raise_diags(st, kn->ctx, rc, "cannot bind the launch to these tensors");
    *raised = 1;
    return -1;
}

/* the prepared launch of a call's arguments, from the cache or made now */
static PyLaunch *resolve(PyState *st, PyKernel *kn, PyObject *args, PyObject *kw, PyObject **given)
{
    PyArgVal vals[PY_MAX_ARGS];
    int64_t key[PY_KEY_MAX];
    if (read_args(st, kn, args, kw, vals, given) < 0)
        return NULL;
    uint32_t nkey = make_key(kn, vals, key);
    PyLaunch *L = lookup(kn, key, nkey);
    int raised = 0;
    if (L && rebind(st, kn, L, vals, &raised) == 0) {
        kn->hits++;
        return L;
    }
    if (raised)
        return NULL;
    if ((L = prepare(st, kn, vals, key, nkey)) != NULL)
        kn->misses++;
    return L;
}

static int launch(PyState *st, PyKernel *kn, PyLaunch *L, PyObject *given)
{
    if (L->nothing)
        return 0;
    if (stream_of(st, given, kn->device, &L->p.rl.stream) < 0)
        return -1;
    RtDevice *dev = st->devs[kn->device];
    if (rt_launch(dev, &L->p.rl) != RT_OK) {
        PyErr_Format(PyExc_RuntimeError, "kernel `%s`: %s", py_kernel_name(kn), rt_error(dev));
        return -1;
    }
    return 0;
}

static PyObject *kernel_call(PyObject *self, PyObject *args, PyObject *kw)
{
    PyKernel *kn = (PyKernel *)self;
    PyState *st = state_of(self);
    PyObject *given;
    PyLaunch *L = resolve(st, kn, args, kw, &given);
    if (!L || launch(st, kn, L, given) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* time_launches(n, *args): launches the call n times from C, the arguments read
 * once; the host seconds per launch (what a bare launch costs, for comparing
 * with a call from Python) */
static PyObject *kernel_time_launches(PyObject *self, PyObject *args, PyObject *kw)
{
    PyKernel *kn = (PyKernel *)self;
    PyState *st = state_of(self);
    Py_ssize_t na = PyTuple_Size(args);
    long n = na > 0 ? PyLong_AsLong(PyTuple_GetItem(args, 0)) : -1;
    if (n < 1) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "time_launches(n, *args): n >= 1 launches");
        return NULL;
    }
    PyObject *rest = PyTuple_GetSlice(args, 1, na), *given;
    PyLaunch *L = rest ? resolve(st, kn, rest, kw, &given) : NULL;
    Py_XDECREF(rest);
    if (!L || launch(st, kn, L, given) < 0)
        return NULL;
    if (L->nothing)
        return PyFloat_FromDouble(0.0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++)
        if (rt_launch(st->devs[kn->device], &L->p.rl) != RT_OK) {
            PyErr_Format(PyExc_RuntimeError, "kernel `%s`: %s", py_kernel_name(kn),
                         rt_error(st->devs[kn->device]));
            return NULL;
        }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    return PyFloat_FromDouble(secs / (double)n);
}

/* ---- methods -------------------------------------------------------------------- */

static PyObject *env_dict(PyKernel *kn, const ShapeEnv *env)
{
    PyObject *d = PyDict_New();
    for (uint32_t j = 0; d && j < kn->ck.k->ndims; j++) {
        Sym name = kn->ck.k->nodes[kn->ck.k->dims[j]].name;
        int64_t v;
        if (!shape_env_get(env, name, &v))
            continue;
        PyObject *o = PyLong_FromLongLong(v);
        if (!o || PyDict_SetItemString(d, ir_symstr(kn->ctx, name), o) < 0) {
            Py_XDECREF(o);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(o);
    }
    return d;
}

/* bind(*args): checks the arguments as a call does and returns the dims, launching nothing */
static PyObject *kernel_bind(PyObject *self, PyObject *args, PyObject *kw)
{
    PyKernel *kn = (PyKernel *)self;
    PyArgVal vals[PY_MAX_ARGS];
    PyObject *given;
    ShapeEnv env;
    if (read_args(state_of(self), kn, args, kw, vals, &given) < 0 || check_args(kn, vals, &env) < 0)
        return NULL;
    return env_dict(kn, &env);
}

/* launch_config(*args): grid, block and dynamic shared bytes of that call */
static PyObject *kernel_launch_config(PyObject *self, PyObject *args, PyObject *kw)
{
    PyKernel *kn = (PyKernel *)self;
    PyState *st = state_of(self);
    PyArgVal vals[PY_MAX_ARGS];
    PyScalar sc[PY_MAX_ARGS];
    PyObject *given;
    ShapeEnv env;
    CakePrepared p;
    if (read_args(st, kn, args, kw, vals, &given) < 0 || check_args(kn, vals, &env) < 0 ||
        prepare_into(st, kn, vals, &env, sc, &p) < 0)
        return NULL;
    PyObject *r = Py_BuildValue("{s:(III),s:(III),s:I}", "grid", p.rl.grid[0], p.rl.grid[1],
                                p.rl.grid[2], "block", p.rl.block[0], p.rl.block[1],
                                p.rl.block[2], "shared_bytes", p.rl.shared_bytes);
    cake_prepared_free(&p);
    return r;
}

static PyMethodDef kernel_methods[] = {
    {"bind", (PyCFunction)(void (*)(void))kernel_bind, METH_VARARGS | METH_KEYWORDS,
     "bind(*args) -> dict: check the arguments as a call would and return the dims"},
    {"launch_config", (PyCFunction)(void (*)(void))kernel_launch_config,
     METH_VARARGS | METH_KEYWORDS, "launch_config(*args) -> dict: grid, block, shared_bytes"},
    {"time_launches", (PyCFunction)(void (*)(void))kernel_time_launches,
     METH_VARARGS | METH_KEYWORDS, "time_launches(n, *args) -> seconds per launch from C"},
    {"cache_info", py_kernel_cache_info, METH_NOARGS, "hits, misses and slots of the launch cache"},
    {NULL, NULL, 0, NULL},
};

static void kernel_dealloc(PyObject *self)
{
    PyKernel *kn = (PyKernel *)self;
    PyTypeObject *tp = Py_TYPE(self);
    for (uint32_t s = 0; kn->cache && s < PY_CACHE_SLOTS; s++)
        if (kn->cache[s].used)
            cake_prepared_free(&kn->cache[s].p);
    PyMem_Free(kn->cache);
    if (kn->owner)
        Py_DECREF(kn->owner);
    else if (kn->ctx) {
        cake_unload(&kn->ck);
        ctx_free(kn->ctx);
    }
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

static PyType_Slot kernel_slots[] = {
    {Py_tp_call, kernel_call},
    {Py_tp_methods, kernel_methods},
    {Py_tp_getset, py_kernel_getset},
    {Py_tp_repr, py_kernel_repr},
    {Py_tp_dealloc, kernel_dealloc},
    {Py_tp_doc, "A compiled CAKE kernel: call it with tensors and scalars in the order of its "
                "arguments (or by name), and stream= to pick a stream. Made by cake.load."},
    {0, NULL},
};

PyType_Spec py_kernel_spec = {
    .name = "cake.Kernel",
    .basicsize = sizeof(PyKernel),
    .flags = Py_TPFLAGS_DEFAULT,
    .slots = kernel_slots,
};

PyObject *py_kernel_new(PyObject *module, PyTypeObject *type, CakeCtx *ctx,
                        const CakeKernel *ck, const ShapeEnv *params)
{
    (void)module;
    PyKernel *kn = (PyKernel *)PyType_GenericAlloc(type, 0);
    if (!kn) {
        CakeKernel tmp = *ck;
        cake_unload(&tmp);
        ctx_free(ctx);
        return NULL;
    }
    kn->ctx = ctx;
    kn->ck = *ck;
    kn->device = -1;
    kn->params = *params;
    kn->cache = PyMem_Calloc(PY_CACHE_SLOTS, sizeof *kn->cache);
    if (!kn->cache || !py_sig_build(ctx, ck->k, &kn->sig)) {
        if (kn->cache)
            PyErr_Format(PyExc_ValueError, "kernel `%s` has %u arguments; CAKE's Python module "
                         "takes at most %d", ir_symstr(ctx, ck->k->name), ck->k->nargs,
                         PY_MAX_ARGS);
        else
            PyErr_NoMemory();
        Py_DECREF(kn);
        return NULL;
    }
    return (PyObject *)kn;
}

PyObject *py_kernel_borrow(PyTypeObject *type, CakeCtx *ctx, const CakeKernel *ck,
                           const ShapeEnv *params, int device, PyObject *owner)
{
    PyKernel *kn = (PyKernel *)PyType_GenericAlloc(type, 0);
    if (!kn)
        return NULL;
    kn->owner = owner;
    Py_INCREF(owner);
    kn->ctx = ctx;
    kn->ck = *ck;
    kn->device = device;
    kn->params = *params;
    kn->cache = PyMem_Calloc(PY_CACHE_SLOTS, sizeof *kn->cache);
    if (!kn->cache || !py_sig_build(ctx, ck->k, &kn->sig)) {
        if (kn->cache)
            PyErr_Format(PyExc_ValueError, "kernel `%s` has %u arguments; CAKE's Python module "
                         "takes at most %d", ir_symstr(ctx, ck->k->name), ck->k->nargs,
                         PY_MAX_ARGS);
        else
            PyErr_NoMemory();
        Py_DECREF(kn);
        return NULL;
    }
    return (PyObject *)kn;
}
