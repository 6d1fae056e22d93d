/* cholesky: in-place Cholesky factorization A = L L^T of a symmetric
 * positive definite matrix (lower triangle). */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define N 40
#elif defined(SMALL_DATASET)
#define N 120
#elif defined(LARGE_DATASET)
#define N 3000
#else /* MEDIUM_DATASET */
#define N 1500
#endif

static void init_data(int n, double A[N][N])
{
  int i, j;
  /* Symmetric with a dominant positive diagonal, hence positive definite. */
  for (i = 0; i < n; i++) {
    for (j = 0; j < n; j++)
      A[i][j] = (double)((i + j) % 7 + 1) / (7.0 * n);
    A[i][i] = 1.0 + (double)(i % 3);
  }
}

static void kernel_cholesky(int n, double A[N][N])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < n; i++) {
    for (j = 0; j < i; j++) {
      for (k = 0; k < j; k++)
        A[i][j] -= A[i][k] * A[j][k];
      A[i][j] /= A[j][j];
    }
    for (k = 0; k < i; k++)
      A[i][i] -= A[i][k] * A[i][k];
    A[i][i] = sqrt(A[i][i]);
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int n = N;
  double(*A)[N] = bench_alloc((size_t)N * N, sizeof(double));

  init_data(n, A);

  bench_timer_start();
  kernel_cholesky(n, A);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv))
    bench_dump_doubles("A", &A[0][0], (long)N * N);

  free(A);
  return 0;
}
