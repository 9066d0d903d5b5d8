/* clock.c — how many GPUs there are, where a device sits and how fast its
 * SMs run now (rt.h): the count from the driver (no context), the
 * PCI address from the driver's attributes, the SM clock from NVML, loaded
 * with dlopen like the drivers (cakec links nothing of NVIDIA's). A tuning
 * measurement records both, so that a table says which GPU measured what
 * and whether its clock held. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include "rt.h"

typedef int (*NvmlInit)(void);
typedef int (*NvmlShutdown)(void);
typedef int (*NvmlByBus)(const char *bus, void **dev);
typedef int (*NvmlClock)(void *dev, int type, unsigned *mhz);

enum { NVML_CLOCK_SM = 1 };

struct RtClock {
    void *lib, *dev;
    NvmlShutdown shutdown;
    NvmlClock clock;
};

int rt_gpu_count(void)
{
    const char *env = getenv("CAKE_LIBCUDA");
    void *lib = dlopen(env && *env ? env : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return 0;
    typedef int (*CuInit)(unsigned);
    typedef int (*CuCount)(int *);
    CuInit init = (CuInit)dlsym(lib, "cuInit");
    CuCount count = (CuCount)dlsym(lib, "cuDeviceGetCount");
    int n = 0;
    if (!init || !count || init(0) != 0 || count(&n) != 0)
        n = 0;
    return n; /* libcuda stays loaded: unloading an initialized driver is not safe */
}

void rt_pci_bus_id(const RtDevice *dev, char *buf, size_t cap)
{
    const RtDeviceInfo *i = rt_info(dev);
    snprintf(buf, cap, "%08X:%02X:%02X.0", (unsigned)i->pci_domain, (unsigned)i->pci_bus,
             (unsigned)i->pci_device);
}

RtClock *rt_clock_open(const RtDevice *dev)
{
    if (!dev || rt_info(dev)->backend != RT_CUDA)
        return NULL;
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return NULL;
    NvmlInit init = (NvmlInit)dlsym(lib, "nvmlInit_v2");
    NvmlByBus by_bus = (NvmlByBus)dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    RtClock *c = calloc(1, sizeof *c);
    char bus[32];
    rt_pci_bus_id(dev, bus, sizeof bus);
    if (c) {
        c->lib = lib;
        c->shutdown = (NvmlShutdown)dlsym(lib, "nvmlShutdown");
        c->clock = (NvmlClock)dlsym(lib, "nvmlDeviceGetClockInfo");
    }
    if (!c || !init || !by_bus || !c->clock || !c->shutdown || init() != 0) {
        free(c);
        dlclose(lib);
        return NULL;
    }
    if (by_bus(bus, &c->dev) != 0) {
        rt_clock_close(c);
        return NULL;
    }
    return c;
}

int rt_clock_sm_mhz(RtClock *c)
{
    unsigned mhz = 0;
    if (!c || c->clock(c->dev, NVML_CLOCK_SM, &mhz) != 0)
        return 0;
    return (int)mhz;
}

void rt_clock_close(RtClock *c)
{
    if (!c)
        return;
    c->shutdown();
    dlclose(c->lib);
    free(c);
}
