/* py_args.c — a call's Python arguments as PyArgVal.
 *
 * A tensor is anything with torch's duck type: data_ptr() (the device
 * address), shape, stride() (in elements; absent: row-major), dtype (torch's,
 * or a name: "bfloat16", "torch.float32", "bf16") and device (torch's, or a
 * string "cuda:0"). An object without data_ptr() but with __dlpack__() (CuPy,
 * JAX, ...) is read through DLPack. torch itself is never imported here, so
 * tests pass fake tensors with fake device pointers.
 */
#include "py_priv.h"
#include <stdlib.h>
#include <string.h>

/* ---- dtypes -------------------------------------------------------------- */

static const struct { const char *name; DType dt; } dtype_names[] = {
    {"float32", DT_F32}, {"float", DT_F32}, {"float16", DT_F16}, {"half", DT_F16},
    {"bfloat16", DT_BF16}, {"float64", DT_F64}, {"double", DT_F64},
    {"int8", DT_I8}, {"uint8", DT_U8}, {"int16", DT_I16}, {"short", DT_I16},
    {"uint16", DT_U16}, {"int32", DT_I32}, {"int", DT_I32}, {"uint32", DT_U32},
    {"int64", DT_I64}, {"long", DT_I64}, {"uint64", DT_U64}, {"bool", DT_BOOL},
    {"float8_e4m3fn", DT_E4M3}, {"float8_e5m2", DT_E5M2},
};

/* "torch.bfloat16", "bfloat16" or "bf16" -> DType; -1 when unknown */
static int dtype_of_name(const char *s)
{
    if (!strncmp(s, "torch.", 6))
        s += 6;
    for (size_t i = 0; i < sizeof dtype_names / sizeof dtype_names[0]; i++)
        if (!strcmp(s, dtype_names[i].name))
            return (int)dtype_names[i].dt;
    for (int d = 1; d < DT__COUNT; d++)
        if (!strcmp(s, ir_dtypes[d].spelling))
            return d;
    return -1;
}

/* the dtype object's DType through the module's map (filled as dtypes are seen) */
static int read_dtype(PyState *st, PyObject *dt, PyArgVal *v)
{
    PyObject *hit = PyDict_GetItemWithError(st->dtype_map, dt);
    if (hit) {
        v->dtype = (int)PyLong_AsLong(PyTuple_GetItem(hit, 0));
        v->dtype_name = PyUnicode_AsUTF8AndSize(PyTuple_GetItem(hit, 1), NULL);
        return v->dtype_name ? 0 : -1;
    }
    PyErr_Clear(); /* unhashable dtypes are read each time */
    PyObject *s = PyObject_Str(dt);
    const char *name = s ? PyUnicode_AsUTF8AndSize(s, NULL) : NULL;
    if (!name) {
        Py_XDECREF(s);
        return -1;
    }
    v->dtype = dtype_of_name(name);
    snprintf(v->dtype_buf, sizeof v->dtype_buf, "%s", name);
    v->dtype_name = v->dtype_buf;
    PyObject *entry = Py_BuildValue("(iO)", v->dtype, s);
    if (!entry || PyDict_SetItem(st->dtype_map, dt, entry) < 0)
        PyErr_Clear();
    Py_XDECREF(entry);
    Py_DECREF(s);
    return 0;
}

/* ---- devices ------------------------------------------------------------- */

/* "cuda", "cuda:1", "cpu" */
static void device_of_text(const char *s, PyArgVal *v)
{
    v->dev_index = 0;
    if (!strncmp(s, "cuda", 4) && (s[4] == 0 || s[4] == ':')) {
        v->dev_type = PY_DEV_CUDA;
        if (s[4] == ':')
            v->dev_index = atoi(s + 5);
    } else {
        v->dev_type = !strcmp(s, "cpu") ? PY_DEV_CPU : PY_DEV_OTHER;
    }
}

static int read_device(PyState *st, PyObject *dev, PyArgVal *v)
{
    if (PyUnicode_Check(dev)) {
        const char *s = PyUnicode_AsUTF8AndSize(dev, NULL);
        if (!s)
            return -1;
        device_of_text(s, v);
        return 0;
    }
    PyObject *type = PyObject_GetAttr(dev, st->s_type);
    const char *s = type && PyUnicode_Check(type) ? PyUnicode_AsUTF8AndSize(type, NULL) : NULL;
    if (!s) {
        Py_XDECREF(type);
        PyErr_Clear();
        v->dev_type = PY_DEV_OTHER;
        return 0;
    }
    device_of_text(s, v);
    Py_DECREF(type);
    PyObject *index = PyObject_GetAttr(dev, st->s_index);
    if (!index)
        return -1;
    if (index != Py_None)
        v->dev_index = (int)PyLong_AsLong(index);
    Py_DECREF(index);
    return PyErr_Occurred() ? -1 : 0;
}

/* ---- shapes and strides -------------------------------------------------- */

