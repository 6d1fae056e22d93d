/* atax: matrix transpose times matrix-vector product, y := A^T (A x). */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define M 38
#define N 42
#elif defined(SMALL_DATASET)
#define M 180
#define N 200
#elif defined(LARGE_DATASET)
#define M 8000
#define N 9000
#else /* MEDIUM_DATASET */
#define M 3800
#define N 4200
#endif

static void init_data(int m, int n, double A[M][N], double x[N])
{
  int i, j;
  for (j = 0; j < n; j++)
    x[j] = 1.0 + (double)j / n;
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++)
      A[i][j] = (double)((i + j) % n) / (5 * m);
}

static void kernel_atax(int m, int n, double A[M][N], double x[N], double y[N], double tmp[M])
{
  int i, j;
#pragma scop
  for (j = 0; j < n; j++)
    y[j] = 0.0;
  for (i = 0; i < m; i++) {
    tmp[i] = 0.0;
    for (j = 0; j < n; j++)
      tmp[i] = tmp[i] + A[i][j] * x[j];
    for (j = 0; j < n; j++)
      y[j] = y[j] + A[i][j] * tmp[i];
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int m = M, n = N;
  double(*A)[N] = bench_alloc((size_t)M * N, sizeof(double));
  double *x = bench_alloc(N, sizeof(double));
  double *y = bench_alloc(N, sizeof(double));
  double *tmp = bench_alloc(M, sizeof(double));

  init_data(m, n, A, x);

  bench_timer_start();
  kernel_atax(m, n, A, x, y, tmp);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv)) {
    bench_dump_doubles("y", y, N);
    bench_dump_doubles("tmp", tmp, M);
  }

  free(A);
  free(x);
  free(y);
  free(tmp);
  return 0;
}
