/* tma.c — Hopper tensor-map descriptors: the rules of cuTensorMapEncodeTiled
 * checked on the host with a message per rule (so a bad box is reported as
 * such, not as CUDA_ERROR_INVALID_VALUE), then the encoding by the backend.
 */
#include "backend.h"

#include <stdarg.h>
#include <stdio.h>

static const unsigned elem_bytes[] = { /* ORDER RtTmaDtype */
    1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4,
};

static RtStatus bad(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static RtStatus bad(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return RT_INVALID;
}

static bool is_float(RtTmaDtype t)
{
    return t >= RT_TMA_F16;
}

static RtStatus check_dims(const RtTmaDesc *d, unsigned esize, char *err, size_t errlen)
{
    for (unsigned i = 0; i < d->rank; i++) {
        if (d->dims[i] == 0 || d->dims[i] > ((uint64_t)1 << 32))
            return bad(err, errlen, "tensor map dim %u is %llu; it must be in 1..2^32", i,
                       (unsigned long long)d->dims[i]);
        if (d->box[i] == 0 || d->box[i] > 256)
            return bad(err, errlen, "tensor map box dim %u is %u; it must be in 1..256", i,
                       d->box[i]);
        uint32_t es = d->elem_strides[i] ? d->elem_strides[i] : 1;
        if (es > 8)
            return bad(err, errlen, "tensor map element stride %u is %u; at most 8", i, es);
    }
    if ((d->box[0] * esize) % 16)
        return bad(err, errlen,
                   "tensor map inner box is %u bytes (%u elements of %u bytes); it must be "
                   "a multiple of 16", d->box[0] * esize, d->box[0], esize);
    return RT_OK;
}

static RtStatus check_strides(const RtTmaDesc *d, char *err, size_t errlen)
{
    for (unsigned i = 0; i + 1 < d->rank; i++) {
        uint64_t s = d->strides[i];
        if (s % 16 || s == 0 || s >= ((uint64_t)1 << 40))
            return bad(err, errlen,
                       "tensor map stride of dim %u is %llu bytes; it must be a nonzero "
                       "multiple of 16 below 2^40", i + 1, (unsigned long long)s);
    }
    return RT_OK;
}

static RtStatus check_modes(const RtTmaDesc *d, unsigned esize, char *err, size_t errlen)
{
    unsigned sw = d->swizzle;
    if (sw != 0 && sw != 32 && sw != 64 && sw != 128)
        return bad(err, errlen, "tensor map swizzle %u; it must be 0, 32, 64 or 128 bytes",
                   sw);
    if (sw && d->box[0] * esize > sw)
        return bad(err, errlen,
                   "tensor map inner box is %u bytes, wider than its %u-byte swizzle",
                   d->box[0] * esize, sw);
    unsigned l2 = d->l2_promote;
    if (l2 != 0 && l2 != 64 && l2 != 128 && l2 != 256)
        return bad(err, errlen, "tensor map L2 promotion %u; it must be 0, 64, 128 or 256",
                   l2);
    if (d->oob_nan && !is_float(d->dtype))
        return bad(err, errlen, "tensor map NaN fill needs a floating-point dtype");
    return RT_OK;
}

RtStatus rt_tma_check(const RtTmaDesc *d, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if ((unsigned)d->dtype > RT_TMA_TF32_FTZ)
        return bad(err, errlen, "tensor map dtype %d is unknown", (int)d->dtype);
    if (d->rank < 1 || d->rank > 5)
        return bad(err, errlen, "tensor map rank %u; it must be 1..5", d->rank);
    if (d->base % 16)
        return bad(err, errlen, "tensor map base 0x%llx is not 16-byte aligned",
                   (unsigned long long)d->base);
    unsigned esize = elem_bytes[d->dtype];
    RtStatus st = check_dims(d, esize, err, errlen);
    if (st == RT_OK)
        st = check_strides(d, err, errlen);
    if (st == RT_OK)
        st = check_modes(d, esize, err, errlen);
    return st;
}

RtStatus rt_tma_encode(RtDevice *dev, const RtTmaDesc *d, RtTensorMap *out)
{
    RtStatus st = rt__enter(dev);
    if (st != RT_OK)
        return st;
    char why[512];
    if (rt_tma_check(d, why, sizeof why) != RT_OK)
        return rt__fail(dev, RT_INVALID, "%s", why);
    return dev->ops->tma_encode(dev, d, out);
}
