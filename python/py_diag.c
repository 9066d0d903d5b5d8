/* py_diag.c — the compiler's diagnostics as a Python exception.
 *
 * CakeError's text is what `cakec` prints (file:line:col: error[E0123]:
 * message, the source line, the caret, notes, help); its attributes are the
 * first error's code, file, line, col, message and help (a list of lines),
 * `diagnostics` (every diagnostic as a dict with the same keys, plus
 * severity, end_line, end_col and notes) and `rc` (libcake's return code: 1
 * the input is wrong, 2 a compiler bug, 3 a device or tool problem).
 */
#include "py_priv.h"
#include <stdio.h>
#include <stdlib.h>

static const char *sev_name(int s)
{
    return s == SEV_ERROR ? "error" : s == SEV_WARNING ? "warning" : "note";
}

/* file, line, col, end_line, end_col of span s into dict d */
static int put_span(CakeCtx *ctx, PyObject *d, Span s)
{
    uint32_t line = 0, col = 0, el = 0, ec = 0;
    const char *file = NULL;
    if (s.file < ctx->nfiles) {
        span_linecol(ctx, s, &line, &col, &el, &ec);
        file = ctx->files[s.file].path;
    }
    PyObject *v = Py_BuildValue("{s:z,s:I,s:I,s:I,s:I}", "file", file, "line", line, "col", col,
                                "end_line", el, "end_col", ec);
    if (!v)
        return -1;
    int r = PyDict_Update(d, v);
    Py_DECREF(v);
    return r;
}

static PyObject *diag_dict(CakeCtx *ctx, const Diag *g)
{
    PyObject *d = Py_BuildValue("{s:s,s:s,s:s}", "code", ir_diag_info[g->code].code, "severity",
                                sev_name(g->severity), "message", g->msg ? g->msg : "");
    PyObject *help = PyList_New(0), *notes = PyList_New(0);
    int bad = !d || !help || !notes || put_span(ctx, d, g->span) < 0;
    for (uint32_t i = 0; !bad && i < g->nhelps; i++) {
        PyObject *h = PyUnicode_FromString(g->helps[i]);
        bad = !h || PyList_Append(help, h) < 0;
        Py_XDECREF(h);
    }
    for (uint32_t i = 0; !bad && i < g->nnotes; i++) {
        PyObject *n = Py_BuildValue("{s:s}", "message", g->notes[i].msg ? g->notes[i].msg : "");
        bad = !n || put_span(ctx, n, g->notes[i].span) < 0 || PyList_Append(notes, n) < 0;
        Py_XDECREF(n);
    }
    if (!bad)
        bad = PyDict_SetItemString(d, "help", help) < 0 ||
              PyDict_SetItemString(d, "notes", notes) < 0;
    Py_XDECREF(help);
    Py_XDECREF(notes);
    if (bad) {
        Py_XDECREF(d);
        return NULL;
    }
    return d;
}

/* the text rendering of every diagnostic, as cakec prints it */
static PyObject *diags_text(CakeCtx *ctx, const char *what)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return PyErr_NoMemory();
    if (what)
        fprintf(f, "%s\n", what);
    diag_print_text(ctx, f, 0);
    fclose(f);
    while (len && buf[len - 1] == '\n')
        len--;
    PyObject *s = PyUnicode_DecodeUTF8(buf, (Py_ssize_t)len, "replace");
    free(buf);
    return s;
}

static const char *first_error_keys[] = {"code", "file", "line", "col", "message", "help"};

PyObject *py_raise_diags(PyState *st, CakeCtx *ctx, int rc, const char *what)
{
    PyObject *list = PyList_New(0), *text = diags_text(ctx, what), *exc = NULL;
    PyObject *first = NULL;
    int bad = !list || !text;
    for (uint32_t i = 0; !bad && i < ctx->ndiags; i++) {
        PyObject *d = diag_dict(ctx, &ctx->diags[i]);
        bad = !d || PyList_Append(list, d) < 0;
        if (d && !first && ctx->diags[i].severity == SEV_ERROR)
            first = d;
        Py_XDECREF(d);
    }
    if (!bad)
        exc = PyObject_CallFunctionObjArgs(st->error, text, NULL);
    bad = !exc;
    if (!bad)
        bad = PyObject_SetAttrString(exc, "diagnostics", list) < 0;
    PyObject *rcv = PyLong_FromLong(rc);
    bad = bad || !rcv || PyObject_SetAttrString(exc, "rc", rcv) < 0;
    Py_XDECREF(rcv);
    for (size_t i = 0; !bad && i < sizeof first_error_keys / sizeof *first_error_keys; i++) {
        PyObject *v = first ? PyDict_GetItemString(first, first_error_keys[i]) : Py_None;
        bad = PyObject_SetAttrString(exc, first_error_keys[i], v ? v : Py_None) < 0;
    }
    if (!bad)
        PyErr_SetObject(st->error, exc);
    Py_XDECREF(exc);
    Py_XDECREF(list);
    Py_XDECREF(text);
    return NULL;
}
