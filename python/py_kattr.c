/* py_kattr.c — what a cake.Kernel tells about itself: its name, target,
 * arguments, parameters, code, device and launch cache, and its repr. */
#include "py_priv.h"
#include <stdio.h>

PyObject *py_kernel_cache_info(PyObject *self, PyObject *unused)
{
    PyKernel *kn = (PyKernel *)self;
    int used = 0;
    for (uint32_t s = 0; s < PY_CACHE_SLOTS; s++)
        used += kn->cache[s].used;
    return Py_BuildValue("{s:K,s:K,s:i,s:i}", "hits", kn->hits, "misses", kn->misses, "slots",
                         PY_CACHE_SLOTS, "used", used);
}

/* ---- attributes ----------------------------------------------------------------- */

static PyObject *get_name(PyObject *self, void *c)
{
    return PyUnicode_FromString(py_kernel_name((PyKernel *)self));
}

static PyObject *get_target(PyObject *self, void *c)
{
    return PyUnicode_FromString(ir_target_names[((PyKernel *)self)->ck.tg]);
}

/* [(name, declared type), ...] */
static PyObject *get_args(PyObject *self, void *c)
{
    PyKernel *kn = (PyKernel *)self;
    PyObject *l = PyList_New(0);
    for (uint32_t i = 0; l && i < kn->sig.nargs; i++) {
        char t[200];
        py_sig_type_text(kn->ctx, kn->ck.k, i, t, sizeof t);
        PyObject *e = Py_BuildValue("(ss)", kn->sig.args[i].name, t);
        if (!e || PyList_Append(l, e) < 0) {
            Py_XDECREF(e);
            Py_DECREF(l);
            return NULL;
        }
        Py_DECREF(e);
    }
    return l;
}

static PyObject *get_params(PyObject *self, void *c)
{
    PyKernel *kn = (PyKernel *)self;
    PyObject *d = PyDict_New();
    for (uint32_t j = 0; d && j < kn->ck.k->nparams; j++) {
        const Node *p = &kn->ck.k->nodes[kn->ck.k->params[j]];
        int64_t v;
        if (!shape_env_get(&kn->params, p->name, &v) &&
            !(p->a && shape_eval_int(kn->ctx, kn->ck.k, p->a, &kn->params, &v)))
            continue;
        PyObject *o = PyLong_FromLongLong(v);
        if (!o || PyDict_SetItemString(d, ir_symstr(kn->ctx, p->name), o) < 0) {
            Py_XDECREF(o);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(o);
    }
    return d;
}

static PyObject *get_image(PyObject *self, void *c)
{
    PyKernel *kn = (PyKernel *)self;
    if (!kn->ck.image)
        Py_RETURN_NONE;
    return PyBytes_FromStringAndSize(kn->ck.image, (Py_ssize_t)kn->ck.len);
}

static PyObject *get_device(PyObject *self, void *c)
{
    PyKernel *kn = (PyKernel *)self;
    if (kn->device < 0)
        Py_RETURN_NONE;
    return PyLong_FromLong(kn->device);
}

static PyObject *get_regs(PyObject *self, void *c)
{
    PyKernel *kn = (PyKernel *)self;
    if (kn->device < 0)
        Py_RETURN_NONE;
    return Py_BuildValue("{s:i,s:i,s:i}", "regs", kn->ck.info.regs, "local_bytes",
                         kn->ck.info.local_bytes, "static_shared_bytes",
                         kn->ck.info.static_shared_bytes);
}

PyGetSetDef py_kernel_getset[] = {
    {"name", get_name, NULL, "the kernel's name", NULL},
    {"target", get_target, NULL, "the target it was compiled for", NULL},
    {"args", get_args, NULL, "[(name, declared type)] in order", NULL},
    {"params", get_params, NULL, "the compile-time parameters' values", NULL},
    {"image", get_image, NULL, "the code (PTX text or an AMDGPU code object) as bytes", NULL},
    {"device", get_device, NULL, "the CUDA ordinal it is loaded on, or None", NULL},
    {"func_info", get_regs, NULL, "registers and memory per thread once loaded", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyObject *py_kernel_repr(PyObject *self)
{
    PyKernel *kn = (PyKernel *)self;
    char buf[1024];
    size_t used = (size_t)snprintf(buf, sizeof buf, "<cake.Kernel %s(", py_kernel_name(kn));
    for (uint32_t i = 0; i < kn->sig.nargs && used < sizeof buf; i++) {
        char t[200];
        py_sig_type_text(kn->ctx, kn->ck.k, i, t, sizeof t);
        used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s: %s", i ? ", " : "",
                                 kn->sig.args[i].name, t);
    }
    if (used < sizeof buf)
        snprintf(buf + used, sizeof buf - used, ") for %s>", ir_target_names[kn->ck.tg]);
    return PyUnicode_FromString(buf);
}

