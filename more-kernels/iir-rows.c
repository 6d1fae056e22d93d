/* iir-rows: a first-order recursive (IIR) smoothing filter run forward
 * and backward along each row of an image, then forward and backward
 * along each column, the two passes summed (an edge-preserving blur in
 * the style of recursive Gaussian filters). */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define H 24
#define W 20
#elif defined(SMALL_DATASET)
#define H 120
#define W 100
#elif defined(LARGE_DATASET)
#define H 4000
#define W 3600
#else /* MEDIUM_DATASET */
#define H 2000
#define W 1800
#endif

static void init_data(int h, int w, double Img[H][W])
{
  int y, x;
  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++)
      Img[y][x] = (double)((313 * y + 991 * x) % 65536) / 65535.0;
}

static void kernel_iir_rows(int h, int w, double a, double b, double Img[H][W], double F[H][W],
                            double G[H][W], double Out[H][W])
{
  int y, x;
#pragma scop
  for (y = 0; y < h; y++) {
    F[y][0] = a * Img[y][0];
    for (x = 1; x < w; x++)
      F[y][x] = a * Img[y][x] + b * F[y][x - 1];
    G[y][w - 1] = 0.0;
    for (x = w - 2; x >= 0; x--)
      G[y][x] = a * Img[y][x + 1] + b * G[y][x + 1];
    for (x = 0; x < w; x++)
      Out[y][x] = F[y][x] + G[y][x];
  }
  for (x = 0; x < w; x++) {
    F[0][x] = a * Out[0][x];
    for (y = 1; y < h; y++)
      F[y][x] = a * Out[y][x] + b * F[y - 1][x];
    G[h - 1][x] = 0.0;
    for (y = h - 2; y >= 0; y--)
      G[y][x] = a * Out[y + 1][x] + b * G[y + 1][x];
    for (y = 0; y < h; y++)
      Img[y][x] = F[y][x] + G[y][x];
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int h = H, w = W;
  double(*Img)[W] = bench_alloc((size_t)H * W, sizeof(double));
  double(*F)[W] = bench_alloc((size_t)H * W, sizeof(double));
  double(*G)[W] = bench_alloc((size_t)H * W, sizeof(double));
  double(*Out)[W] = bench_alloc((size_t)H * W, sizeof(double));

  init_data(h, w, Img);

  bench_timer_start();
  kernel_iir_rows(h, w, 0.3, 0.7, Img, F, G, Out);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv))
    bench_dump_doubles("Img", &Img[0][0], (long)H * W);

  free(Img);
  free(F);
  free(G);
  free(Out);
  return 0;
}
