// The judge's CUDA injection: loaded by the CUDA driver into a submission's process at cuInit
// (CUDA_INJECTION64_PATH), it does two things for the worker outside the sandbox.
//
// 1. The node's driver gate (worker/sandbox/gpu/driver_gate.py): one process of the node at a time
//    inside the CUDA driver's start-up or teardown, which the driver serializes across a node's
//    GPUs. On the socket named by FLASHJUDGE_GATE_FD this sends 'I' as cuInit loads it and waits
//    for the worker's 'G' (the gate is ours; the worker froze the process meanwhile and takes
//    that wait off its time), 'S' once the process's first context exists (start-up is over),
//    and 'T' when its teardown begins (the first context destroyed, or exit), after the GPU's
//    work is done, again waiting for 'G'.
// 2. The census: every kernel the process ran, by name and count, plus its copies and memsets
//    (CUPTI's activity records), written as JSON to FLASHJUDGE_CENSUS_PATH when the process
//    exits normally. worker/harness/census.py judges it with the same allow rule as Triton's.
//
// Both are claims of the submission's own process, which can stop them; what the worker does
// about a missing or short census is its business (held, never AC), not this file's.
// Build: nvcc -shared -Xcompiler -fPIC -o libfjcensus.so census_inject.c -lcupti
// (worker/harness/build.py). FLASHJUDGE_CENSUS_MODE=callback uses launch callbacks instead of
// activity records (cheaper; misses kernels launched inside CUDA graphs): bench only.
#include <cupti.h>
#include <dlfcn.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_NAMES 4096
#define BUFFER_BYTES (1 << 20)

typedef struct {
    char *name;
    unsigned long count;
} Entry;

static Entry table[MAX_NAMES];
static unsigned long overflow, memcpys, memsets, dropped, contexts;
// Where the GPU's work lay in time (CUPTI's clock, ns), for bench/neighbour_check.py's parts:
// first start and last end of the kernels and of the copies, and the time each was busy.
typedef struct {
    uint64_t first, last, busy;
} Span;
static Span kernel_span, copy_span;
static uint64_t cupti_at_init;  // CUPTI's clock when t_init_begin was read
static double t_init_begin, t_init_end, t_ctx;
static int gate_fd = -1;
static int teardown_asked;
static int callback_mode;
static CUpti_SubscriberHandle subscriber;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static unsigned long hash(const char *s) {
    unsigned long h = 1469598103934665603UL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211UL;
    return h;
}

static void count_name(const char *name) {
    if (name == NULL) name = "?";
    for (unsigned long i = hash(name), n = 0; n < MAX_NAMES; i++, n++) {
        Entry *e = &table[i % MAX_NAMES];
        if (e->name == NULL) {
            e->name = strdup(name);
            if (e->name == NULL) break;
            e->count = 1;
            return;
        }
        if (strcmp(e->name, name) == 0) {
            e->count++;
            return;
        }
    }
    overflow++;
}

static void add_span(Span *span, uint64_t start, uint64_t end) {
    if (end < start) return;
    if (span->first == 0 || start < span->first) span->first = start;
    if (end > span->last) span->last = end;
    span->busy += end - start;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
    *buffer = (uint8_t *)aligned_alloc(8, BUFFER_BYTES);
    *size = *buffer ? BUFFER_BYTES : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid) {
    CUpti_Activity *record = NULL;
    (void)ctx;
    (void)stream;
    (void)size;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
            record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
            CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)record;
            count_name(k->name);
            add_span(&kernel_span, k->start, k->end);
        } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
            CUpti_ActivityMemcpy6 *m = (CUpti_ActivityMemcpy6 *)record;
            add_span(&copy_span, m->start, m->end);
            memcpys++;
        } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY2) {
            memcpys++;
        } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
            memsets++;
        }
    }
    size_t lost = 0;
    if (cuptiActivityGetNumDroppedRecords(NULL, 0, &lost) == CUPTI_SUCCESS) dropped += lost;
    free(buffer);
}

static void say(char byte) {
    if (gate_fd >= 0 && write(gate_fd, &byte, 1) != 1) gate_fd = -1;
}

// The GPU's work is finished first, so no kernel runs while the process waits frozen.
static void synchronize(void) {
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (cuda == NULL) return;
    CUresult (*sync)(void) = (CUresult(*)(void))dlsym(cuda, "cuCtxSynchronize");
    if (sync != NULL) sync();
    dlclose(cuda);
}

// Ask for the gate and wait (frozen by the worker) until it is ours.
static void ask(char byte) {
    say(byte);
    struct pollfd p = {gate_fd, POLLIN, 0};
    char go;
    if (gate_fd >= 0 && poll(&p, 1, 120000) == 1 && read(gate_fd, &go, 1) == 1) return;  // 'G'
}

