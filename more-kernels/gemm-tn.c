/* gemm-tn: a matrix product with the first operand transposed,
 * C := A^T * B (A stored k-major), the layout of normal equations. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define NI 20
#define NJ 24
#define NK 28
#elif defined(SMALL_DATASET)
#define NI 60
#define NJ 70
#define NK 80
#elif defined(LARGE_DATASET)
#define NI 1600
#define NJ 1800
#define NK 2000
#else /* MEDIUM_DATASET */
#define NI 700
#define NJ 800
#define NK 900
#endif

static void init_data(int ni, int nj, int nk, double A[NK][NI], double B[NK][NJ])
{
  int i, j, k;
  for (k = 0; k < nk; k++)
    for (i = 0; i < ni; i++)
      A[k][i] = (double)((k * (i + 3)) % ni) / ni;
  for (k = 0; k < nk; k++)
    for (j = 0; j < nj; j++)
      B[k][j] = (double)((k + 2 * j) % nj) / nj;
}

static void kernel_gemm_tn(int ni, int nj, int nk, double A[NK][NI], double B[NK][NJ],
                           double C[NI][NJ])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < ni; i++)
    for (j = 0; j < nj; j++) {
      C[i][j] = 0.0;
      for (k = 0; k < nk; k++)
        C[i][j] += A[k][i] * B[k][j];
    }
#pragma endscop
}

int main(int argc, char **argv)
{
  int ni = NI, nj = NJ, nk = NK;
  double(*A)[NI] = bench_alloc((size_t)NK * NI, sizeof(double));
  double(*B)[NJ] = bench_alloc((size_t)NK * NJ, sizeof(double));
  double(*C)[NJ] = bench_alloc((size_t)NI * NJ, sizeof(double));

  init_data(ni, nj, nk, A, B);

  bench_timer_start();
  kernel_gemm_tn(ni, nj, nk, A, B, C);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv))
    bench_dump_doubles("C", &C[0][0], (long)NI * NJ);

  free(A);
  free(B);
  free(C);
  return 0;
}
