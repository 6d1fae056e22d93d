/* gemver: vector multiplication and matrix addition,
 * A := A + u1 v1^T + u2 v2^T, x := beta A^T y + z, w := alpha A x. */
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

static void init_data(int n, double *alpha, double *beta, double A[N][N], double u1[N], double v1[N],
                      double u2[N], double v2[N], double w[N], double x[N], double y[N], double z[N])
{
  int i, j;
  double fn = (double)n;
  *alpha = 1.5;
  *beta = 1.2;
  for (i = 0; i < n; i++) {
    u1[i] = i;
    u2[i] = ((i + 1) / fn) / 2.0;
    v1[i] = ((i + 1) / fn) / 4.0;
    v2[i] = ((i + 1) / fn) / 6.0;
    y[i] = ((i + 1) / fn) / 8.0;
    z[i] = ((i + 1) / fn) / 9.0;
    x[i] = 0.0;
    w[i] = 0.0;
    for (j = 0; j < n; j++)
      A[i][j] = (double)(i * j % n) / n;
  }
}

static void kernel_gemver(int n, double alpha, double beta, double A[N][N], double u1[N], double v1[N],
                          double u2[N], double v2[N], double w[N], double x[N], double y[N], double z[N])
{
  int i, j;
#pragma scop
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      A[i][j] = A[i][j] + u1[i] * v1[j] + u2[i] * v2[j];
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      x[i] = x[i] + beta * A[j][i] * y[j];
  for (i = 0; i < n; i++)
    x[i] = x[i] + z[i];
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      w[i] = w[i] + alpha * A[i][j] * x[j];
#pragma endscop
}

int main(int argc, char **argv)
{
  int n = N;
  double alpha, beta;
  double(*A)[N] = bench_alloc((size_t)N * N, sizeof(double));
  double *u1 = bench_alloc(N, sizeof(double));
  double *v1 = bench_alloc(N, sizeof(double));
  double *u2 = bench_alloc(N, sizeof(double));
  double *v2 = bench_alloc(N, sizeof(double));
  double *w = bench_alloc(N, sizeof(double));
  double *x = bench_alloc(N, sizeof(double));
  double *y = bench_alloc(N, sizeof(double));
  double *z = bench_alloc(N, sizeof(double));

  init_data(n, &alpha, &beta, A, u1, v1, u2, v2, w, x, y, z);

  bench_timer_start();
  kernel_gemver(n, alpha, beta, A, u1, v1, u2, v2, w, x, y, z);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv)) {
    bench_dump_doubles("A", &A[0][0], (long)N * N);
    bench_dump_doubles("x", x, N);
    bench_dump_doubles("w", w, N);
  }

  free(A);
  free(u1);
  free(v1);
  free(u2);
  free(v2);
  free(w);
  free(x);
  free(y);
  free(z);
  return 0;
}
