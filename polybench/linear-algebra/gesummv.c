/* gesummv: sum of two matrix-vector products, y := alpha A x + beta B x. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define N 30
#elif defined(SMALL_DATASET)
#define N 250
#elif defined(LARGE_DATASET)
#define N 7000
#else /* MEDIUM_DATASET */
#define N 3500
#endif

static void init_data(int n, double *alpha, double *beta, double A[N][N], double B[N][N], double x[N])
{
  int i, j;
  *alpha = 1.5;
  *beta = 1.2;
  for (i = 0; i < n; i++) {
    x[i] = (double)(i % n) / n;
    for (j = 0; j < n; j++) {
      A[i][j] = (double)((i * j + 1) % n) / n;
      B[i][j] = (double)((i * j + 2) % n) / n;
    }
  }
}

static void kernel_gesummv(int n, double alpha, double beta, double A[N][N], double B[N][N], double tmp[N],
                           double x[N], double y[N])
{
  int i, j;
#pragma scop
  for (i = 0; i < n; i++) {
    tmp[i] = 0.0;
    y[i] = 0.0;
    for (j = 0; j < n; j++) {
      tmp[i] = A[i][j] * x[j] + tmp[i];
      y[i] = B[i][j] * x[j] + y[i];
    }
    y[i] = alpha * tmp[i] + beta * y[i];
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int n = N;
  double alpha, beta;
  double(*A)[N] = bench_alloc((size_t)N * N, sizeof(double));
  double(*B)[N] = bench_alloc((size_t)N * N, sizeof(double));
  double *tmp = bench_alloc(N, sizeof(double));
  double *x = bench_alloc(N, sizeof(double));
  double *y = bench_alloc(N, sizeof(double));

  init_data(n, &alpha, &beta, A, B, x);

  bench_timer_start();
  kernel_gesummv(n, alpha, beta, A, B, tmp, x, y);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv)) {
    bench_dump_doubles("tmp", tmp, N);
    bench_dump_doubles("y", y, N);
  }

  free(A);
  free(B);
  free(tmp);
  free(x);
  free(y);
  return 0;
}
