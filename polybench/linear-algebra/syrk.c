/* syrk: symmetric rank-k update of the lower triangle,
 * C := alpha * A * A^T + beta * C. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define N 20
#define M 24
#elif defined(SMALL_DATASET)
#define N 70
#define M 80
#elif defined(LARGE_DATASET)
#define N 2000
#define M 2400
#else /* MEDIUM_DATASET */
#define N 1000
#define M 1100
#endif

static void init_data(int n, int m, double *alpha, double *beta, double C[N][N], double A[N][M])
{
  int i, j;
  *alpha = 1.5;
  *beta = 1.2;
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++)
      A[i][j] = (double)((i * j + 1) % n) / n;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      C[i][j] = (double)((i * j + 2) % m) / m;
}

static void kernel_syrk(int n, int m, double alpha, double beta, double C[N][N], double A[N][M])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < n; i++) {
    for (j = 0; j <= i; j++)
      C[i][j] *= beta;
    for (k = 0; k < m; k++)
      for (j = 0; j <= i; j++)
        C[i][j] += alpha * A[i][k] * A[j][k];
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int n = N, m = M;
  double alpha, beta;
  double(*C)[N] = bench_alloc((size_t)N * N, sizeof(double));
  double(*A)[M] = bench_alloc((size_t)N * M, sizeof(double));

  init_data(n, m, &alpha, &beta, C, A);

  bench_timer_start();
  kernel_syrk(n, m, alpha, beta, C, A);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv))
    bench_dump_doubles("C", &C[0][0], (long)N * N);

  free(C);
  free(A);
  return 0;
}