static void teardown_begins(void) {
    if (teardown_asked++ || gate_fd < 0) return;
    synchronize();
    ask('T');
}

static void CUPTIAPI on_callback(void *data, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                                 const void *info) {
    (void)data;
    if (domain == CUPTI_CB_DOMAIN_RESOURCE && id == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
        if (contexts++ == 0) {
            t_ctx = now();
            say('S');
        }
    } else if (domain == CUPTI_CB_DOMAIN_RESOURCE &&
               id == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
        teardown_begins();
    } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
        const CUpti_CallbackData *call = (const CUpti_CallbackData *)info;
        if (call->callbackSite == CUPTI_API_ENTER) count_name(call->symbolName);
    }
}

static const CUpti_CallbackId LAUNCHES[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
};

static void write_json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static void write_census(void) {
    double t_exit = now();
    if (!callback_mode) cuptiActivityFlushAll(1);
    const char *pattern = getenv("FLASHJUDGE_CENSUS_PATH");
    if (pattern == NULL || *pattern == '\0') return;
    char path[4096];
    size_t n = 0;
    for (const char *c = pattern; *c && n + 16 < sizeof(path); c++) {  // "%p": this process's pid
        if (c[0] == '%' && c[1] == 'p') {
            n += (size_t)snprintf(path + n, sizeof(path) - n, "%d", (int)getpid());
            c++;
        } else {
            path[n++] = *c;
        }
    }
    path[n] = '\0';
    FILE *f = fopen(path, "wx");  // never through a file the program left in our place
    if (f == NULL) return;
    fprintf(f, "{\"pid\": %d, \"mode\": \"%s\", \"contexts\": %lu, \"memcpy\": %lu, "
               "\"memset\": %lu, \"dropped\": %lu, \"overflow\": %lu, "
               "\"init_begin\": %.6f, \"init_end\": %.6f, \"ctx\": %.6f, \"exit\": %.6f, "
               "\"gpu_clock_at_init\": %llu, \"kernel_span\": [%llu, %llu, %llu], "
               "\"copy_span\": [%llu, %llu, %llu], \"kernels\": {",
            (int)getpid(), callback_mode ? "callback" : "activity", contexts, memcpys, memsets,
            dropped, overflow, t_init_begin, t_init_end, t_ctx, t_exit,
            (unsigned long long)cupti_at_init, (unsigned long long)kernel_span.first,
            (unsigned long long)kernel_span.last, (unsigned long long)kernel_span.busy,
            (unsigned long long)copy_span.first, (unsigned long long)copy_span.last,
            (unsigned long long)copy_span.busy);
    int first = 1;
    for (int i = 0; i < MAX_NAMES; i++) {
        if (table[i].name == NULL) continue;
        fputs(first ? "" : ", ", f);
        write_json_string(f, table[i].name);
        fprintf(f, ": %lu", table[i].count);
        first = 0;
    }
    fputs("}}\n", f);
    fclose(f);
}

static void at_exit(void) {
    write_census();
    teardown_begins();
}

static int enable_activity(void) {
    if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS)
        return 0;
    return cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS &&
           cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) == CUPTI_SUCCESS &&
           cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET) == CUPTI_SUCCESS;
}

static int enable_launch_callbacks(void) {
    for (size_t i = 0; i < sizeof(LAUNCHES) / sizeof(LAUNCHES[0]); i++) {
        if (cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, LAUNCHES[i]) !=
            CUPTI_SUCCESS)
            return 0;
    }
    return 1;
}

// Called by the driver during cuInit; returning 0 tells it the injection failed.
int InitializeInjection(void) {
    t_init_begin = now();
    cuptiGetTimestamp(&cupti_at_init);
    const char *fd = getenv("FLASHJUDGE_GATE_FD");
    if (fd != NULL && *fd != '\0') gate_fd = atoi(fd);
    if (gate_fd >= 0) ask('I');  // before the driver touches the device
    const char *mode = getenv("FLASHJUDGE_CENSUS_MODE");
    callback_mode = mode != NULL && strcmp(mode, "callback") == 0;
    if (cuptiSubscribe(&subscriber, (CUpti_CallbackFunc)on_callback, NULL) != CUPTI_SUCCESS)
        return 0;
    if (cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                            CUPTI_CBID_RESOURCE_CONTEXT_CREATED) != CUPTI_SUCCESS ||
        cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                            CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) != CUPTI_SUCCESS)
        return 0;
    if (!(callback_mode ? enable_launch_callbacks() : enable_activity())) return 0;
    atexit(at_exit);
    t_init_end = now();
    return 1;
}