/* a sequence of ints (a tuple, torch.Size, a list) into out; its length, or -1 */
static int read_ints(PyObject *seq, int64_t *out, const char *what, const char *arg)
{
    Py_ssize_t n = PySequence_Size(seq);
    if (n < 0)
        return -1;
    if (n > IR_MAX_RANK) {
        PyErr_Format(PyExc_ValueError, "argument `%s`: rank %zd, but CAKE tensors have at most "
                     "%d dims", arg, n, IR_MAX_RANK);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = PySequence_GetItem(seq, i);
        out[i] = e ? PyLong_AsLongLong(e) : -1;
        Py_XDECREF(e);
        if (PyErr_Occurred()) {
            PyErr_Format(PyExc_TypeError, "argument `%s`: its %s is not a sequence of ints",
                         arg, what);
            return -1;
        }
    }
    return (int)n;
}

static void row_major(PyArgVal *v)
{
    int64_t s = 1;
    for (int j = v->rank; j-- > 0;) {
        v->stride[j] = s;
        s *= v->shape[j] ? v->shape[j] : 1;
    }
}

/* obj.name() (called as a method: no bound method is made), or obj.name when it
 * is not callable */
static PyObject *attr_or_call(PyObject *obj, PyObject *name)
{
    PyObject *r = PyObject_CallMethodObjArgs(obj, name, NULL);
    if (r || !PyErr_ExceptionMatches(PyExc_TypeError))
        return r;
    PyErr_Clear();
    PyObject *a = PyObject_GetAttr(obj, name);
    if (a && PyCallable_Check(a)) { /* callable: the TypeError was its own */
        Py_DECREF(a);
        return PyObject_CallMethodObjArgs(obj, name, NULL);
    }
    return a;
}

/* ---- DLPack -------------------------------------------------------------- */

/* the DLPack C ABI (dlpack.h, version 0.8): the parts read here */
typedef struct { int32_t device_type, device_id; } DLDevice;
typedef struct { uint8_t code, bits; uint16_t lanes; } DLDataType;
typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape, *strides;
    uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *);
} DLManagedTensor;
enum { DL_INT = 0, DL_UINT = 1, DL_FLOAT = 2, DL_BFLOAT = 4, DL_BOOL = 6 };
enum { DL_CPU = 1, DL_CUDA = 2, DL_CUDA_HOST = 3, DL_CUDA_MANAGED = 13 };

static int dl_dtype(DLDataType t)
{
    static const char kinds[] = {[DL_INT] = 'i', [DL_UINT] = 'u', [DL_FLOAT] = 'f',
                                 [DL_BFLOAT] = 'f', [DL_BOOL] = 'b'};
    if (t.lanes != 1 || t.code > DL_BOOL || !kinds[t.code])
        return -1;
    if (t.code == DL_BFLOAT)
        return t.bits == 16 ? DT_BF16 : -1;
    if (t.code == DL_BOOL)
        return DT_BOOL;
    for (int d = 1; d < DT__COUNT; d++)
        if (ir_dtypes[d].kind == kinds[t.code] && ir_dtypes[d].bits == t.bits && d != DT_BF16 &&
            d != DT_TF32 && d != DT_E4M3 && d != DT_E5M2)
            return d;
    return -1;
}

/* the capsule stays unconsumed: its destructor calls the producer's deleter;
 * the memory stays valid while the caller holds obj */
static int read_dlpack(PyState *st, PyObject *obj, const char *arg, PyArgVal *v)
{
    PyObject *cap = PyObject_CallMethodObjArgs(obj, st->s_dlpack, NULL);
    if (!cap)
        return -1;
    DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
    if (!m) {
        Py_DECREF(cap);
        return -1;
    }
    const DLTensor *t = &m->dl_tensor;
    v->ptr = (RtPtr)(uintptr_t)t->data + t->byte_offset;
    v->dtype = dl_dtype(t->dtype);
    snprintf(v->dtype_buf, sizeof v->dtype_buf, "DLPack(code %u, %u bits)", t->dtype.code,
             t->dtype.bits);
    v->dtype_name = v->dtype >= 0 ? ir_dtypes[v->dtype].spelling : v->dtype_buf;
    v->dev_type = t->device.device_type == DL_CUDA || t->device.device_type == DL_CUDA_MANAGED
                      ? PY_DEV_CUDA
                      : t->device.device_type == DL_CPU || t->device.device_type == DL_CUDA_HOST
                            ? PY_DEV_CPU
                            : PY_DEV_OTHER;
    v->dev_index = t->device.device_id;
    int ok = t->ndim >= 0 && t->ndim <= IR_MAX_RANK;
    if (ok) {
        v->rank = t->ndim;
        for (int j = 0; j < v->rank; j++)
            v->shape[j] = t->shape[j];
        if (t->strides)
            for (int j = 0; j < v->rank; j++)
                v->stride[j] = t->strides[j];
        else
            row_major(v);
    }
    Py_DECREF(cap);
    if (!ok)
        PyErr_Format(PyExc_ValueError, "argument `%s`: rank %d, but CAKE tensors have at most "
                     "%d dims", arg, t->ndim, IR_MAX_RANK);
    return ok ? 0 : -1;
}

