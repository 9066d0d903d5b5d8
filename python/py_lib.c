/* py_lib.c — cake.Library: the kernel library (lib/cake_lib.h) from Python,
 * what cake.ops dispatches through.
 *
 *   open_library(path) -> Library     an artifact (`cakec lib build`) or a library
 *                                     folder (manifest.json; variants compile on first use)
 *   lib.ops()                         the ops: signatures, dims, variants
 *   lib.select(op, dims, avoid)       the variant the dispatch picks for {dim: value}
 *                                     (the best ranked that is not named in avoid)
 *   lib.kernel(op, dims, device, avoid)  that variant as a cake.Kernel, loaded on the device
 *
 * A variant's Kernel borrows the library's compiled kernel and context and is
 * made once per variant: calls go through the same checks and launch cache as
 * a kernel from cake.load. It holds the Library, which holds it: a Library
 * that has made a kernel lives as long as the process (cake.ops opens one).
 * The library's context is the one every call on it passes (cake_lib.h), kept
 * in the Library object.
 */
#include "py_priv.h"
#include <stdlib.h>
#include <string.h>
#include "cake_lib.h"

typedef struct {
    PyObject_HEAD
    CakeCtx *ctx;
    CakeLib *lib;
    uint32_t nops;
    uint32_t *first;        /* op i's variants are kernels[first[i] ..] */
    PyObject **kernels;     /* one Kernel per variant once made, else NULL */
    uint32_t nkernels;
} PyLibrary;

static PyState *lib_state(PyObject *self)
{
    return PyType_GetModuleState(Py_TYPE(self));
}

/* the diagnostics of ctx as one string (then cleared), for ValueError */
static PyObject *value_error_from(CakeCtx *ctx)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return PyErr_NoMemory();
    diag_print_text(ctx, f, 0);
    fclose(f);
    while (len && buf[len - 1] == '\n')
        buf[--len] = 0;
    PyErr_SetString(PyExc_ValueError, buf);
    free(buf);
    ctx->ndiags = ctx->nerrors = ctx->nwarnings = 0;
    return NULL;
}

static void clear_diags(CakeCtx *ctx) { ctx->ndiags = ctx->nerrors = ctx->nwarnings = 0; }

static int find_op(PyLibrary *L, PyObject *name, uint32_t *op)
{
    const char *s = PyUnicode_AsUTF8AndSize(name, NULL);
    if (!s)
        return -1;
    clear_diags(L->ctx);
    if (cake_lib_find_op(L->ctx, L->lib, s, op)) {
        value_error_from(L->ctx);
        return -1;
    }
    return 0;
}

/* {dim: value} -> CakeLibDim[] (names borrowed from the dict's keys) */
static int dims_of(PyObject *d, CakeLibDim *dims, uint32_t *n)
{
    if (!PyDict_Check(d)) {
        PyErr_SetString(PyExc_TypeError, "dims: expected a dict {name: int}");
        return -1;
    }
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    *n = 0;
    while (PyDict_Next(d, &pos, &k, &v)) {
        if (*n == 16) {
            PyErr_SetString(PyExc_ValueError, "dims: at most 16");
            return -1;
        }
        dims[*n].name = PyUnicode_AsUTF8AndSize(k, NULL);
        dims[*n].value = PyLong_AsLongLong(v);
        if (!dims[*n].name || PyErr_Occurred())
            return -1;
        (*n)++;
    }
    return 0;
}

/* 1 when variant v of op is named in avoid (a sequence of names, or NULL) */
static int avoided(PyLibrary *L, uint32_t op, uint32_t v, PyObject *avoid)
{
    CakeLibVariant var;
    if (!avoid || cake_lib_variant(L->lib, op, v, &var))
        return 0;
    PyObject *name = PyUnicode_FromString(var.name);
    int in = name ? PySequence_Contains(avoid, name) : -1;
    Py_XDECREF(name);
    return in;
}

/* the dispatch's choice, or with avoid the first variant in its ranking that
 * holds and is not avoided */
