/* py_module.c — the extension module cake._cake: its state, the devices,
 * compile and device_info. cake/__init__.py builds the public API on it.
 *
 *   compile(source, is_path, kernel, target, set, name) -> Kernel
 *       parse, verify, lower and emit one kernel (the GIL released meanwhile);
 *       CakeError with the diagnostics when it fails
 *   device_info(ordinal) -> dict     opens the device (its primary context)
 *   set_stream_getter(fn)            fn(device index) -> the stream to launch on
 *   open_library(path) -> Library    the kernel library (py_lib.c)
 *   CakeError, Kernel, version
 */
#include "py_priv.h"
#include <string.h>

static PyState *mod_state(PyObject *m) { return PyModule_GetState(m); }

RtDevice *py_device(PyState *st, int ordinal)
{
    if (ordinal < 0 || ordinal >= PY_MAX_DEVICES) {
        PyErr_Format(PyExc_ValueError, "CUDA device %d: CAKE handles devices 0..%d", ordinal,
                     PY_MAX_DEVICES - 1);
        return NULL;
    }
    if (st->devs[ordinal])
        return st->devs[ordinal];
    char err[512];
    RtStatus s = rt_open(RT_AUTO, ordinal, &st->devs[ordinal], err, sizeof err);
    if (s != RT_OK) {
        st->devs[ordinal] = NULL;
        PyErr_Format(PyExc_RuntimeError, "no GPU to run on: %s", err);
        return NULL;
    }
    return st->devs[ordinal];
}

static PyObject *mod_device_info(PyObject *m, PyObject *arg)
{
    int ordinal = (int)PyLong_AsLong(arg);
    if (PyErr_Occurred())
        return NULL;
    RtDevice *dev = py_device(mod_state(m), ordinal);
    if (!dev)
        return NULL;
    const RtDeviceInfo *in = rt_info(dev);
    return Py_BuildValue("{s:s,s:s,s:s,s:i,s:i,s:i,s:i,s:n,s:n,s:d,s:i}", "backend",
                         rt_backend_name(in->backend), "name", in->name, "arch", in->arch,
                         "cc_major", in->cc_major, "cc_minor", in->cc_minor, "sm_count",
                         in->sm_count, "warp_size", in->warp_size, "shared_per_block_optin",
                         (Py_ssize_t)in->shared_per_block_optin, "global_bytes",
                         (Py_ssize_t)in->global_bytes, "peak_gbps", in->peak_gbps,
                         "driver_version", in->driver_version);
}

static PyObject *mod_set_stream_getter(PyObject *m, PyObject *fn)
{
    PyState *st = mod_state(m);
    if (fn != Py_None && !PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "set_stream_getter: expected a callable or None");
        return NULL;
    }
    Py_XDECREF(st->stream_getter);
    st->stream_getter = fn == Py_None ? NULL : fn;
    Py_XINCREF(st->stream_getter);
    Py_RETURN_NONE;
}

static PyObject *mod_set_stream_setup(PyObject *m, PyObject *fn)
{
    PyState *st = mod_state(m);
    Py_XDECREF(st->stream_setup);
    st->stream_setup = fn == Py_None ? NULL : fn;
    Py_XINCREF(st->stream_setup);
    Py_RETURN_NONE;
}

static PyObject *mod_compile(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"source", "is_path", "kernel", "target", "set", "name", NULL};
    const char *src, *kernel = NULL, *target, *set = NULL, *name = "<string>";
    Py_ssize_t srclen;
    int is_path;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s#pzs|zs", kwlist, &src, &srclen, &is_path,
                                     &kernel, &target, &set, &name))
        return NULL;
    Target tg;
    if (!ir_lookup_target(target, strlen(target), &tg)) {
        PyErr_Format(PyExc_ValueError, "unknown target `%s` (sm_80, sm_90a, sm_100a, gfx90a, "
                     "gfx942)", target);
        return NULL;
    }
    CakeCtx *ctx = ctx_new();
    if (!ctx)
        return PyErr_NoMemory();
    CakeKernel ck;
    memset(&ck, 0, sizeof ck);
    Module *mod = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    if (is_path)
        rc = cake_verify_file(ctx, src, NULL, &mod);
    else
        rc = cake_verify_source(ctx, ctx_add_file(ctx, name, src, (uint32_t)srclen), NULL, &mod);
    if (!rc)
        rc = cake_compile_module(ctx, mod, kernel, tg, set, &ck);
    Py_END_ALLOW_THREADS
    PyState *st = mod_state(m);
    ShapeEnv params;
    if (!rc)
        rc = cake_parse_bindings(ctx, ck.k, set, NULL, &params) ? 0 : 1;
    if (rc) {
        py_raise_diags(st, ctx, rc, NULL);
        cake_unload(&ck);
        ctx_free(ctx);
        return NULL;
    }
    PyObject *ktype = PyObject_GetAttrString(m, "Kernel");
    if (!ktype) {
        cake_unload(&ck);
        ctx_free(ctx);
        return NULL;
    }
    PyObject *k = py_kernel_new(m, (PyTypeObject *)ktype, ctx, &ck, &params);
    Py_DECREF(ktype);
    return k;
}

