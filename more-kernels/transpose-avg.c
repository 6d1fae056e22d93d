/* transpose-avg: repeatedly replaces a matrix by a blend of itself and
 * its transpose (a symmetrizing relaxation), through a second buffer. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define TSTEPS 3
#define N 24
#elif defined(SMALL_DATASET)
#define TSTEPS 10
#define N 200
#elif defined(LARGE_DATASET)
#define TSTEPS 40
#define N 4000
#else /* MEDIUM_DATASET */
#define TSTEPS 20
#define N 2000
#endif

static void init_data(int n, double A[N][N])
{
  int i, j;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      A[i][j] = (double)((i * 5 + j * 3) % n) / n;
}

static void kernel_transpose_avg(int tsteps, int n, double A[N][N], double B[N][N])
{
  int t, i, j;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 0; i < n; i++)
      for (j = 0; j < n; j++)
        B[i][j] = 0.75 * A[i][j] + 0.25 * A[j][i];
    for (i = 0; i < n; i++)
      for (j = 0; j < n; j++)
        A[i][j] = 0.5 * B[j][i] + 0.5 * B[i][j] + 0.001 * (double)t;
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int n = N, tsteps = TSTEPS;
  double(*A)[N] = bench_alloc((size_t)N * N, sizeof(double));
  double(*B)[N] = bench_alloc((size_t)N * N, sizeof(double));

  init_data(n, A);

  bench_timer_start();
  kernel_transpose_avg(tsteps, n, A, B);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv))
    bench_dump_doubles("A", &A[0][0], (long)N * N);

  free(A);
  free(B);
  return 0;
}
