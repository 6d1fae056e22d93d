/*
 * polytune_bench.h: the one shared header of the polytune kernel corpus.
 *
 * Each kernel is a stand-alone C program: it allocates and deterministically
 * initializes its data, times its kernel (the region between `#pragma scop`
 * and `#pragma endscop`), prints the time and, on request, dumps its outputs
 * so that a transformed variant can be verified against the original.
 *
 * Protocol (read by polytune's runner):
 *   ./kernel          prints one line "polytune-time: <seconds>" on stderr
 *   ./kernel --dump   also writes every output array to stdout:
 *                         begin <name> <count>[ bits]
 *                         <one value per line>
 *                         end <name>
 *                     integers in decimal; doubles (`bits`) as the 16
 *                     hexadecimal digits of their IEEE-754 representation,
 *                     exact and far faster to print than decimal.
 *
 * Dataset size is chosen at compile time with exactly one of
 * -DMINI_DATASET, -DSMALL_DATASET, -DMEDIUM_DATASET (the default) or
 * -DLARGE_DATASET.
 */
#ifndef POLYTUNE_BENCH_H
#define POLYTUNE_BENCH_H

/* `#pragma scop` / `#pragma endscop` delimit the kernels for polytune; the
   back-end compilers need not hear about them. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas"

#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if !defined(MINI_DATASET) && !defined(SMALL_DATASET) && \
    !defined(MEDIUM_DATASET) && !defined(LARGE_DATASET)
#define MEDIUM_DATASET
#endif

/* Monotonic wall-clock seconds. */
static inline double bench_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline double *bench_timer_slot(void)
{
  static double slot[2];
  return slot;
}

#ifdef POLYTUNE_PAPI
/* Hardware counters around the kernel (build with -DPOLYTUNE_PAPI -lpapi).
 * Each event that can be added is counted; the counts are printed on stderr
 * as "polytune-counter: NAME VALUE" lines. */
#include <papi.h>
#define BENCH_PAPI_MAX 16
static const char *bench_papi_names[] = {"PAPI_TOT_INS", "PAPI_LD_INS", "PAPI_SR_INS", "PAPI_L1_DCM",
                                         "PAPI_L1_ICM",  "PAPI_L1_LDM", "PAPI_L1_STM", "PAPI_L2_TCM",
                                         "PAPI_L3_TCM",  "PAPI_BR_CN",  "PAPI_BR_MSP", NULL};
static inline int *bench_papi_state(void)
{
  /* [0] event set, [1] number added, [2..] index of each added name */
  static int state[2 + BENCH_PAPI_MAX] = {PAPI_NULL, 0};
  return state;
}

static inline void bench_papi_start(void)
{
  int *st = bench_papi_state();
  int i, rc;
  if ((rc = PAPI_library_init(PAPI_VER_CURRENT)) != PAPI_VER_CURRENT) {
    fprintf(stderr, "polytune-papi-error: PAPI_library_init: %s\n", PAPI_strerror(rc));
    return;
  }
  if ((rc = PAPI_create_eventset(&st[0])) != PAPI_OK) {
    fprintf(stderr, "polytune-papi-error: PAPI_create_eventset: %s\n", PAPI_strerror(rc));
    return;
  }
  for (i = 0; bench_papi_names[i] != NULL && st[1] < BENCH_PAPI_MAX; i++) {
    rc = PAPI_add_named_event(st[0], bench_papi_names[i]);
    if (rc == PAPI_OK)
      st[2 + st[1]++] = i;
    else
      fprintf(stderr, "polytune-papi-skipped: %s %s\n", bench_papi_names[i], PAPI_strerror(rc));
  }
  if (st[1] > 0 && (rc = PAPI_start(st[0])) != PAPI_OK) {
    fprintf(stderr, "polytune-papi-error: PAPI_start: %s\n", PAPI_strerror(rc));
    st[1] = 0;
  }
}

static inline void bench_papi_stop(void)
{
  int *st = bench_papi_state();
  long long values[BENCH_PAPI_MAX];
  int i, rc;
  if (st[1] == 0)
    return;
  if ((rc = PAPI_stop(st[0], values)) != PAPI_OK) {
    fprintf(stderr, "polytune-papi-error: PAPI_stop: %s\n", PAPI_strerror(rc));
    return;
  }
  for (i = 0; i < st[1]; i++)
    fprintf(stderr, "polytune-counter: %s %lld\n", bench_papi_names[st[2 + i]], values[i]);
}
#else
static inline void bench_papi_start(void) {}
static inline void bench_papi_stop(void) {}
#endif

static inline void bench_timer_start(void)
{
  bench_papi_start();
  bench_timer_slot()[0] = bench_now();
}

static inline void bench_timer_stop(void)
{
  bench_timer_slot()[1] = bench_now();
  bench_papi_stop();
}

static inline void bench_timer_print(void)
{
  double *t = bench_timer_slot();
  fprintf(stderr, "polytune-time: %.9f\n", t[1] - t[0]);
}

/* Zeroed, 64-byte aligned storage for `count` elements; exits on failure. */
static inline void *bench_alloc(size_t count, size_t elem_size)
{
  void *p = NULL;
  size_t bytes = count * elem_size;
  if (bytes == 0)
    bytes = elem_size;
  if (posix_memalign(&p, 64, bytes) != 0 || p == NULL) {
    fprintf(stderr, "polytune-bench: cannot allocate %zu bytes\n", bytes);
    exit(2);
  }
  memset(p, 0, bytes);
  return p;
}

/* True when the program was asked to dump its outputs. */
static inline int bench_dump_wanted(int argc, char **argv)
{
  return argc > 1 && strcmp(argv[1], "--dump") == 0;
}

static inline void bench_dump_doubles(const char *name, const double *data, long count)
{
  static const char digits[] = "0123456789abcdef";
  char buf[17 * 512];
  long i, n = 0;
  int k;
  printf("begin %s %ld bits\n", name, count);
  for (i = 0; i < count; i++) {
    uint64_t b;
    memcpy(&b, &data[i], sizeof b);
    for (k = 15; k >= 0; k--) {
      buf[n + k] = digits[b & 15];
      b >>= 4;
    }
    buf[n + 16] = '\n';
    n += 17;
    if (n == (long)sizeof buf) {
      fwrite(buf, 1, (size_t)n, stdout);
      n = 0;
    }
  }
  fwrite(buf, 1, (size_t)n, stdout);
  printf("end %s\n", name);
}

static inline void bench_dump_ints(const char *name, const int *data, long count)
{
  long i;
  printf("begin %s %ld\n", name, count);
  for (i = 0; i < count; i++)
    printf("%d\n", data[i]);
  printf("end %s\n", name);
}

static inline void bench_dump_double(const char *name, double value)
{
  bench_dump_doubles(name, &value, 1);
}

static inline void bench_dump_int(const char *name, int value)
{
  bench_dump_ints(name, &value, 1);
}

#endif /* POLYTUNE_BENCH_H */