static int choose(PyLibrary *L, PyObject *opname, PyObject *dimsd, PyObject *avoid,
                  CakeLibChoice *ch)
{
    uint32_t op, n;
    CakeLibDim dims[16];
    if (find_op(L, opname, &op) < 0 || dims_of(dimsd, dims, &n) < 0)
        return -1;
    clear_diags(L->ctx);
    int rc = avoid ? cake_lib_explain(L->ctx, L->lib, op, dims, n, ch)
                   : cake_lib_select(L->ctx, L->lib, op, dims, n, ch);
    if (rc == 1) {
        value_error_from(L->ctx);
        return -1;
    }
    if (rc) {
        py_raise_diags(lib_state((PyObject *)L), L->ctx, rc, "the library's dispatch failed");
        clear_diags(L->ctx);
        return -1;
    }
    if (!avoid)
        return 0;
    for (uint32_t i = 0; i < ch->ntested; i++) {
        int a = ch->held[i] ? avoided(L, op, ch->tested[i], avoid) : 1;
        if (a < 0)
            return -1;
        if (!a) {
            ch->variant = ch->tested[i];
            ch->rank = i;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError, "no variant of op `%U` that is not avoided (%R) covers the "
                 "shape", opname, avoid);
    return -1;
}

static const char *why_name(CakeLibWhy w)
{
    return w == CAKE_SEL_TUNED ? "tuned" : w == CAKE_SEL_NEAR ? "tuned-near" : w == CAKE_SEL_FIT ? "tuned-fit"
           : w == CAKE_SEL_MEASURED ? "measured" : w == CAKE_SEL_MEASURED_NEAR ? "measured-near"
           : w == CAKE_SEL_MODEL ? "model" : "order";
}

static PyObject *variant_dict(PyLibrary *L, uint32_t op, uint32_t v)
{
    CakeLibVariant var;
    if (cake_lib_variant(L->lib, op, v, &var)) {
        PyErr_SetString(PyExc_IndexError, "no such variant");
        return NULL;
    }
    return Py_BuildValue("{s:I,s:s,s:s,s:s,s:s,s:s,s:I}", "index", v, "name", var.name, "file",
                         var.file, "kernel", var.kernel ? var.kernel : "", "set",
                         var.set ? var.set : "", "target", var.target, "launches", var.launches);
}

/* select(op, dims, avoid=None) -> {"index", "name", "file", "kernel", "set", "target",
 * "launches" (0: one kernel; else a sequence of that many launches), "why"} */
static PyObject *lib_select(PyObject *self, PyObject *args)
{
    PyLibrary *L = (PyLibrary *)self;
    PyObject *op, *dims, *avoid = Py_None;
    CakeLibChoice ch;
    if (!PyArg_ParseTuple(args, "UO|O", &op, &dims, &avoid) ||
        choose(L, op, dims, avoid == Py_None ? NULL : avoid, &ch) < 0)
        return NULL;
    PyObject *d = variant_dict(L, ch.op, ch.variant);
    PyObject *w = d ? PyUnicode_FromString(why_name(ch.why)) : NULL;
    if (!w || PyDict_SetItemString(d, "why", w) < 0) {
        Py_XDECREF(w);
        Py_XDECREF(d);
        return NULL;
    }
    Py_DECREF(w);
    return d;
}

/* the compile-time parameters of a choice: its env less the op's dims */
static void params_of(const CakeKernel *ck, const ShapeEnv *all, ShapeEnv *params)
{
    shape_env_clear(params);
    for (uint32_t i = 0; i < all->n; i++) {
        int is_dim = 0;
        for (uint32_t j = 0; j < ck->k->ndims; j++)
            is_dim |= ck->k->nodes[ck->k->dims[j]].name == all->b[i].name;
        if (!is_dim)
            shape_env_set(params, all->b[i].name, all->b[i].value);
    }
}

/* kernel(op, dims, device, avoid=None) -> the chosen variant as a Kernel loaded on the device */
static PyObject *lib_kernel(PyObject *self, PyObject *args)
{
    PyLibrary *L = (PyLibrary *)self;
    PyState *st = lib_state(self);
    PyObject *op, *dims, *avoid = Py_None;
    int ordinal;
    CakeLibChoice ch;
    if (!PyArg_ParseTuple(args, "UOi|O", &op, &dims, &ordinal, &avoid) ||
        choose(L, op, dims, avoid == Py_None ? NULL : avoid, &ch) < 0)
        return NULL;
    uint32_t slot = L->first[ch.op] + ch.variant;
    if (slot >= L->nkernels) {
        PyErr_SetString(PyExc_RuntimeError, "the library's variant table is inconsistent");
        return NULL;
    }
    if (L->kernels[slot]) {
        Py_INCREF(L->kernels[slot]);
        return L->kernels[slot];
    }
    RtDevice *dev = py_device(st, ordinal);
    if (!dev)
        return NULL;
    CakeKernel *ck;
    ShapeEnv env, params;
    clear_diags(L->ctx);
    int rc = cake_lib_kernel(L->ctx, L->lib, dev, &ch, &ck);
    if (!rc)
        rc = cake_lib_choice_env(L->ctx, L->lib, &ch, &env);
    if (rc) {
        py_raise_diags(st, L->ctx, rc, "cannot prepare the library's variant");
        clear_diags(L->ctx);
        return NULL;
    }
    params_of(ck, &env, &params);
    PyObject *ktype = PyObject_GetAttrString(PyType_GetModule(Py_TYPE(self)), "Kernel");
    if (!ktype)
        return NULL;
    PyObject *k = py_kernel_borrow((PyTypeObject *)ktype, L->ctx, ck, &params, ordinal, self);
    Py_DECREF(ktype);
    if (!k)
        return NULL;
    L->kernels[slot] = k;
    Py_INCREF(k);
    return k;
}

static PyObject *arg_list(const CakeLibOp *o)
{
    PyObject *l = PyList_New(0);
    for (uint32_t i = 0; l && i < o->nargs; i++) {
        const CakeLibArg *a = &o->args[i];
        PyObject *dims = PyList_New(0);
        for (int j = 0; dims && j < a->rank; j++) {
            PyObject *e = a->dims[j] ? PyUnicode_FromString(a->dims[j])
                                     : PyLong_FromLongLong(a->extent[j]);
            if (!e || PyList_Append(dims, e) < 0)
                Py_CLEAR(dims);
            Py_XDECREF(e);
        }
        PyObject *d = dims ? Py_BuildValue("{s:s,s:s,s:s,s:i,s:O}", "name", a->name, "kind",
                                           a->kind == CAKE_ARG_TENSOR ? "tensor" : "scalar",
                                           "dtype", a->dtype, "rank", a->rank, "dims", dims)
                           : NULL;
        Py_XDECREF(dims);
        if (!d || PyList_Append(l, d) < 0)
            Py_CLEAR(l);
        Py_XDECREF(d);
    }
    return l;
}

/* ops() -> {name: {"doc", "dims", "args", "variants"}} */
static PyObject *lib_ops(PyObject *self, PyObject *unused)
{
    PyLibrary *L = (PyLibrary *)self;
    PyObject *r = PyDict_New();
    for (uint32_t i = 0; r && i < L->nops; i++) {
        CakeLibOp o;
        if (cake_lib_op(L->lib, i, &o))
            continue;
        PyObject *dims = PyList_New(0), *vars = PyList_New(0), *args = arg_list(&o), *d = NULL;
        for (uint32_t j = 0; dims && j < o.ndims; j++) {
            PyObject *s = PyUnicode_FromString(o.dims[j]);
            if (!s || PyList_Append(dims, s) < 0)
                Py_CLEAR(dims);
            Py_XDECREF(s);
        }
        for (uint32_t v = 0; vars && v < o.nvariants; v++) {
            PyObject *vd = variant_dict(L, i, v);
            if (!vd || PyList_Append(vars, vd) < 0)
                Py_CLEAR(vars);
            Py_XDECREF(vd);
        }
        if (dims && vars && args)
            d = Py_BuildValue("{s:s,s:O,s:O,s:O}", "doc", o.doc ? o.doc : "", "dims", dims,
                              "args", args, "variants", vars);
        if (!d || PyDict_SetItemString(r, o.name, d) < 0)
            Py_CLEAR(r);
        Py_XDECREF(d);
        Py_XDECREF(dims);
        Py_XDECREF(vars);
        Py_XDECREF(args);
    }
    return r;
}

static PyObject *lib_tuned_device(PyObject *self, void *c)
{
    return PyUnicode_FromString(cake_lib_tuned_device(((PyLibrary *)self)->lib));
}

static PyMethodDef lib_methods[] = {
    {"ops", lib_ops, METH_NOARGS, "ops() -> {name: {doc, dims, args, variants}}"},
    {"select", lib_select, METH_VARARGS,
     "select(op, dims, avoid=None) -> the variant dispatch picks (the first not in avoid)"},
    {"kernel", lib_kernel, METH_VARARGS,
     "kernel(op, dims, device, avoid=None) -> the picked variant as a Kernel loaded on the device"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef lib_getset[] = {
    {"tuned_device", lib_tuned_device, NULL, "the device its table was tuned on, or ''", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static void lib_dealloc(PyObject *self)
{
    PyLibrary *L = (PyLibrary *)self;
    PyTypeObject *tp = Py_TYPE(self);
    for (uint32_t i = 0; i < L->nkernels; i++)
        Py_XDECREF(L->kernels[i]);
    PyMem_Free(L->kernels);
    PyMem_Free(L->first);
    cake_lib_close(L->lib);
    if (L->ctx)
        ctx_free(L->ctx);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

static PyType_Slot lib_slots[] = {
    {Py_tp_methods, lib_methods},
    {Py_tp_getset, lib_getset},
    {Py_tp_dealloc, lib_dealloc},
    {Py_tp_doc, "The kernel library: ops with shape dispatch (cake._cake.open_library)."},
    {0, NULL},
};

PyType_Spec py_library_spec = {
    .name = "cake.Library",
    .basicsize = sizeof(PyLibrary),
    .flags = Py_TPFLAGS_DEFAULT,
    .slots = lib_slots,
};

static int is_dir(const char *path)
{
    size_t n = strlen(path);
    return n < 8 || strcmp(path + n - 8, ".cakelib") != 0;
}

PyObject *py_open_library(PyObject *module, PyObject *arg)
{
    const char *path = PyUnicode_AsUTF8AndSize(arg, NULL);
    if (!path)
        return NULL;
    PyState *st = PyModule_GetState(module);
    CakeCtx *ctx = ctx_new();
    if (!ctx)
        return PyErr_NoMemory();
    CakeLib *lib = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = is_dir(path) ? cake_lib_read_dir(ctx, path, &lib) : cake_lib_open(ctx, path, &lib);
    Py_END_ALLOW_THREADS
    if (rc) {
        py_raise_diags(st, ctx, rc, "cannot open the kernel library");
        ctx_free(ctx);
        return NULL;
    }
    clear_diags(ctx);
    PyObject *ltype = PyObject_GetAttrString(module, "Library");
    PyLibrary *L = ltype ? (PyLibrary *)PyType_GenericAlloc((PyTypeObject *)ltype, 0) : NULL;
    Py_XDECREF(ltype);
    if (!L) {
        cake_lib_close(lib);
        ctx_free(ctx);
        return NULL;
    }
    L->ctx = ctx;
    L->lib = lib;
    L->nops = cake_lib_nops(lib);
    L->first = PyMem_Calloc(L->nops + 1, sizeof *L->first);
    for (uint32_t i = 0; L->first && i < L->nops; i++) {
        CakeLibOp o;
        L->first[i + 1] = L->first[i] + (cake_lib_op(lib, i, &o) ? 0 : o.nvariants);
    }
    L->nkernels = L->first ? L->first[L->nops] : 0;
    L->kernels = PyMem_Calloc(L->nkernels + 1, sizeof *L->kernels);
    if (!L->first || !L->kernels) {
        Py_DECREF(L);
        return PyErr_NoMemory();
    }
    return (PyObject *)L;
}
