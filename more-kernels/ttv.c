/* ttv: a bilinear form per slice, y[i] = sum over j and k of
 * T[i][j][k] * u[j] * v[k] (two tensor-times-vector contractions). */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define NI 10
#define NJ 12
#define NK 14
#elif defined(SMALL_DATASET)
#define NI 40
#define NJ 50
#define NK 60
#elif defined(LARGE_DATASET)
#define NI 400
#define NJ 500
#define NK 600
#else /* MEDIUM_DATASET */
#define NI 300
#define NJ 250
#define NK 300
#endif

static void init_data(int ni, int nj, int nk, double T[NI][NJ][NK], double u[NJ], double v[NK])
{
  int i, j, k;
  for (i = 0; i < ni; i++)
    for (j = 0; j < nj; j++)
      for (k = 0; k < nk; k++)
        T[i][j][k] = (double)((i + 2 * j + 3 * k) % 19) / 19.0;
  for (j = 0; j < nj; j++)
    u[j] = (double)(j % 7) / 7.0;
  for (k = 0; k < nk; k++)
    v[k] = (double)(k % 5) / 5.0;
}

static void kernel_ttv(int ni, int nj, int nk, double T[NI][NJ][NK], double u[NJ], double v[NK],
                       double W[NI][NJ], double y[NI])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < ni; i++) {
    y[i] = 0.0;
    for (j = 0; j < nj; j++) {
      W[i][j] = 0.0;
      for (k = 0; k < nk; k++)
        W[i][j] += T[i][j][k] * v[k];
      y[i] += W[i][j] * u[j];
    }
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int ni = NI, nj = NJ, nk = NK;
  double(*T)[NJ][NK] = bench_alloc((size_t)NI * NJ * NK, sizeof(double));
  double *u = bench_alloc(NJ, sizeof(double));
  double *v = bench_alloc(NK, sizeof(double));
  double(*W)[NJ] = bench_alloc((size_t)NI * NJ, sizeof(double));
  double *y = bench_alloc(NI, sizeof(double));

  init_data(ni, nj, nk, T, u, v);

  bench_timer_start();
  kernel_ttv(ni, nj, nk, T, u, v, W, y);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv)) {
    bench_dump_doubles("W", &W[0][0], (long)NI * NJ);
    bench_dump_doubles("y", y, NI);
  }

  free(T);
  free(u);
  free(v);
  free(W);
  free(y);
  return 0;
}
