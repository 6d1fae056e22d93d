/* fdtd-2d: 2D finite-difference time-domain electromagnetic kernel: the
 * electric fields ex, ey and the magnetic field hz are updated in turn,
 * with a time-dependent source on the first row of ey. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define TMAX 4
#define NX 20
#define NY 24
#elif defined(SMALL_DATASET)
#define TMAX 20
#define NX 100
#define NY 120
#elif defined(LARGE_DATASET)
#define TMAX 200
#define NX 2000
#define NY 2200
#else /* MEDIUM_DATASET */
#define TMAX 100
#define NX 1000
#define NY 1100
#endif

static void init_data(int tmax, int nx, int ny, double ex[NX][NY], double ey[NX][NY], double hz[NX][NY],
                      double fict[TMAX])
{
  int i, j;
  for (i = 0; i < tmax; i++)
    fict[i] = (double)i;
  for (i = 0; i < nx; i++)
    for (j = 0; j < ny; j++) {
      ex[i][j] = ((double)i * (j + 1)) / nx;
      ey[i][j] = ((double)i * (j + 2)) / ny;
      hz[i][j] = ((double)i * (j + 3)) / nx;
    }
}

static void kernel_fdtd_2d(int tmax, int nx, int ny, double ex[NX][NY], double ey[NX][NY], double hz[NX][NY],
                           double fict[TMAX])
{
  int t, i, j;
#pragma scop
  for (t = 0; t < tmax; t++) {
    for (j = 0; j < ny; j++)
      ey[0][j] = fict[t];
    for (i = 1; i < nx; i++)
      for (j = 0; j < ny; j++)
        ey[i][j] = ey[i][j] - 0.5 * (hz[i][j] - hz[i - 1][j]);
    for (i = 0; i < nx; i++)
      for (j = 1; j < ny; j++)
        ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j - 1]);
    for (i = 0; i < nx - 1; i++)
      for (j = 0; j < ny - 1; j++)
        hz[i][j] = hz[i][j] - 0.7 * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int tmax = TMAX, nx = NX, ny = NY;
  double(*ex)[NY] = bench_alloc((size_t)NX * NY, sizeof(double));
  double(*ey)[NY] = bench_alloc((size_t)NX * NY, sizeof(double));
  double(*hz)[NY] = bench_alloc((size_t)NX * NY, sizeof(double));
  double *fict = bench_alloc(TMAX, sizeof(double));

  init_data(tmax, nx, ny, ex, ey, hz, fict);

  bench_timer_start();
  kernel_fdtd_2d(tmax, nx, ny, ex, ey, hz, fict);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv)) {
    bench_dump_doubles("ex", &ex[0][0], (long)NX * NY);
    bench_dump_doubles("ey", &ey[0][0], (long)NX * NY);
    bench_dump_doubles("hz", &hz[0][0], (long)NX * NY);
  }

  free(ex);
  free(ey);
  free(hz);
  free(fict);
  return 0;
}
