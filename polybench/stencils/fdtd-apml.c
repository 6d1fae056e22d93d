/* fdtd-apml: FDTD update of the magnetic field Hz in a 3D grid with an
 * anisotropic perfectly matched layer: per-axis attenuation coefficients,
 * an auxiliary field Bza, and separate updates of the last x column, the
 * last y row and their corner. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define CZ 6
#define CYM 8
#define CXM 10
#elif defined(SMALL_DATASET)
#define CZ 24
#define CYM 28
#define CXM 32
#elif defined(LARGE_DATASET)
#define CZ 320
#define CYM 320
#define CXM 320
#else /* MEDIUM_DATASET */
#define CZ 240
#define CYM 240
#define CXM 240
#endif

static void init_data(int cz, int cxm, int cym, double *mui, double *ch, double Ax[CZ + 1][CXM + 1],
                      double Ry[CZ + 1][CYM + 1], double Ex[CZ + 1][CYM + 1][CXM + 1],
                      double Ey[CZ + 1][CYM + 1][CXM + 1], double Hz[CZ + 1][CYM + 1][CXM + 1],
                      double czm[CZ + 1], double czp[CZ + 1], double cxmh[CXM + 1], double cxph[CXM + 1],
                      double cymh[CYM + 1], double cyph[CYM + 1])
{
  int i, j, k;
  *mui = 2341.0;
  *ch = 42.0;
  for (i = 0; i <= cz; i++) {
    czm[i] = ((double)i + 1) / cxm;
    czp[i] = ((double)i + 2) / cxm;
  }
  for (i = 0; i <= cxm; i++) {
    cxmh[i] = ((double)i + 3) / cxm;
    cxph[i] = ((double)i + 4) / cxm;
  }
  for (i = 0; i <= cym; i++) {
    cymh[i] = ((double)i + 5) / cxm;
    cyph[i] = ((double)i + 6) / cxm;
  }
  for (i = 0; i <= cz; i++)
    for (j = 0; j <= cxm; j++)
      Ax[i][j] = ((double)i * (j + 2) + 11) / cym;
  for (i = 0; i <= cz; i++)
    for (j = 0; j <= cym; j++) {
      Ry[i][j] = ((double)i * (j + 1) + 10) / cym;
      for (k = 0; k <= cxm; k++) {
        Ex[i][j][k] = ((double)i * (j + 3) + k + 1) / cxm;
        Ey[i][j][k] = ((double)i * (j + 4) + k + 2) / cym;
        Hz[i][j][k] = ((double)i * (j + 5) + k + 3) / cz;
      }
    }
}

