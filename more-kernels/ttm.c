/* ttm: a tensor-times-matrix contraction along the last mode,
 * Y[i][j][m] = sum over l of X[i][j][l] * U[l][m]. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define NI 8
#define NJ 10
#define NL 12
#define NM 14
#elif defined(SMALL_DATASET)
#define NI 20
#define NJ 24
#define NL 30
#define NM 32
#elif defined(LARGE_DATASET)
#define NI 200
#define NJ 220
#define NL 240
#define NM 260
#else /* MEDIUM_DATASET */
#define NI 90
#define NJ 100
#define NL 120
#define NM 140
#endif

static void init_data(int ni, int nj, int nl, int nm, double X[NI][NJ][NL], double U[NL][NM])
{
  int i, j, l, m;
  for (i = 0; i < ni; i++)
    for (j = 0; j < nj; j++)
      for (l = 0; l < nl; l++)
        X[i][j][l] = (double)((i * j + l) % nl) / nl;
  for (l = 0; l < nl; l++)
    for (m = 0; m < nm; m++)
      U[l][m] = (double)((l * (m + 1)) % nm) / nm;
}

static void kernel_ttm(int ni, int nj, int nl, int nm, double X[NI][NJ][NL], double U[NL][NM],
                       double Y[NI][NJ][NM])
{
  int i, j, l, m;
#pragma scop
  for (i = 0; i < ni; i++)
    for (j = 0; j < nj; j++)
      for (m = 0; m < nm; m++) {
        Y[i][j][m] = 0.0;
        for (l = 0; l < nl; l++)
          Y[i][j][m] += X[i][j][l] * U[l][m];
      }
#pragma endscop
}

int main(int argc, char **argv)
{
  int ni = NI, nj = NJ, nl = NL, nm = NM;
  double(*X)[NJ][NL] = bench_alloc((size_t)NI * NJ * NL, sizeof(double));
  double(*U)[NM] = bench_alloc((size_t)NL * NM, sizeof(double));
  double(*Y)[NJ][NM] = bench_alloc((size_t)NI * NJ * NM, sizeof(double));

  init_data(ni, nj, nl, nm, X, U);

  bench_timer_start();
  kernel_ttm(ni, nj, nl, nm, X, U, Y);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv))
    bench_dump_doubles("Y", &Y[0][0][0], (long)NI * NJ * NM);

  free(X);
  free(U);
  free(Y);
  return 0;
}
