/* 3mm: three matrix products, E := A * B, F := C * D, G := E * F. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define NI 16
#define NJ 18
#define NK 20
#define NL 22
#define NM 24
#elif defined(SMALL_DATASET)
#define NI 40
#define NJ 50
#define NK 60
#define NL 70
#define NM 80
#elif defined(LARGE_DATASET)
#define NI 1600
#define NJ 1800
#define NK 2000
#define NL 2200
#define NM 2400
#else /* MEDIUM_DATASET */
#define NI 500
#define NJ 550
#define NK 600
#define NL 650
#define NM 700
#endif

static void init_data(int ni, int nj, int nk, int nl, int nm, double A[NI][NK], double B[NK][NJ],
                      double C[NJ][NM], double D[NM][NL])
{
  int i, j;
  for (i = 0; i < ni; i++)
    for (j = 0; j < nk; j++)
      A[i][j] = (double)((i * j + 1) % ni) / (5 * ni);
  for (i = 0; i < nk; i++)
    for (j = 0; j < nj; j++)
      B[i][j] = (double)((i * (j + 1) + 2) % nj) / (5 * nj);
  for (i = 0; i < nj; i++)
    for (j = 0; j < nm; j++)
      C[i][j] = (double)(i * (j + 3) % nl) / (5 * nl);
  for (i = 0; i < nm; i++)
    for (j = 0; j < nl; j++)
      D[i][j] = (double)((i * (j + 2) + 2) % nk) / (5 * nk);
}

static void kernel_3mm(int ni, int nj, int nk, int nl, int nm, double E[NI][NJ], double A[NI][NK],
                       double B[NK][NJ], double F[NJ][NL], double C[NJ][NM], double D[NM][NL],
                       double G[NI][NL])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < ni; i++)
    for (j = 0; j < nj; j++) {
      E[i][j] = 0.0;
      for (k = 0; k < nk; k++)
        E[i][j] += A[i][k] * B[k][j];
    }
  for (i = 0; i < nj; i++)
    for (j = 0; j < nl; j++) {
      F[i][j] = 0.0;
      for (k = 0; k < nm; k++)
        F[i][j] += C[i][k] * D[k][j];
    }
  for (i = 0; i < ni; i++)
    for (j = 0; j < nl; j++) {
      G[i][j] = 0.0;
      for (k = 0; k < nj; k++)
        G[i][j] += E[i][k] * F[k][j];
    }
#pragma endscop
}

int main(int argc, char **argv)
{
  int ni = NI, nj = NJ, nk = NK, nl = NL, nm = NM;
  double(*E)[NJ] = bench_alloc((size_t)NI * NJ, sizeof(double));
  double(*A)[NK] = bench_alloc((size_t)NI * NK, sizeof(double));
  double(*B)[NJ] = bench_alloc((size_t)NK * NJ, sizeof(double));
  double(*F)[NL] = bench_alloc((size_t)NJ * NL, sizeof(double));
  double(*C)[NM] = bench_alloc((size_t)NJ * NM, sizeof(double));
  double(*D)[NL] = bench_alloc((size_t)NM * NL, sizeof(double));
  double(*G)[NL] = bench_alloc((size_t)NI * NL, sizeof(double));

  init_data(ni, nj, nk, nl, nm, A, B, C, D);

  bench_timer_start();
  kernel_3mm(ni, nj, nk, nl, nm, E, A, B, F, C, D, G);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv)) {
    bench_dump_doubles("E", &E[0][0], (long)NI * NJ);
    bench_dump_doubles("F", &F[0][0], (long)NJ * NL);
    bench_dump_doubles("G", &G[0][0], (long)NI * NL);
  }

  free(E);
  free(A);
  free(B);
  free(F);
  free(C);
  free(D);
  free(G);
  return 0;
}
