/* heat-3d: time-iterated 7-point heat diffusion on a 3D grid, two
 * buffers updated in turn. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define TSTEPS 4
#define N 10
#elif defined(SMALL_DATASET)
#define TSTEPS 20
#define N 30
#elif defined(LARGE_DATASET)
#define TSTEPS 200
#define N 160
#else /* MEDIUM_DATASET */
#define TSTEPS 100
#define N 120
#endif

static void init_data(int n, double A[N][N][N], double B[N][N][N])
{
  int i, j, k;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      for (k = 0; k < n; k++) {
        A[i][j][k] = (double)(i + j + (n - k)) * 10 / n;
        B[i][j][k] = A[i][j][k];
      }
}

static void kernel_heat_3d(int tsteps, int n, double A[N][N][N], double B[N][N][N])
{
  int t, i, j, k;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        for (k = 1; k < n - 1; k++)
          B[i][j][k] = 0.125 * (A[i + 1][j][k] - 2.0 * A[i][j][k] + A[i - 1][j][k])
                     + 0.125 * (A[i][j + 1][k] - 2.0 * A[i][j][k] + A[i][j - 1][k])
                     + 0.125 * (A[i][j][k + 1] - 2.0 * A[i][j][k] + A[i][j][k - 1])
                     + A[i][j][k];
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        for (k = 1; k < n - 1; k++)
          A[i][j][k] = 0.125 * (B[i + 1][j][k] - 2.0 * B[i][j][k] + B[i - 1][j][k])
                     + 0.125 * (B[i][j + 1][k] - 2.0 * B[i][j][k] + B[i][j - 1][k])
                     + 0.125 * (B[i][j][k + 1] - 2.0 * B[i][j][k] + B[i][j][k - 1])
                     + B[i][j][k];
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int n = N, tsteps = TSTEPS;
  double(*A)[N][N] = bench_alloc((size_t)N * N * N, sizeof(double));
  double(*B)[N][N] = bench_alloc((size_t)N * N * N, sizeof(double));

  init_data(n, A, B);

  bench_timer_start();
  kernel_heat_3d(tsteps, n, A, B);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv))
    bench_dump_doubles("A", &A[0][0][0], (long)N * N * N);

  free(A);
  free(B);
  return 0;
}
