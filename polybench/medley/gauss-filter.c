/* gauss-filter: separable Gaussian blur of an image: a horizontal pass
 * with a (2r+1)-tap Gaussian into a temporary image, then a vertical pass
 * into the output; a border of width r is left untouched. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define H 24
#define W 28
#define R 2
#elif defined(SMALL_DATASET)
#define H 160
#define W 200
#define R 3
#elif defined(LARGE_DATASET)
#define H 6000
#define W 6600
#define R 9
#else /* MEDIUM_DATASET */
#define H 4000
#define W 4400
#define R 9
#endif

static void init_data(int h, int w, int r, double img[H][W], double gauss[2 * R + 1])
{
  int i, j;
  double total = 0.0;
  double sigma = r / 2.0 + 0.5;
  for (i = 0; i <= 2 * r; i++) {
    gauss[i] = exp(-((double)(i - r) * (i - r)) / (2.0 * sigma * sigma));
    total += gauss[i];
  }
  for (i = 0; i <= 2 * r; i++)
    gauss[i] /= total;
  for (i = 0; i < h; i++)
    for (j = 0; j < w; j++)
      img[i][j] = (double)((i * 7 + j * 13) % 256) / 255.0;
}

static void kernel_gauss_filter(int h, int w, int r, double img[H][W], double tmp[H][W], double out[H][W],
                                double gauss[2 * R + 1])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < h; i++)
    for (j = r; j < w - r; j++) {
      tmp[i][j] = 0.0;
      for (k = 0; k <= 2 * r; k++)
        tmp[i][j] += gauss[k] * img[i][j + k - r];
    }
  for (i = r; i < h - r; i++)
    for (j = r; j < w - r; j++) {
      out[i][j] = 0.0;
      for (k = 0; k <= 2 * r; k++)
        out[i][j] += gauss[k] * tmp[i + k - r][j];
    }
#pragma endscop
}

int main(int argc, char **argv)
{
  int h = H, w = W, r = R;
  double(*img)[W] = bench_alloc((size_t)H * W, sizeof(double));
  double(*tmp)[W] = bench_alloc((size_t)H * W, sizeof(double));
  double(*out)[W] = bench_alloc((size_t)H * W, sizeof(double));
  double *gauss = bench_alloc(2 * R + 1, sizeof(double));

  init_data(h, w, r, img, gauss);

  bench_timer_start();
  kernel_gauss_filter(h, w, r, img, tmp, out, gauss);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv)) {
    bench_dump_doubles("tmp", &tmp[0][0], (long)H * W);
    bench_dump_doubles("out", &out[0][0], (long)H * W);
  }

  free(img);
  free(tmp);
  free(out);
  free(gauss);
  return 0;
}
