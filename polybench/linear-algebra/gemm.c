/* gemm: general matrix multiply, C := alpha * A * B + beta * C. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define NI 20
#define NJ 25
#define NK 30
#elif defined(SMALL_DATASET)
#define NI 60
#define NJ 70
#define NK 80
#elif defined(LARGE_DATASET)
#define NI 2000
#define NJ 2300
#define NK 2600
#else /* MEDIUM_DATASET */
#define NI 1000
#define NJ 1100
#define NK 1200
#endif

static void init_data(int ni, int nj, int nk, double *alpha, double *beta,
                      double C[NI][NJ], double A[NI][NK], double B[NK][NJ])
{
  int i, j;
  *alpha = 1.5;
  *beta = 1.2;
  for (i = 0; i < ni; i++)
    for (j = 0; j < nj; j++)
      C[i][j] = (double)((i * j + 1) % ni) / ni;
  for (i = 0; i < ni; i++)
    for (j = 0; j < nk; j++)
      A[i][j] = (double)(i * (j + 1) % nk) / nk;
  for (i = 0; i < nk; i++)
    for (j = 0; j < nj; j++)
      B[i][j] = (double)(i * (j + 2) % nj) / nj;
}

static void kernel_gemm(int ni, int nj, int nk, double alpha, double beta,
                        double C[NI][NJ], double A[NI][NK], double B[NK][NJ])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < ni; i++) {
    for (j = 0; j < nj; j++)
      C[i][j] *= beta;
    for (k = 0; k < nk; k++)
      for (j = 0; j < nj; j++)
        C[i][j] += alpha * A[i][k] * B[k][j];
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int ni = NI, nj = NJ, nk = NK;
  double alpha, beta;
  double(*C)[NJ] = bench_alloc((size_t)NI * NJ, sizeof(double));
  double(*A)[NK] = bench_alloc((size_t)NI * NK, sizeof(double));
  double(*B)[NJ] = bench_alloc((size_t)NK * NJ, sizeof(double));

  init_data(ni, nj, nk, &alpha, &beta, C, A, B);

  bench_timer_start();
  kernel_gemm(ni, nj, nk, alpha, beta, C, A, B);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv))
    bench_dump_doubles("C", &C[0][0], (long)NI * NJ);

  free(C);
  free(A);
  free(B);
  return 0;
}
