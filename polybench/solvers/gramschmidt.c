/* gramschmidt: QR decomposition of A (M x N, full column rank) by the
 * modified Gram-Schmidt process; A is overwritten. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define M 24
#define N 20
#elif defined(SMALL_DATASET)
#define M 80
#define N 60
#elif defined(LARGE_DATASET)
#define M 2000
#define N 1800
#else /* MEDIUM_DATASET */
#define M 900
#define N 800
#endif

static void init_data(int m, int n, double A[M][N], double R[N][N], double Q[M][N])
{
  int i, j;
  /* A small perturbation of the identity's first N columns: full rank. */
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      A[i][j] = (double)((i * j + 1) % m) / (4.0 * m) + (i == j ? 1.0 : 0.0);
      Q[i][j] = 0.0;
    }
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      R[i][j] = 0.0;
}

static void kernel_gramschmidt(int m, int n, double A[M][N], double R[N][N], double Q[M][N])
{
  int i, j, k;
  double nrm;
#pragma scop
  for (k = 0; k < n; k++) {
    nrm = 0.0;
    for (i = 0; i < m; i++)
      nrm += A[i][k] * A[i][k];
    R[k][k] = sqrt(nrm);
    for (i = 0; i < m; i++)
      Q[i][k] = A[i][k] / R[k][k];
    for (j = k + 1; j < n; j++) {
      R[k][j] = 0.0;
      for (i = 0; i < m; i++)
        R[k][j] += Q[i][k] * A[i][j];
      for (i = 0; i < m; i++)
        A[i][j] = A[i][j] - Q[i][k] * R[k][j];
    }
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int m = M, n = N;
  double(*A)[N] = bench_alloc((size_t)M * N, sizeof(double));
  double(*R)[N] = bench_alloc((size_t)N * N, sizeof(double));
  double(*Q)[N] = bench_alloc((size_t)M * N, sizeof(double));

  init_data(m, n, A, R, Q);

  bench_timer_start();
  kernel_gramschmidt(m, n, A, R, Q);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv)) {
    bench_dump_doubles("A", &A[0][0], (long)M * N);
    bench_dump_doubles("R", &R[0][0], (long)N * N);
    bench_dump_doubles("Q", &Q[0][0], (long)M * N);
  }

  free(A);
  free(R);
  free(Q);
  return 0;
}
