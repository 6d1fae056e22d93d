/* symm: symmetric matrix multiply, C := alpha * A * B + beta * C, where A
 * is symmetric and only its lower triangle is read. */
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
#define M 800
#define N 1000
#endif

static void init_data(int m, int n, double *alpha, double *beta, double C[M][N], double A[M][M], double B[M][N])
{
  int i, j;
  *alpha = 1.5;
  *beta = 1.2;
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      C[i][j] = (double)((i + j) % 100) / m;
      B[i][j] = (double)((n + i - j) % 100) / m;
    }
  for (i = 0; i < m; i++) {
    for (j = 0; j <= i; j++)
      A[i][j] = (double)((i + j) % 100) / m;
    for (j = i + 1; j < m; j++)
      A[i][j] = -999.0; /* never read */
  }
}

static void kernel_symm(int m, int n, double alpha, double beta, double C[M][N], double A[M][M], double B[M][N])
{
  int i, j, k;
  double acc;
#pragma scop
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      acc = 0.0;
      for (k = 0; k < i; k++) {
        C[k][j] += alpha * B[i][j] * A[i][k];
        acc += B[k][j] * A[i][k];
      }
      C[i][j] = beta * C[i][j] + alpha * B[i][j] * A[i][i] + alpha * acc;
    }
#pragma endscop
}

int main(int argc, char **argv)
{
  int m = M, n = N;
  double alpha, beta;
  double(*C)[N] = bench_alloc((size_t)M * N, sizeof(double));
  double(*A)[M] = bench_alloc((size_t)M * M, sizeof(double));
  double(*B)[N] = bench_alloc((size_t)M * N, sizeof(double));

  init_data(m, n, &alpha, &beta, C, A, B);

  bench_timer_start();
  kernel_symm(m, n, alpha, beta, C, A, B);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv))
    bench_dump_doubles("C", &C[0][0], (long)M * N);

  free(C);
  free(A);
  free(B);
  return 0;
}
