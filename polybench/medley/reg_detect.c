/* reg_detect: regularity detection: for every pair of grid lines (j <= i),
 * a difference profile is taken from the tangent sums, accumulated into
 * prefix sums whose total is the mean, and a path recurrence accumulates
 * the means along diagonals; the whole is iterated. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define NITER 2
#define MAXGRID 12
#define LENGTH 16
#elif defined(SMALL_DATASET)
#define NITER 4
#define MAXGRID 40
#define LENGTH 32
#elif defined(LARGE_DATASET)
#define NITER 30
#define MAXGRID 512
#define LENGTH 64
#else /* MEDIUM_DATASET */
#define NITER 20
#define MAXGRID 384
#define LENGTH 64
#endif

static void init_data(int maxgrid, double sum_tang[MAXGRID][MAXGRID], double mean[MAXGRID][MAXGRID],
                      double path[MAXGRID][MAXGRID])
{
  int i, j;
  for (i = 0; i < maxgrid; i++)
    for (j = 0; j < maxgrid; j++) {
      sum_tang[i][j] = (double)((i + 1) * (j + 1)) / maxgrid;
      mean[i][j] = ((double)i - j) / maxgrid;
      path[i][j] = ((double)i * (j - 1)) / maxgrid;
    }
}

static void kernel_reg_detect(int niter, int maxgrid, int length, double sum_tang[MAXGRID][MAXGRID],
                              double mean[MAXGRID][MAXGRID], double path[MAXGRID][MAXGRID],
                              double diff[MAXGRID][MAXGRID][LENGTH], double sum_diff[MAXGRID][MAXGRID][LENGTH])
{
  int t, i, j, cnt;
#pragma scop
  for (t = 0; t < niter; t++) {
    for (j = 0; j <= maxgrid - 1; j++)
      for (i = j; i <= maxgrid - 1; i++)
        for (cnt = 0; cnt <= length - 1; cnt++)
          diff[j][i][cnt] = sum_tang[j][i] * (1.0 + cnt) / length;
    for (j = 0; j <= maxgrid - 1; j++)
      for (i = j; i <= maxgrid - 1; i++) {
        sum_diff[j][i][0] = diff[j][i][0];
        for (cnt = 1; cnt <= length - 1; cnt++)
          sum_diff[j][i][cnt] = sum_diff[j][i][cnt - 1] + diff[j][i][cnt];
        mean[j][i] = sum_diff[j][i][length - 1] / length;
      }
    for (i = 0; i <= maxgrid - 1; i++)
      path[0][i] = mean[0][i];
    for (j = 1; j <= maxgrid - 1; j++)
      for (i = j; i <= maxgrid - 1; i++)
        path[j][i] = path[j - 1][i - 1] + mean[j][i];
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int niter = NITER, maxgrid = MAXGRID, length = LENGTH;
  double(*sum_tang)[MAXGRID] = bench_alloc((size_t)MAXGRID * MAXGRID, sizeof(double));
  double(*mean)[MAXGRID] = bench_alloc((size_t)MAXGRID * MAXGRID, sizeof(double));
  double(*path)[MAXGRID] = bench_alloc((size_t)MAXGRID * MAXGRID, sizeof(double));
  double(*diff)[MAXGRID][LENGTH] = bench_alloc((size_t)MAXGRID * MAXGRID * LENGTH, sizeof(double));
  double(*sum_diff)[MAXGRID][LENGTH] = bench_alloc((size_t)MAXGRID * MAXGRID * LENGTH, sizeof(double));

  init_data(maxgrid, sum_tang, mean, path);

  bench_timer_start();
  kernel_reg_detect(niter, maxgrid, length, sum_tang, mean, path, diff, sum_diff);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv)) {
    bench_dump_doubles("mean", &mean[0][0], (long)MAXGRID * MAXGRID);
    bench_dump_doubles("path", &path[0][0], (long)MAXGRID * MAXGRID);
  }

  free(sum_tang);
  free(mean);
  free(path);
  free(diff);
  free(sum_diff);
  return 0;
}
