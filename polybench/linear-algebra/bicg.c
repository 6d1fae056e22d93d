/* bicg: the two matrix-vector products of the BiCG method,
 * s := A^T r and q := A p. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define M 38
#define N 42
#elif defined(SMALL_DATASET)
#define M 180
#define N 200
#elif defined(LARGE_DATASET)
#define M 8000
#define N 9000
#else /* MEDIUM_DATASET */
#define M 3800
#define N 4200
#endif

static void init_data(int m, int n, double A[N][M], double r[N], double p[M])
{
  int i, j;
  for (i = 0; i < m; i++)
    p[i] = (double)(i % m) / m;
  for (i = 0; i < n; i++) {
    r[i] = (double)(i % n) / n;
    for (j = 0; j < m; j++)
      A[i][j] = (double)(i * (j + 1) % n) / n;
  }
}

static void kernel_bicg(int m, int n, double A[N][M], double s[M], double q[N], double p[M], double r[N])
{
  int i, j;
#pragma scop
  for (i = 0; i < m; i++)
    s[i] = 0.0;
  for (i = 0; i < n; i++) {
    q[i] = 0.0;
    for (j = 0; j < m; j++) {
      s[j] = s[j] + r[i] * A[i][j];
      q[i] = q[i] + A[i][j] * p[j];
    }
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int m = M, n = N;
  double(*A)[M] = bench_alloc((size_t)N * M, sizeof(double));
  double *s = bench_alloc(M, sizeof(double));
  double *q = bench_alloc(N, sizeof(double));
  double *p = bench_alloc(M, sizeof(double));
  double *r = bench_alloc(N, sizeof(double));

  init_data(m, n, A, r, p);

  bench_timer_start();
  kernel_bicg(m, n, A, s, q, p, r);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv)) {
    bench_dump_doubles("s", s, M);
    bench_dump_doubles("q", q, N);
  }

  free(A);
  free(s);
  free(q);
  free(p);
  free(r);
  return 0;
}
