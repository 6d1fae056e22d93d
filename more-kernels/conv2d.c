/* conv2d: a multi-channel 2D convolution layer (valid padding, stride
 * one): every output channel sums every input channel's window weighted
 * by its own 3x3 filter. */
#include "polytune_bench.h"

#if defined(MINI_DATASET)
#define CO 4
#define CI 3
#define H 12
#define W 14
#elif defined(SMALL_DATASET)
#define CO 8
#define CI 8
#define H 40
#define W 44
#elif defined(LARGE_DATASET)
#define CO 64
#define CI 64
#define H 256
#define W 256
#else /* MEDIUM_DATASET */
#define CO 32
#define CI 32
#define H 130
#define W 130
#endif
#define KH 3
#define KW 3

static void init_data(int co, int ci, int h, int w, double In[CI][H][W],
                      double Wt[CO][CI][KH][KW], double Out[CO][H][W])
{
  int c, d, y, x;
  for (c = 0; c < ci; c++)
    for (y = 0; y < h; y++)
      for (x = 0; x < w; x++)
        In[c][y][x] = (double)((c + 1) * (y * 3 + x) % 17) / 17.0;
  for (c = 0; c < co; c++)
    for (d = 0; d < ci; d++)
      for (y = 0; y < KH; y++)
        for (x = 0; x < KW; x++)
          Wt[c][d][y][x] = (double)((c * 7 + d * 3 + y * 2 + x) % 11 - 5) / 10.0;
  for (c = 0; c < co; c++)
    for (y = 0; y < h; y++)
      for (x = 0; x < w; x++)
        Out[c][y][x] = 0.0;
}

static void kernel_conv2d(int co, int ci, int h, int w, double In[CI][H][W],
                          double Wt[CO][CI][KH][KW], double Out[CO][H][W])
{
  int c, d, y, x, p, q;
#pragma scop
  for (c = 0; c < co; c++)
    for (y = 0; y < h - 2; y++)
      for (x = 0; x < w - 2; x++) {
        Out[c][y][x] = 0.0;
        for (d = 0; d < ci; d++)
          for (p = 0; p < 3; p++)
            for (q = 0; q < 3; q++)
              Out[c][y][x] += Wt[c][d][p][q] * In[d][y + p][x + q];
      }
#pragma endscop
}

int main(int argc, char **argv)
{
  int co = CO, ci = CI, h = H, w = W;
  double(*In)[H][W] = bench_alloc((size_t)CI * H * W, sizeof(double));
  double(*Wt)[CI][KH][KW] = bench_alloc((size_t)CO * CI * KH * KW, sizeof(double));
  double(*Out)[H][W] = bench_alloc((size_t)CO * H * W, sizeof(double));

  init_data(co, ci, h, w, In, Wt, Out);

  bench_timer_start();
  kernel_conv2d(co, ci, h, w, In, Wt, Out);
  bench_timer_stop();
  bench_timer_print();

  if (bench_dump_wanted(argc, argv))
    bench_dump_doubles("Out", &Out[0][0][0], (long)CO * H * W);

  free(In);
  free(Wt);
  free(Out);
  return 0;
}
