/* trisolv: forward substitution, solves L x = b for lower triangular L. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define N 40
#elif defined(SMALL_DATASET)
#define N 200
#elif defined(LARGE_DATASET)
#define N 8000
#else /* MEDIUM_DATASET */
#define N 4000
#endif

static void init_data(int n, double L[N][N], double x[N], double b[N])
{
  int i, j;
  for (i = 0; i < n; i++) {
    x[i] = -999.0;
    b[i] = (double)i;
    /* Small off-diagonal entries and a dominant diagonal keep x bounded. */
    for (j = 0; j < i; j++)
      L[i][j] = (double)((i + n - j + 1) % 10) / (10.0 * n);
    L[i][i] = 1.0 + (double)(i % 5) / 5.0;
    for (j = i + 1; j < n; j++)
      L[i][j] = 0.0;
  }
}

static void kernel_trisolv(int n, double L[N][N], double x[N], double b[N])
{
  int i, j;
#pragma scop
  for (i = 0; i < n; i++) {
    x[i] = b[i];
    for (j = 0; j < i; j++)
      x[i] -= L[i][j] * x[j];
    x[i] = x[i] / L[i][i];
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int n = N;
  double(*L)[N] = bench_alloc((size_t)N * N, sizeof(double));
  double *x = bench_alloc(N, sizeof(double));
  double *b = bench_alloc(N, sizeof(double));

  init_data(n, L, x, b);

  bench_timer_start();
  kernel_trisolv(n, L, x, b);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv))
    bench_dump_doubles("x", x, N);

  free(L);
  free(x);
  free(b);
  return 0;
}
