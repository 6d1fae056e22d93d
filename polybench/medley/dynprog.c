/* dynprog: time-iterated 2D dynamic programming (optimal split of an
 * interval): c[i][j] for i < j is built from a running sum over the split
 * points k of c[i][k] + c[k][j], kept in a 3D table, plus a weight W[i][j].
 * Values are reduced modulo a prime so that integers never overflow. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define TSTEPS 3
#define LENGTH 16
#elif defined(SMALL_DATASET)
#define TSTEPS 5
#define LENGTH 50
#elif defined(LARGE_DATASET)
#define TSTEPS 60
#define LENGTH 400
#else /* MEDIUM_DATASET */
#define TSTEPS 50
#define LENGTH 320
#endif

#define PRIME 1000003

static void init_data(int length, int c[LENGTH][LENGTH], int W[LENGTH][LENGTH])
{
  int i, j;
  for (i = 0; i < length; i++)
    for (j = 0; j < length; j++) {
      c[i][j] = (i * j) % 2;
      W[i][j] = (i - j) * (i - j) % 97;
    }
}

static void kernel_dynprog(int tsteps, int length, int c[LENGTH][LENGTH], int W[LENGTH][LENGTH],
                           int sum_c[LENGTH][LENGTH][LENGTH], int *out)
{
  int iter, i, j, k;
  int out_l = 0;
#pragma scop
  for (iter = 0; iter < tsteps; iter++) {
    for (i = 0; i <= length - 1; i++)
      for (j = 0; j <= length - 1; j++)
        c[i][j] = 0;
    for (i = 0; i <= length - 2; i++)
      for (j = i + 1; j <= length - 1; j++) {
        sum_c[i][j][i] = 0;
        for (k = i + 1; k <= j - 1; k++)
          sum_c[i][j][k] = sum_c[i][j][k - 1] + c[i][k] + c[k][j];
        c[i][j] = (sum_c[i][j][j - 1] + W[i][j]) % PRIME;
      }
    out_l += c[0][length - 1];
  }
#pragma endscop
  *out = out_l;
}

int main(int argc, char **argv)
{
  int tsteps = TSTEPS, length = LENGTH;
  int out;
  int(*c)[LENGTH] = bench_alloc((size_t)LENGTH * LENGTH, sizeof(int));
  int(*W)[LENGTH] = bench_alloc((size_t)LENGTH * LENGTH, sizeof(int));
  int(*sum_c)[LENGTH][LENGTH] = bench_alloc((size_t)LENGTH * LENGTH * LENGTH, sizeof(int));

  init_data(length, c, W);

  bench_timer_start();
  kernel_dynprog(tsteps, length, c, W, sum_c, &out);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv)) {
    bench_dump_ints("c", &c[0][0], (long)LENGTH * LENGTH);
    bench_dump_int("out", out);
  }

  free(c);
  free(W);
  free(sum_c);
  return 0;
}
