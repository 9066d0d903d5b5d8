/* agent_curl.c — libcurl, opened with dlopen when `cakec agent` first needs
 * it. Linking it would load libcurl's ~30 shared libraries (TLS, Kerberos,
 * LDAP, ...) at the start of every cakec process, `check` included, which an
 * agent loop runs thousands of times; the CUDA driver and the code generator
 * are opened the same way. CAKE_LIBCURL names another library file. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include "agent.h"

static int sym(void *lib, const char *name, void **out, char *err, size_t errlen)
{
    *out = dlsym(lib, name);
    if (*out)
        return 1;
    snprintf(err, errlen, "libcurl has no `%s`", name);
    return 0;
}

int ag_curl_open(AgCurl *c, char *err, size_t errlen)
{
    if (c->lib)
        return 1;
    const char *name = getenv("CAKE_LIBCURL");
    if (!name || !*name)
        name = "libcurl.so.4";
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(err, errlen, "cannot load %s (%s): install libcurl4", name, dlerror());
        return 0;
    }
    /* object pointers stand for the function pointers until they are cast back */
    void *p[10];
    static const char *const names[10] = {
        "curl_global_init", "curl_global_cleanup", "curl_easy_init", "curl_easy_setopt",
        "curl_easy_perform", "curl_easy_getinfo", "curl_easy_cleanup", "curl_easy_strerror",
        "curl_slist_append", "curl_slist_free_all"};
    for (int i = 0; i < 10; i++)
        if (!sym(lib, names[i], &p[i], err, errlen)) {
            dlclose(lib);
            return 0;
        }
    *(void **)&c->global_init = p[0];
    *(void **)&c->global_cleanup = p[1];
    *(void **)&c->easy_init = p[2];
    *(void **)&c->easy_setopt = p[3];
    *(void **)&c->easy_perform = p[4];
    *(void **)&c->easy_getinfo = p[5];
    *(void **)&c->easy_cleanup = p[6];
    *(void **)&c->easy_strerror = p[7];
    *(void **)&c->slist_append = p[8];
    *(void **)&c->slist_free_all = p[9];
    c->lib = lib;
    return 1;
}

void ag_curl_close(AgCurl *c)
{
    if (c->lib)
        dlclose(c->lib);
    c->lib = NULL;
}
