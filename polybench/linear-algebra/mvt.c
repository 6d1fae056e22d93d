/* mvt: two matrix-vector products with a matrix and its transpose,
 * x1 := x1 + A y1 and x2 := x2 + A^T y2. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define N 40
#elif defined(SMALL_DATASET)
#define N 200
#elif defined(LARGE_DATASET)
#define N 9000
#else /* MEDIUM_DATASET */
#define N 4000
#endif

static void init_data(int n, double x1[N], double x2[N], double y1[N], double y2[N], double A[N][N])
{
  int i, j;
  for (i = 0; i < n; i++) {
    x1[i] = (double)(i % n) / n;
    x2[i] = (double)((i + 1) % n) / n;
    y1[i] = (double)((i + 3) % n) / n;
    y2[i] = (double)((i + 4) % n) / n;
    for (j = 0; j < n; j++)
      A[i][j] = (double)(i * j % n) / n;
  }
}

static void kernel_mvt(int n, double x1[N], double x2[N], double y1[N], double y2[N], double A[N][N])
{
  int i, j;
#pragma scop
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      x1[i] = x1[i] + A[i][j] * y1[j];
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      x2[i] = x2[i] + A[j][i] * y2[j];
#pragma endscop
}

int main(int argc, char **argv)
{
  int n = N;
  double(*A)[N] = bench_alloc((size_t)N * N, sizeof(double));
  double *x1 = bench_alloc(N, sizeof(double));
  double *x2 = bench_alloc(N, sizeof(double));
  double *y1 = bench_alloc(N, sizeof(double));
  double *y2 = bench_alloc(N, sizeof(double));

  init_data(n, x1, x2, y1, y2, A);

  bench_timer_start();
  kernel_mvt(n, x1, x2, y1, y2, A);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv)) {
    bench_dump_doubles("x1", x1, N);
    bench_dump_doubles("x2", x2, N);
  }

  free(A);
  free(x1);
  free(x2);
  free(y1);
  free(y2);
  return 0;
}
