/* adi: alternating direction implicit method: in every time step, a
 * tridiagonal-style forward elimination and back substitution along the
 * rows, then the same along the columns. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define TSTEPS 2
#define N 20
#elif defined(SMALL_DATASET)
#define TSTEPS 10
#define N 100
#elif defined(LARGE_DATASET)
#define TSTEPS 50
#define N 2000
#else /* MEDIUM_DATASET */
#define TSTEPS 20
#define N 1000
#endif

static void init_data(int n, double X[N][N], double A[N][N], double B[N][N])
{
  int i, j;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      X[i][j] = ((double)i * (j + 1) + 1) / n;
      A[i][j] = 0.05 * ((double)((i * (j + 2)) % 7) + 1) / 8.0;
      B[i][j] = 2.0 + ((double)(i * (j + 3) % 5)) / 5.0;
    }
}

static void kernel_adi(int tsteps, int n, double X[N][N], double A[N][N], double B[N][N])
{
  int t, i1, i2;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i1 = 0; i1 < n; i1++)
      for (i2 = 1; i2 < n; i2++) {
        X[i1][i2] = X[i1][i2] - X[i1][i2 - 1] * A[i1][i2] / B[i1][i2 - 1];
        B[i1][i2] = B[i1][i2] - A[i1][i2] * A[i1][i2] / B[i1][i2 - 1];
      }
    for (i1 = 0; i1 < n; i1++)
      X[i1][n - 1] = X[i1][n - 1] / B[i1][n - 1];
    for (i1 = 0; i1 < n; i1++)
      for (i2 = 0; i2 < n - 2; i2++)
        X[i1][n - i2 - 2] = (X[i1][n - 2 - i2] - X[i1][n - 2 - i2 - 1] * A[i1][n - i2 - 3]) / B[i1][n - 3 - i2];
    for (i1 = 1; i1 < n; i1++)
      for (i2 = 0; i2 < n; i2++) {
        X[i1][i2] = X[i1][i2] - X[i1 - 1][i2] * A[i1][i2] / B[i1 - 1][i2];
        B[i1][i2] = B[i1][i2] - A[i1][i2] * A[i1][i2] / B[i1 - 1][i2];
      }
    for (i2 = 0; i2 < n; i2++)
      X[n - 1][i2] = X[n - 1][i2] / B[n - 1][i2];
    for (i1 = 0; i1 < n - 2; i1++)
      for (i2 = 0; i2 < n; i2++)
        X[n - 2 - i1][i2] = (X[n - 2 - i1][i2] - X[n - i1 - 3][i2] * A[n - 3 - i1][i2]) / B[n - 2 - i1][i2];
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int n = N, tsteps = TSTEPS;
  double(*X)[N] = bench_alloc((size_t)N * N, sizeof(double));
  double(*A)[N] = bench_alloc((size_t)N * N, sizeof(double));
  double(*B)[N] = bench_alloc((size_t)N * N, sizeof(double));

  init_data(n, X, A, B);

  bench_timer_start();
  kernel_adi(tsteps, n, X, A, B);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv)) {
    bench_dump_doubles("X", &X[0][0], (long)N * N);
    bench_dump_doubles("B", &B[0][0], (long)N * N);
  }

  free(X);
  free(A);
  free(B);
  return 0;
}
