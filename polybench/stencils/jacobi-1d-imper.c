/* jacobi-1d-imper: time-iterated 3-point Jacobi smoothing of a 1D array,
 * with an explicit copy back after each sweep. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define TSTEPS 8
#define N 50
#elif defined(SMALL_DATASET)
#define TSTEPS 100
#define N 1000
#elif defined(LARGE_DATASET)
#define TSTEPS 50000
#define N 40000
#else /* MEDIUM_DATASET */
#define TSTEPS 24000
#define N 20000
#endif

static void init_data(int n, double A[N], double B[N])
{
  int i;
  for (i = 0; i < n; i++) {
    A[i] = ((double)i + 2) / n;
    B[i] = ((double)i + 3) / n;
  }
}

static void kernel_jacobi_1d_imper(int tsteps, int n, double A[N], double B[N])
{
  int t, i, j;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
    for (j = 1; j < n - 1; j++)
      A[j] = B[j];
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int n = N, tsteps = TSTEPS;
  double *A = bench_alloc(N, sizeof(double));
  double *B = bench_alloc(N, sizeof(double));

  init_data(n, A, B);

  bench_timer_start();
  kernel_jacobi_1d_imper(tsteps, n, A, B);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv)) {
    bench_dump_doubles("A", A, N);
    bench_dump_doubles("B", B, N);
  }

  free(A);
  free(B);
  return 0;
}
