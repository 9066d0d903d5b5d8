/* test_hip_api.c — checks runtime/hip_api.h, our copy of the few HIP types
 * and constants hip.c uses, against the real hip/hip_runtime_api.h where it
 * is installed (Debian: libamdhip64-dev); without it there is nothing to
 * compare, and the test is skipped (exit 77).
 */
#include <stdio.h>

#if __has_include(<hip/hip_runtime_api.h>)
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>
#include <stddef.h>

#include "hip_api.h"

#define SAME(ours, theirs) _Static_assert((int)(ours) == (int)(theirs), #ours " != " #theirs)

SAME(HIP_OK, hipSuccess);
SAME(HIP_ERR_INVALID_VALUE, hipErrorInvalidValue);
SAME(HIP_ERR_OUT_OF_MEMORY, hipErrorOutOfMemory);
SAME(HIP_ERR_NO_DEVICE, hipErrorNoDevice);
SAME(HIP_ERR_INVALID_DEVICE, hipErrorInvalidDevice);
SAME(HIP_ERR_INVALID_IMAGE, hipErrorInvalidImage);
SAME(HIP_ERR_NO_BINARY_FOR_GPU, hipErrorNoBinaryForGpu);
SAME(HIP_ERR_NOT_FOUND, hipErrorNotFound);
SAME(HIP_ERR_NOT_READY, hipErrorNotReady);
SAME(HIP_ERR_ILLEGAL_ADDRESS, hipErrorIllegalAddress);
SAME(HIP_ERR_LAUNCH_OUT_OF_RESOURCES, hipErrorLaunchOutOfResources);
SAME(HIP_ERR_ASSERT, hipErrorAssert);
SAME(HIP_ERR_LAUNCH_FAILURE, hipErrorLaunchFailure);

SAME(HIP_ATTR_CLOCK_RATE, hipDeviceAttributeClockRate);
SAME(HIP_ATTR_L2_CACHE_SIZE, hipDeviceAttributeL2CacheSize);
SAME(HIP_ATTR_CC_MAJOR, hipDeviceAttributeComputeCapabilityMajor);
SAME(HIP_ATTR_MAX_THREADS_PER_BLOCK, hipDeviceAttributeMaxThreadsPerBlock);
SAME(HIP_ATTR_MEMORY_BUS_WIDTH, hipDeviceAttributeMemoryBusWidth);
SAME(HIP_ATTR_MEMORY_CLOCK_RATE, hipDeviceAttributeMemoryClockRate);
SAME(HIP_ATTR_CC_MINOR, hipDeviceAttributeComputeCapabilityMinor);
SAME(HIP_ATTR_MULTIPROCESSOR_COUNT, hipDeviceAttributeMultiprocessorCount);
SAME(HIP_ATTR_MAX_REGS_PER_MULTIPROCESSOR, hipDeviceAttributeMaxRegistersPerMultiprocessor);
SAME(HIP_ATTR_MAX_SHARED_PER_BLOCK, hipDeviceAttributeMaxSharedMemoryPerBlock);
SAME(HIP_ATTR_SHARED_PER_BLOCK_OPTIN, hipDeviceAttributeSharedMemPerBlockOptin);
SAME(HIP_ATTR_SHARED_PER_MULTIPROCESSOR, hipDeviceAttributeSharedMemPerMultiprocessor);
SAME(HIP_ATTR_WARP_SIZE, hipDeviceAttributeWarpSize);

SAME(HIP_FUNC_ATTR_MAX_THREADS_PER_BLOCK, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
SAME(HIP_FUNC_ATTR_SHARED_SIZE_BYTES, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
SAME(HIP_FUNC_ATTR_CONST_SIZE_BYTES, HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
SAME(HIP_FUNC_ATTR_LOCAL_SIZE_BYTES, HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
SAME(HIP_FUNC_ATTR_NUM_REGS, HIP_FUNC_ATTRIBUTE_NUM_REGS);
SAME(HIP_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES,
     HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);

SAME(HIP_STREAM_NON_BLOCKING, hipStreamNonBlocking);
SAME(HIP_HOST_MALLOC_MAPPED, hipHostMallocMapped);
SAME(HIP_STREAM_WAIT_VALUE_GTE, hipStreamWaitValueGte);

#if HIP_VERSION_MAJOR >= 6
SAME(HIP_PROPS_R0600_ARCH_OFFSET, offsetof(hipDeviceProp_t, gcnArchName));
#else
SAME(HIP_PROPS_R0000_ARCH_OFFSET, offsetof(hipDeviceProp_t, gcnArchName));
#endif
_Static_assert(sizeof(hipDeviceProp_t) <= HIP_PROPS_BUFFER_BYTES, "props buffer too small");

int main(void)
{
    printf("hip_api.h matches hip/hip_runtime_api.h of HIP %d.%d\n", HIP_VERSION_MAJOR,
           HIP_VERSION_MINOR);
    return 0;
}

#else

int main(void)
{
    printf("SKIP: no hip/hip_runtime_api.h to check runtime/hip_api.h against\n");
    return 77;
}

#endif
