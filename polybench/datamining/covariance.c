/* covariance: covariance matrix of M variables observed N times
 * (unnormalized: the sum of products of centered observations). */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define M 28
#define N 32
#elif defined(SMALL_DATASET)
#define M 80
#define N 100
#elif defined(LARGE_DATASET)
#define M 2000
#define N 2400
#else /* MEDIUM_DATASET */
#define M 1000
#define N 1100
#endif

static void init_data(int m, int n, double *float_n, double data[N][M])
{
  int i, j;
  *float_n = (double)n;
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++)
      data[i][j] = ((double)i * j) / M;
}

static void kernel_covariance(int m, int n, double float_n, double data[N][M], double symmat[M][M], double mean[M])
{
  int i, j1, j2;
#pragma scop
  for (j1 = 0; j1 < m; j1++) {
    mean[j1] = 0.0;
    for (i = 0; i < n; i++)
      mean[j1] += data[i][j1];
    mean[j1] /= float_n;
  }
  for (i = 0; i < n; i++)
    for (j1 = 0; j1 < m; j1++)
      data[i][j1] -= mean[j1];
  for (j1 = 0; j1 < m; j1++)
    for (j2 = j1; j2 < m; j2++) {
      symmat[j1][j2] = 0.0;
      for (i = 0; i < n; i++)
        symmat[j1][j2] += data[i][j1] * data[i][j2];
      symmat[j2][j1] = symmat[j1][j2];
    }
#pragma endscop
}

int main(int argc, char **argv)
{
  int m = M, n = N;
  double float_n;
  double(*data)[M] = bench_alloc((size_t)N * M, sizeof(double));
  double(*symmat)[M] = bench_alloc((size_t)M * M, sizeof(double));
  double *mean = bench_alloc(M, sizeof(double));

  init_data(m, n, &float_n, data);

  bench_timer_start();
  kernel_covariance(m, n, float_n, data, symmat, mean);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv)) {
    bench_dump_doubles("symmat", &symmat[0][0], (long)M * M);
    bench_dump_doubles("mean", mean, M);
    bench_dump_doubles("data", &data[0][0], (long)N * M);
  }

  free(data);
  free(symmat);
  free(mean);
  return 0;
}
