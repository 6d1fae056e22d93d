/* floyd-warshall: all-pairs shortest paths on a dense weighted graph,
 * relaxing every pair through each intermediate node in turn. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define N 30
#elif defined(SMALL_DATASET)
#define N 120
#elif defined(LARGE_DATASET)
#define N 2000
#else /* MEDIUM_DATASET */
#define N 700
#endif

static void init_data(int n, double D[N][N])
{
  int i, j;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      D[i][j] = (double)((i * j) % 13 + 1);
      if ((i + j) % 7 == 0 || (i * 3 + j) % 11 == 0)
        D[i][j] = 999.0;
      if (i == j)
        D[i][j] = 0.0;
    }
}

static void kernel_floyd_warshall(int n, double D[N][N])
{
  int i, j, k;
#pragma scop
  for (k = 0; k < n; k++)
    for (i = 0; i < n; i++)
      for (j = 0; j < n; j++)
        D[i][j] = D[i][j] < D[i][k] + D[k][j] ? D[i][j] : D[i][k] + D[k][j];
#pragma endscop
}

int main(int argc, char **argv)
{
  int n = N;
  double(*D)[N] = bench_alloc((size_t)N * N, sizeof(double));

  init_data(n, D);

  bench_timer_start();
  kernel_floyd_warshall(n, D);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv))
    bench_dump_doubles("D", &D[0][0], (long)N * N);

  free(D);
  return 0;
}
