/* hip_api.h — the few types and constants of the HIP runtime that hip.c
 * needs, declared here so that cakec builds without HIP headers (the HIP
 * library itself is loaded with dlopen).
 *
 * They mirror HIP's public API, hip/hip_runtime_api.h, and hold for ROCm 5.x
 * and 6.x alike: ROCm 6 renamed some device attributes to "Unused" but kept
 * every value below, and added new ones only after them. The names are ours
 * (HIP_ prefix) so that tests/runtime/test_hip_api.c can include both headers
 * and check each value against the real one where it is installed.
 */
#ifndef CAKE_HIP_API_H
#define CAKE_HIP_API_H

#include <stddef.h>
#include <stdint.h>

typedef int HipError;                          /* hipError_t */
typedef int HipDevice;                         /* hipDevice_t */
typedef struct ihipStream_t *HipStream;        /* hipStream_t */
typedef struct ihipEvent_t *HipEvent;          /* hipEvent_t */
typedef struct ihipModule_t *HipModule;        /* hipModule_t */
typedef struct ihipModuleSymbol_t *HipFunction; /* hipFunction_t */

enum { /* hipError_t */
    HIP_OK = 0,
    HIP_ERR_INVALID_VALUE = 1,
    HIP_ERR_OUT_OF_MEMORY = 2,          /* hipErrorOutOfMemory */
    HIP_ERR_NO_DEVICE = 100,
    HIP_ERR_INVALID_DEVICE = 101,
    HIP_ERR_INVALID_IMAGE = 200,
    HIP_ERR_NO_BINARY_FOR_GPU = 209,
    HIP_ERR_NOT_FOUND = 500,
    HIP_ERR_NOT_READY = 600,
    HIP_ERR_ILLEGAL_ADDRESS = 700,
    HIP_ERR_LAUNCH_OUT_OF_RESOURCES = 701,
    HIP_ERR_ASSERT = 710,
    HIP_ERR_LAUNCH_FAILURE = 719,
};

typedef enum { /* hipDeviceAttribute_t */
    HIP_ATTR_CLOCK_RATE = 5,                   /* kHz */
    HIP_ATTR_L2_CACHE_SIZE = 19,
    HIP_ATTR_CC_MAJOR = 23,
    HIP_ATTR_MAX_THREADS_PER_BLOCK = 56,
    HIP_ATTR_MEMORY_BUS_WIDTH = 59,
    HIP_ATTR_MEMORY_CLOCK_RATE = 60,           /* kHz */
    HIP_ATTR_CC_MINOR = 61,
    HIP_ATTR_MULTIPROCESSOR_COUNT = 63,
    HIP_ATTR_MAX_REGS_PER_MULTIPROCESSOR = 72,
    HIP_ATTR_MAX_SHARED_PER_BLOCK = 74,
    HIP_ATTR_SHARED_PER_BLOCK_OPTIN = 75,
    HIP_ATTR_SHARED_PER_MULTIPROCESSOR = 76,
    HIP_ATTR_WARP_SIZE = 87,
} HipDeviceAttr;

typedef enum { /* hipFunction_attribute */
    HIP_FUNC_ATTR_MAX_THREADS_PER_BLOCK = 0,
    HIP_FUNC_ATTR_SHARED_SIZE_BYTES = 1,
    HIP_FUNC_ATTR_CONST_SIZE_BYTES = 2,
    HIP_FUNC_ATTR_LOCAL_SIZE_BYTES = 3,
    HIP_FUNC_ATTR_NUM_REGS = 4,
    HIP_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
} HipFuncAttr;

#define HIP_STREAM_NON_BLOCKING 0x01   /* hipStreamNonBlocking */
#define HIP_HOST_MALLOC_MAPPED 0x2     /* hipHostMallocMapped */
#define HIP_STREAM_WAIT_VALUE_GTE 0x0  /* hipStreamWaitValueGte */

/* hipDeviceProp_t differs between ROCm 5 (hipGetDeviceProperties) and ROCm 6
 * (hipGetDevicePropertiesR0600); hip.c reads only gcnArchName from it, at
 * these offsets, out of a buffer larger than either struct. */
#define HIP_PROPS_R0000_ARCH_OFFSET 396
#define HIP_PROPS_R0600_ARCH_OFFSET 1160
#define HIP_PROPS_BUFFER_BYTES 4096
#define HIP_ARCH_NAME_BYTES 256

#endif