/* ---- tensors and scalars -------------------------------------------------- */

static int not_a_tensor(const char *arg, PyObject *obj)
{
    PyObject *tn = PyType_GetName(Py_TYPE(obj));
    PyErr_Format(PyExc_TypeError, "argument `%s`: expected a tensor (an object with "
                 "data_ptr(), shape, stride(), dtype and device, or __dlpack__), got %S",
                 arg, tn ? tn : Py_None);
    Py_XDECREF(tn);
    return -1;
}

static int read_tensor(PyState *st, const char *arg, PyObject *obj, PyArgVal *v)
{
    v->tensor = 1;
    PyObject *p = attr_or_call(obj, st->s_data_ptr);
    if (!p) {
        PyErr_Clear();
        if (PyObject_HasAttr(obj, st->s_dlpack))
            return read_dlpack(st, obj, arg, v);
        return not_a_tensor(arg, obj);
    }
    v->ptr = (RtPtr)PyLong_AsUnsignedLongLongMask(p);
    Py_DECREF(p);
    if (PyErr_Occurred())
        return not_a_tensor(arg, obj);
    PyObject *shape = PyObject_GetAttr(obj, st->s_shape);
    int r = shape ? read_ints(shape, v->shape, "shape", arg) : -1;
    Py_XDECREF(shape);
    if (r < 0)
        return shape ? -1 : not_a_tensor(arg, obj);
    v->rank = r;
    for (int j = 0; j < r; j++)
        if (v->shape[j] < 0) {
            PyErr_Format(PyExc_ValueError, "argument `%s`: dim %d of its shape is %lld", arg, j,
                         (long long)v->shape[j]);
            return -1;
        }
    PyObject *stride = attr_or_call(obj, st->s_stride);
    if (stride) {
        r = read_ints(stride, v->stride, "stride()", arg);
        Py_DECREF(stride);
        if (r < 0)
            return -1;
        if (r != v->rank) {
            PyErr_Format(PyExc_ValueError, "argument `%s`: %d strides for %d dims", arg, r,
                         v->rank);
            return -1;
        }
    } else {
        PyErr_Clear();
        row_major(v);
    }
    PyObject *dt = PyObject_GetAttr(obj, st->s_dtype);
    if (!dt || read_dtype(st, dt, v) < 0) {
        Py_XDECREF(dt);
        return dt ? -1 : not_a_tensor(arg, obj);
    }
    Py_DECREF(dt);
    PyObject *dev = PyObject_GetAttr(obj, st->s_device);
    if (!dev)
        return not_a_tensor(arg, obj);
    r = read_device(st, dev, v);
    Py_DECREF(dev);
    return r;
}

static int read_scalar(const PySigArg *s, PyObject *obj, PyArgVal *v)
{
    v->tensor = 0;
    if (PyFloat_Check(obj)) {
        v->is_float = 1;
        v->f = PyFloat_AsDouble(obj);
        v->i = (int64_t)v->f;
        return 0;
    }
    PyObject *idx = PyNumber_Check(obj) ? PyNumber_Index(obj) : NULL;
    if (idx) {
        v->i = PyLong_AsLongLong(idx);
        v->f = (double)v->i;
        Py_DECREF(idx);
        if (PyErr_Occurred()) {
            PyErr_Format(PyExc_OverflowError, "argument `%s`: %S does not fit 64 bits", s->name,
                         obj);
            return -1;
        }
        return 0;
    }
    PyErr_Clear();
    double f = PyNumber_Check(obj) ? PyFloat_AsDouble(obj) : -1.0;
    if (!PyErr_Occurred() && PyNumber_Check(obj)) {
        v->is_float = 1;
        v->f = f;
        v->i = (int64_t)f;
        return 0;
    }
    PyErr_Clear();
    PyObject *tn = PyType_GetName(Py_TYPE(obj));
    PyErr_Format(PyExc_TypeError, "argument `%s`: expected a number (the kernel declares %s), "
                 "got %S", s->name, ir_dtypes[s->dtype].spelling, tn ? tn : Py_None);
    Py_XDECREF(tn);
    return -1;
}

int py_read_arg(PyState *st, const PySig *sig, uint32_t i, PyObject *obj, PyArgVal *v)
{
    const PySigArg *s = &sig->args[i];
    memset(v, 0, sizeof *v);
    if (s->tensor)
        return read_tensor(st, s->name, obj, v);
    if (PyObject_HasAttr(obj, st->s_data_ptr)) {
        PyErr_Format(PyExc_TypeError, "argument `%s`: expected a number (the kernel declares "
                     "%s), got a tensor", s->name, ir_dtypes[s->dtype].spelling);
        return -1;
    }
    return read_scalar(s, obj, v);
}
