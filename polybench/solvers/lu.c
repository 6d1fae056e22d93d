/* lu: in-place LU decomposition without pivoting of a diagonally
 * dominant matrix, A = L U with L unit lower triangular. */
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

static void init_data(int n, double A[N][N])
{
  int i, j;
  for (i = 0; i < n; i++) {
    for (j = 0; j < n; j++)
      A[i][j] = (double)((i * 3 + j * 5) % 11) / (11.0 * n);
    A[i][i] = 2.0 + (double)(i % 4);
  }
}

static void kernel_lu(int n, double A[N][N])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < n; i++) {
    for (j = 0; j < i; j++) {
      for (k = 0; k < j; k++)
        A[i][j] -= A[i][k] * A[k][j];
      A[i][j] /= A[j][j];
    }
    for (j = i; j < n; j++)
      for (k = 0; k < i; k++)
        A[i][j] -= A[i][k] * A[k][j];
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int n = N;
  double(*A)[N] = bench_alloc((size_t)N * N, sizeof(double));

  init_data(n, A);

  bench_timer_start();
  kernel_lu(n, A);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv))
    bench_dump_doubles("A", &A[0][0], (long)N * N);

  free(A);
  return 0;
}
