/* ludcmp: LU decomposition followed by forward and backward substitution,
 * solves A x = b (A diagonally dominant, no pivoting). */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define N 40
#elif defined(SMALL_DATASET)
#define N 120
#elif defined(LARGE_DATASET)
#define N 2800
#else /* MEDIUM_DATASET */
#define N 1300
#endif

static void init_data(int n, double A[N][N], double b[N], double x[N], double y[N])
{
  int i, j;
  for (i = 0; i < n; i++) {
    x[i] = 0.0;
    y[i] = 0.0;
    b[i] = (double)(i + 1) / n / 2.0 + 4.0;
    for (j = 0; j < n; j++)
      A[i][j] = (double)((i * 7 + j * 3) % 13) / (13.0 * n);
    A[i][i] = 2.0 + (double)(i % 5);
  }
}

static void kernel_ludcmp(int n, double A[N][N], double b[N], double x[N], double y[N])
{
  int i, j, k;
  double w;
#pragma scop
  for (i = 0; i < n; i++) {
    for (j = 0; j < i; j++) {
      w = A[i][j];
      for (k = 0; k < j; k++)
        w -= A[i][k] * A[k][j];
      A[i][j] = w / A[j][j];
    }
    for (j = i; j < n; j++) {
      w = A[i][j];
      for (k = 0; k < i; k++)
        w -= A[i][k] * A[k][j];
      A[i][j] = w;
    }
  }
  for (i = 0; i < n; i++) {
    w = b[i];
    for (j = 0; j < i; j++)
      w -= A[i][j] * y[j];
    y[i] = w;
  }
  for (i = n - 1; i >= 0; i--) {
    w = y[i];
    for (j = i + 1; j < n; j++)
      w -= A[i][j] * x[j];
    x[i] = w / A[i][i];
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int n = N;
  double(*A)[N] = bench_alloc((size_t)N * N, sizeof(double));
  double *b = bench_alloc(N, sizeof(double));
  double *x = bench_alloc(N, sizeof(double));
  double *y = bench_alloc(N, sizeof(double));

  init_data(n, A, b, x, y);

  bench_timer_start();
  kernel_ludcmp(n, A, b, x, y);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv)) {
    bench_dump_doubles("A", &A[0][0], (long)N * N);
    bench_dump_doubles("x", x, N);
    bench_dump_doubles("y", y, N);
  }

  free(A);
  free(b);
  free(x);
  free(y);
  return 0;
}
