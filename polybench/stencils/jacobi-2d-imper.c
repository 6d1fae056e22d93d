/* jacobi-2d-imper: time-iterated 5-point Jacobi smoothing of a 2D grid,
 * with an explicit copy back after each sweep. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define TSTEPS 4
#define N 20
#elif defined(SMALL_DATASET)
#define TSTEPS 20
#define N 120
#elif defined(LARGE_DATASET)
#define TSTEPS 500
#define N 2000
#else /* MEDIUM_DATASET */
#define TSTEPS 250
#define N 1000
#endif

static void init_data(int n, double A[N][N], double B[N][N])
{
  int i, j;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      A[i][j] = ((double)i * (j + 2) + 2) / n;
      B[i][j] = ((double)i * (j + 3) + 3) / n;
    }
}

static void kernel_jacobi_2d_imper(int tsteps, int n, double A[N][N], double B[N][N])
{
  int t, i, j;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][1 + j] + A[1 + i][j] + A[i - 1][j]);
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        A[i][j] = B[i][j];
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int n = N, tsteps = TSTEPS;
  double(*A)[N] = bench_alloc((size_t)N * N, sizeof(double));
  double(*B)[N] = bench_alloc((size_t)N * N, sizeof(double));

  init_data(n, A, B);

  bench_timer_start();
  kernel_jacobi_2d_imper(tsteps, n, A, B);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv)) {
    bench_dump_doubles("A", &A[0][0], (long)N * N);
    bench_dump_doubles("B", &B[0][0], (long)N * N);
  }

  free(A);
  free(B);
  return 0;
}