static PyMethodDef mod_methods[] = {
    {"compile", (PyCFunction)(void (*)(void))mod_compile, METH_VARARGS | METH_KEYWORDS,
     "compile(source, is_path, kernel, target, set=None, name='<string>') -> Kernel"},
    {"device_info", mod_device_info, METH_O, "device_info(ordinal) -> dict"},
    {"open_library", py_open_library, METH_O,
     "open_library(path) -> Library: an artifact (*.cakelib) or a library folder"},
    {"set_stream_getter", mod_set_stream_getter, METH_O,
     "set_stream_getter(fn): fn(device index) -> the stream (an int) kernels launch on"},
    {"set_stream_setup", mod_set_stream_setup, METH_O,
     "set_stream_setup(fn): fn() is called once, at a launch, when torch is imported and no "
     "stream getter is set"},
    {NULL, NULL, 0, NULL},
};

/* ---- the module's state ------------------------------------------------------- */

static int mod_traverse(PyObject *m, visitproc visit, void *arg)
{
    PyState *st = mod_state(m);
    Py_VISIT(st->stream_getter);
    Py_VISIT(st->stream_setup);
    Py_VISIT(st->error);
    Py_VISIT(st->dtype_map);
    return 0;
}

static int mod_clear(PyObject *m)
{
    PyState *st = mod_state(m);
    Py_CLEAR(st->stream_getter);
    Py_CLEAR(st->stream_setup);
    Py_CLEAR(st->error);
    Py_CLEAR(st->dtype_map);
    PyObject **names[] = {&st->s_data_ptr, &st->s_shape, &st->s_stride, &st->s_dtype,
                          &st->s_device, &st->s_type, &st->s_index, &st->s_dlpack, &st->s_stream};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        Py_CLEAR(*names[i]);
    return 0;
}

/* kernels hold their type, which holds the module: they are gone by now */
static void mod_free(void *m)
{
    PyState *st = mod_state(m);
    mod_clear(m);
    for (int i = 0; i < PY_MAX_DEVICES; i++)
        rt_close(st->devs[i]);
}

static int init_state(PyObject *m, PyState *st)
{
    struct { PyObject **slot; const char *s; } names[] = {
        {&st->s_data_ptr, "data_ptr"}, {&st->s_shape, "shape"}, {&st->s_stride, "stride"},
        {&st->s_dtype, "dtype"}, {&st->s_device, "device"}, {&st->s_type, "type"},
        {&st->s_index, "index"}, {&st->s_dlpack, "__dlpack__"}, {&st->s_stream, "stream"},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!(*names[i].slot = PyUnicode_InternFromString(names[i].s)))
            return -1;
    st->dtype_map = PyDict_New();
    st->error = PyErr_NewExceptionWithDoc(
        "cake.CakeError",
        "A CAKE compile or load failed. str() is the diagnostics as cakec prints them; "
        "attributes: code, file, line, col, message, help (of the first error), "
        "diagnostics (all, as dicts), rc (1 input error, 2 compiler bug, 3 device or tool).",
        NULL, NULL);
    if (!st->dtype_map || !st->error)
        return -1;
    Py_INCREF(st->error);
    if (PyModule_AddObject(m, "CakeError", st->error) < 0) {
        Py_DECREF(st->error);
        return -1;
    }
    PyObject *kt = PyType_FromModuleAndSpec(m, &py_kernel_spec, NULL);
    if (!kt || PyModule_AddObject(m, "Kernel", kt) < 0) {
        Py_XDECREF(kt);
        return -1;
    }
    PyObject *lt = PyType_FromModuleAndSpec(m, &py_library_spec, NULL);
    if (!lt || PyModule_AddObject(m, "Library", lt) < 0) {
        Py_XDECREF(lt);
        return -1;
    }
    return PyModule_AddStringConstant(m, "version", CAKE_VERSION);
}

static struct PyModuleDef cake_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "cake._cake",
    .m_doc = "CAKE kernels from Python: the C half of the cake package",
    .m_size = sizeof(PyState),
    .m_methods = mod_methods,
    .m_traverse = mod_traverse,
    .m_clear = mod_clear,
    .m_free = mod_free,
};

PyMODINIT_FUNC PyInit__cake(void);

PyMODINIT_FUNC PyInit__cake(void)
{
    PyObject *m = PyModule_Create(&cake_module);
    if (!m)
        return NULL;
    PyState *st = mod_state(m);
    memset(st, 0, sizeof *st);
    if (init_state(m, st) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
