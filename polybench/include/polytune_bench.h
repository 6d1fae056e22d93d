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
 *                         begin <name> <count>
 *                         <one value per line>
 *                         end <name>
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

static inline void bench_timer_start(void) { bench_timer_slot()[0] = bench_now(); }

static inline void bench_timer_stop(void) { bench_timer_slot()[1] = bench_now(); }

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
  long i;
  printf("begin %s %ld\n", name, count);
  for (i = 0; i < count; i++)
    printf("%.17g\n", data[i]);
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