static void kernel_fdtd_apml(int cz, int cxm, int cym, double mui, double ch, double Ax[CZ + 1][CXM + 1],
                             double Ry[CZ + 1][CYM + 1], double clf[CZ + 1][CYM + 1], double tmp[CZ + 1][CYM + 1],
                             double Bza[CZ + 1][CYM + 1][CXM + 1], double Ex[CZ + 1][CYM + 1][CXM + 1],
                             double Ey[CZ + 1][CYM + 1][CXM + 1], double Hz[CZ + 1][CYM + 1][CXM + 1],
                             double czm[CZ + 1], double czp[CZ + 1], double cxmh[CXM + 1], double cxph[CXM + 1],
                             double cymh[CYM + 1], double cyph[CYM + 1])
{
  int iz, iy, ix;
#pragma scop
  for (iz = 0; iz < cz; iz++) {
    for (iy = 0; iy < cym; iy++) {
      for (ix = 0; ix < cxm; ix++) {
        clf[iz][iy] = Ex[iz][iy][ix] - Ex[iz][iy + 1][ix] + Ey[iz][iy][ix + 1] - Ey[iz][iy][ix];
        tmp[iz][iy] = (cymh[iy] / cyph[iy]) * Bza[iz][iy][ix] - (ch / cyph[iy]) * clf[iz][iy];
        Hz[iz][iy][ix] = (cxmh[ix] / cxph[ix]) * Hz[iz][iy][ix] + (mui * czp[iz] / cxph[ix]) * tmp[iz][iy] -
                         (mui * czm[iz] / cxph[ix]) * Bza[iz][iy][ix];
        Bza[iz][iy][ix] = tmp[iz][iy];
      }
      clf[iz][iy] = Ex[iz][iy][cxm] - Ex[iz][iy + 1][cxm] + Ry[iz][iy] - Ey[iz][iy][cxm];
      tmp[iz][iy] = (cymh[iy] / cyph[iy]) * Bza[iz][iy][cxm] - (ch / cyph[iy]) * clf[iz][iy];
      Hz[iz][iy][cxm] = (cxmh[cxm] / cxph[cxm]) * Hz[iz][iy][cxm] + (mui * czp[iz] / cxph[cxm]) * tmp[iz][iy] -
                        (mui * czm[iz] / cxph[cxm]) * Bza[iz][iy][cxm];
      Bza[iz][iy][cxm] = tmp[iz][iy];
    }
    for (ix = 0; ix < cxm; ix++) {
      clf[iz][cym] = Ex[iz][cym][ix] - Ax[iz][ix] + Ey[iz][cym][ix + 1] - Ey[iz][cym][ix];
      tmp[iz][cym] = (cymh[cym] / cyph[cym]) * Bza[iz][cym][ix] - (ch / cyph[cym]) * clf[iz][cym];
      Hz[iz][cym][ix] = (cxmh[ix] / cxph[ix]) * Hz[iz][cym][ix] + (mui * czp[iz] / cxph[ix]) * tmp[iz][cym] -
                        (mui * czm[iz] / cxph[ix]) * Bza[iz][cym][ix];
      Bza[iz][cym][ix] = tmp[iz][cym];
    }
    clf[iz][cym] = Ex[iz][cym][cxm] - Ax[iz][cxm] + Ry[iz][cym] - Ey[iz][cym][cxm];
    tmp[iz][cym] = (cymh[cym] / cyph[cym]) * Bza[iz][cym][cxm] - (ch / cyph[cym]) * clf[iz][cym];
    Hz[iz][cym][cxm] = (cxmh[cxm] / cxph[cxm]) * Hz[iz][cym][cxm] + (mui * czp[iz] / cxph[cxm]) * tmp[iz][cym] -
                       (mui * czm[iz] / cxph[cxm]) * Bza[iz][cym][cxm];
    Bza[iz][cym][cxm] = tmp[iz][cym];
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int cz = CZ, cym = CYM, cxm = CXM;
  double mui, ch;
  double(*Ax)[CXM + 1] = bench_alloc((size_t)(CZ + 1) * (CXM + 1), sizeof(double));
  double(*Ry)[CYM + 1] = bench_alloc((size_t)(CZ + 1) * (CYM + 1), sizeof(double));
  double(*clf)[CYM + 1] = bench_alloc((size_t)(CZ + 1) * (CYM + 1), sizeof(double));
  double(*tmp)[CYM + 1] = bench_alloc((size_t)(CZ + 1) * (CYM + 1), sizeof(double));
  double(*Bza)[CYM + 1][CXM + 1] = bench_alloc((size_t)(CZ + 1) * (CYM + 1) * (CXM + 1), sizeof(double));
  double(*Ex)[CYM + 1][CXM + 1] = bench_alloc((size_t)(CZ + 1) * (CYM + 1) * (CXM + 1), sizeof(double));
  double(*Ey)[CYM + 1][CXM + 1] = bench_alloc((size_t)(CZ + 1) * (CYM + 1) * (CXM + 1), sizeof(double));
  double(*Hz)[CYM + 1][CXM + 1] = bench_alloc((size_t)(CZ + 1) * (CYM + 1) * (CXM + 1), sizeof(double));
  double *czm = bench_alloc(CZ + 1, sizeof(double));
  double *czp = bench_alloc(CZ + 1, sizeof(double));
  double *cxmh = bench_alloc(CXM + 1, sizeof(double));
  double *cxph = bench_alloc(CXM + 1, sizeof(double));
  double *cymh = bench_alloc(CYM + 1, sizeof(double));
  double *cyph = bench_alloc(CYM + 1, sizeof(double));

  init_data(cz, cxm, cym, &mui, &ch, Ax, Ry, Ex, Ey, Hz, czm, czp, cxmh, cxph, cymh, cyph);

  bench_timer_start();
  kernel_fdtd_apml(cz, cxm, cym, mui, ch, Ax, Ry, clf, tmp, Bza, Ex, Ey, Hz, czm, czp, cxmh, cxph, cymh, cyph);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv)) {
    bench_dump_doubles("Bza", &Bza[0][0][0], (long)(CZ + 1) * (CYM + 1) * (CXM + 1));
    bench_dump_doubles("Hz", &Hz[0][0][0], (long)(CZ + 1) * (CYM + 1) * (CXM + 1));
    bench_dump_doubles("clf", &clf[0][0], (long)(CZ + 1) * (CYM + 1));
    bench_dump_doubles("tmp", &tmp[0][0], (long)(CZ + 1) * (CYM + 1));
  }

  free(Ax);
  free(Ry);
  free(clf);
  free(tmp);
  free(Bza);
  free(Ex);
  free(Ey);
  free(Hz);
  free(czm);
  free(czp);
  free(cxmh);
  free(cxph);
  free(cymh);
  free(cyph);
  return 0;
}
