/* seidel: time-iterated in-place 9-point Gauss-Seidel smoothing of a 2D
 * grid (each point reads already-updated neighbours). */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define TSTEPS 4
#define N 20
#elif defined(SMALL_DATASET)
#define TSTEPS 10
#define N 120
#elif defined(LARGE_DATASET)
#define TSTEPS 100
#define N 2000
#else /* MEDIUM_DATASET */
#define TSTEPS 30
#define N 1000
#endif

static void init_data(int n, double A[N][N])
{
  int i, j;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      A[i][j] = ((double)i * (j + 2) + 2) / n;
}

static void kernel_seidel(int tsteps, int n, double A[N][N])
{
  int t, i, j;
#pragma scop
  for (t = 0; t <= tsteps - 1; t++)
    for (i = 1; i <= n - 2; i++)
      for (j = 1; j <= n - 2; j++)
        A[i][j] = (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1] + A[i][j - 1] + A[i][j] + A[i][j + 1] +
                   A[i + 1][j - 1] + A[i + 1][j] + A[i + 1][j + 1]) / 9.0;
#pragma endscop
}

int main(int argc, char **argv)
{
  int n = N, tsteps = TSTEPS;
  double(*A)[N] = bench_alloc((size_t)N * N, sizeof(double));

  init_data(n, A);

  bench_timer_start();
  kernel_seidel(tsteps, n, A);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv))
    bench_dump_doubles("A", &A[0][0], (long)N * N);

  free(A);
  return 0;
}
