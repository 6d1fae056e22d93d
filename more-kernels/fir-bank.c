/* fir-bank: a bank of finite-impulse-response filters, each channel's
 * signal convolved with its own taps. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define NC 4
#define NS 64
#define NT 8
#elif defined(SMALL_DATASET)
#define NC 16
#define NS 1024
#define NT 32
#elif defined(LARGE_DATASET)
#define NC 128
#define NS 65536
#define NT 128
#else /* MEDIUM_DATASET */
#define NC 64
#define NS 32768
#define NT 96
#endif

static void init_data(int nc, int ns, int nt, double X[NC][NS + NT], double Hk[NC][NT])
{
  int c, s, t;
  for (c = 0; c < nc; c++)
    for (s = 0; s < ns + nt; s++)
      X[c][s] = (double)((c * 31 + s * 7) % 101) / 101.0 - 0.5;
  for (c = 0; c < nc; c++)
    for (t = 0; t < nt; t++)
      Hk[c][t] = (double)((c + 3 * t) % 13) / 13.0 / nt;
}

static void kernel_fir_bank(int nc, int ns, int nt, double X[NC][NS + NT], double Hk[NC][NT],
                            double Y[NC][NS])
{
  int c, s, t;
#pragma scop
  for (c = 0; c < nc; c++)
    for (s = 0; s < ns; s++) {
      Y[c][s] = 0.0;
      for (t = 0; t < nt; t++)
        Y[c][s] += Hk[c][t] * X[c][s + t];
    }
#pragma endscop
}

int main(int argc, char **argv)
{
  int nc = NC, ns = NS, nt = NT;
  double(*X)[NS + NT] = bench_alloc((size_t)NC * (NS + NT), sizeof(double));
  double(*Hk)[NT] = bench_alloc((size_t)NC * NT, sizeof(double));
  double(*Y)[NS] = bench_alloc((size_t)NC * NS, sizeof(double));

  init_data(nc, ns, nt, X, Hk);

  bench_timer_start();
  kernel_fir_bank(nc, ns, nt, X, Hk, Y);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv))
    bench_dump_doubles("Y", &Y[0][0], (long)NC * NS);

  free(X);
  free(Hk);
  free(Y);
  return 0;
}
