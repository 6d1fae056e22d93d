/* 2mm: two chained matrix products, D := alpha * A * B * C + beta * D,
 * computed as tmp := alpha * A * B, then D := tmp * C + beta * D. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define NI 16
#define NJ 18
#define NK 22
#define NL 24
#elif defined(SMALL_DATASET)
#define NI 40
#define NJ 50
#define NK 70
#define NL 80
#elif defined(LARGE_DATASET)
#define NI 1600
#define NJ 1800
#define NK 2200
#define NL 2400
#else /* MEDIUM_DATASET */
#define NI 600
#define NJ 700
#define NK 800
#define NL 900
#endif

static void init_data(int ni, int nj, int nk, int nl, double *alpha, double *beta,
                      double A[NI][NK], double B[NK][NJ], double C[NJ][NL], double D[NI][NL])
{
  int i, j;
  *alpha = 1.25;
  *beta = 0.75;
  for (i = 0; i < ni; i++)
    for (j = 0; j < nk; j++)
      A[i][j] = (double)((i * j + 3) % ni) / ni;
  for (i = 0; i < nk; i++)
    for (j = 0; j < nj; j++)
      B[i][j] = (double)(i * (j + 1) % nj) / nj;
  for (i = 0; i < nj; i++)
    for (j = 0; j < nl; j++)
      C[i][j] = (double)((i * (j + 3) + 1) % nl) / nl;
  for (i = 0; i < ni; i++)
    for (j = 0; j < nl; j++)
      D[i][j] = (double)(i * (j + 2) % nk) / nk;
}

static void kernel_2mm(int ni, int nj, int nk, int nl, double alpha, double beta,
                       double tmp[NI][NJ], double A[NI][NK], double B[NK][NJ],
                       double C[NJ][NL], double D[NI][NL])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < ni; i++)
    for (j = 0; j < nj; j++) {
      tmp[i][j] = 0.0;
      for (k = 0; k < nk; k++)
        tmp[i][j] += alpha * A[i][k] * B[k][j];
    }
  for (i = 0; i < ni; i++)
    for (j = 0; j < nl; j++) {
      D[i][j] *= beta;
      for (k = 0; k < nj; k++)
        D[i][j] += tmp[i][k] * C[k][j];
    }
#pragma endscop
}

int main(int argc, char **argv)
{
  int ni = NI, nj = NJ, nk = NK, nl = NL;
  double alpha, beta;
  double(*tmp)[NJ] = bench_alloc((size_t)NI * NJ, sizeof(double));
  double(*A)[NK] = bench_alloc((size_t)NI * NK, sizeof(double));
  double(*B)[NJ] = bench_alloc((size_t)NK * NJ, sizeof(double));
  double(*C)[NL] = bench_alloc((size_t)NJ * NL, sizeof(double));
  double(*D)[NL] = bench_alloc((size_t)NI * NL, sizeof(double));

  init_data(ni, nj, nk, nl, &alpha, &beta, A, B, C, D);

  bench_timer_start();
  kernel_2mm(ni, nj, nk, nl, alpha, beta, tmp, A, B, C, D);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv)) {
    bench_dump_doubles("tmp", &tmp[0][0], (long)NI * NJ);
    bench_dump_doubles("D", &D[0][0], (long)NI * NL);
  }

  free(tmp);
  free(A);
  free(B);
  free(C);
  free(D);
  return 0;
}
