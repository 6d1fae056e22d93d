/* doitgen: multi-resolution analysis kernel (MADNESS): every row
 * A[r][q][*] is multiplied by the matrix C4, through a temporary sum. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define NR 10
#define NQ 8
#define NP 12
#elif defined(SMALL_DATASET)
#define NR 25
#define NQ 20
#define NP 30
#elif defined(LARGE_DATASET)
#define NR 220
#define NQ 200
#define NP 240
#else /* MEDIUM_DATASET */
#define NR 128
#define NQ 112
#define NP 144
#endif

static void init_data(int nr, int nq, int np, double A[NR][NQ][NP], double C4[NP][NP])
{
  int r, q, p, s;
  for (r = 0; r < nr; r++)
    for (q = 0; q < nq; q++)
      for (p = 0; p < np; p++)
        A[r][q][p] = (double)((r * q + p) % np) / np;
  for (p = 0; p < np; p++)
    for (s = 0; s < np; s++)
      C4[p][s] = (double)(p * s % np) / (np * np);
}

static void kernel_doitgen(int nr, int nq, int np, double A[NR][NQ][NP], double C4[NP][NP], double sum[NP])
{
  int r, q, p, s;
#pragma scop
  for (r = 0; r < nr; r++)
    for (q = 0; q < nq; q++) {
      for (p = 0; p < np; p++) {
        sum[p] = 0.0;
        for (s = 0; s < np; s++)
          sum[p] += A[r][q][s] * C4[s][p];
      }
      for (p = 0; p < np; p++)
        A[r][q][p] = sum[p];
    }
#pragma endscop
}

int main(int argc, char **argv)
{
  int nr = NR, nq = NQ, np = NP;
  double(*A)[NQ][NP] = bench_alloc((size_t)NR * NQ * NP, sizeof(double));
  double(*C4)[NP] = bench_alloc((size_t)NP * NP, sizeof(double));
  double *sum = bench_alloc(NP, sizeof(double));

  init_data(nr, nq, np, A, C4);

  bench_timer_start();
  kernel_doitgen(nr, nq, np, A, C4, sum);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv)) {
    bench_dump_doubles("A", &A[0][0][0], (long)NR * NQ * NP);
    bench_dump_doubles("sum", sum, NP);
  }

  free(A);
  free(C4);
  free(sum);
  return 0;
}
