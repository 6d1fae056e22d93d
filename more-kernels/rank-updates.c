/* rank-updates: a matrix accumulates a sequence of rank-one updates,
 * A += u_t v_t^T for each t (the outer-product form of a product). */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define NT 8
#define N 24
#define M 20
#elif defined(SMALL_DATASET)
#define NT 40
#define N 120
#define M 100
#elif defined(LARGE_DATASET)
#define NT 800
#define N 2000
#define M 1800
#else /* MEDIUM_DATASET */
#define NT 600
#define N 1000
#define M 900
#endif

static void init_data(int nt, int n, int m, double A[N][M], double U[NT][N], double V[NT][M])
{
  int t, i, j;
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++)
      A[i][j] = (double)((i + j) % 9) / 9.0;
  for (t = 0; t < nt; t++)
    for (i = 0; i < n; i++)
      U[t][i] = (double)((t * i + 1) % 23) / 23.0;
  for (t = 0; t < nt; t++)
    for (j = 0; j < m; j++)
      V[t][j] = (double)((t + 5 * j) % 29) / 29.0 - 0.5;
}

static void kernel_rank_updates(int nt, int n, int m, double A[N][M], double U[NT][N],
                                double V[NT][M])
{
  int t, i, j;
#pragma scop
  for (t = 0; t < nt; t++)
    for (i = 0; i < n; i++)
      for (j = 0; j < m; j++)
        A[i][j] += U[t][i] * V[t][j];
#pragma endscop
}

int main(int argc, char **argv)
{
  int nt = NT, n = N, m = M;
  double(*A)[M] = bench_alloc((size_t)N * M, sizeof(double));
  double(*U)[N] = bench_alloc((size_t)NT * N, sizeof(double));
  double(*V)[M] = bench_alloc((size_t)NT * M, sizeof(double));

  init_data(nt, n, m, A, U, V);

  bench_timer_start();
  kernel_rank_updates(nt, n, m, A, U, V);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv))
    bench_dump_doubles("A", &A[0][0], (long)N * M);

  free(A);
  free(U);
  free(V);
  return 0;
}
