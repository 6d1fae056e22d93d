/* trmm: triangular matrix multiply, B := alpha * A^T * B with A unit
 * lower triangular (its diagonal is implicitly one). */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define M 20
#define N 24
#elif defined(SMALL_DATASET)
#define M 60
#define N 80
#elif defined(LARGE_DATASET)
#define M 2000
#define N 2400
#else /* MEDIUM_DATASET */
#define M 1000
#define N 1100
#endif

static void init_data(int m, int n, double *alpha, double A[M][M], double B[M][N])
{
  int i, j;
  *alpha = 1.5;
  for (i = 0; i < m; i++) {
    for (j = 0; j < i; j++)
      A[i][j] = (double)((i + j) % m) / m;
    A[i][i] = 1.0;
    for (j = i + 1; j < m; j++)
      A[i][j] = -999.0; /* never read */
    for (j = 0; j < n; j++)
      B[i][j] = (double)((n + (i - j)) % n) / n;
  }
}

static void kernel_trmm(int m, int n, double alpha, double A[M][M], double B[M][N])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      for (k = i + 1; k < m; k++)
        B[i][j] += A[k][i] * B[k][j];
      B[i][j] = alpha * B[i][j];
    }
#pragma endscop
}

int main(int argc, char **argv)
{
  int m = M, n = N;
  double alpha;
  double(*A)[M] = bench_alloc((size_t)M * M, sizeof(double));
  double(*B)[N] = bench_alloc((size_t)M * N, sizeof(double));

  init_data(m, n, &alpha, A, B);

  bench_timer_start();
  kernel_trmm(m, n, alpha, A, B);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv))
    bench_dump_doubles("B", &B[0][0], (long)M * N);

  free(A);
  free(B);
  return 0;
}
