/* durbin: Levinson-Durbin recursion, solves the Yule-Walker equations of
 * a Toeplitz system given its autocorrelation sequence r. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define N 40
#elif defined(SMALL_DATASET)
#define N 400
#elif defined(LARGE_DATASET)
#define N 40000
#else /* MEDIUM_DATASET */
#define N 16000
#endif

static void init_data(int n, double r[N])
{
  int i;
  /* The autocorrelation of a mix of two stationary AR(1) processes and
   * white noise: positive definite, so every reflection coefficient has
   * magnitude below one. */
  for (i = 0; i < n; i++)
    r[i] = 0.6 * pow(0.5, i + 1) + 0.3 * pow(-0.7, i + 1);
}

static void kernel_durbin(int n, double r[N], double y[N], double z[N], double *out_alpha)
{
  int i, k;
  double alpha, beta, sum;
#pragma scop
  y[0] = -r[0];
  beta = 1.0;
  alpha = -r[0];
  for (k = 1; k < n; k++) {
    beta = (1.0 - alpha * alpha) * beta;
    sum = 0.0;
    for (i = 0; i < k; i++)
      sum += r[k - i - 1] * y[i];
    alpha = -(r[k] + sum) / beta;
    for (i = 0; i < k; i++)
      z[i] = y[i] + alpha * y[k - i - 1];
    for (i = 0; i < k; i++)
      y[i] = z[i];
    y[k] = alpha;
  }
#pragma endscop
  *out_alpha = alpha;
}

int main(int argc, char **argv)
{
  int n = N;
  double alpha;
  double *r = bench_alloc(N, sizeof(double));
  double *y = bench_alloc(N, sizeof(double));
  double *z = bench_alloc(N, sizeof(double));

  init_data(n, r);

  bench_timer_start();
  kernel_durbin(n, r, y, z, &alpha);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv)) {
    bench_dump_doubles("y", y, N);
    bench_dump_doubles("z", z, N);
    bench_dump_double("alpha", alpha);
  }

  free(r);
  free(y);
  free(z);
  return 0;
}
