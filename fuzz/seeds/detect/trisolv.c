#define N 100
#define NI 100
#define NJ 100
#define NK 100
#define TSTEPS 10
static void kernel_trisolv(int n, double L[N][N], double x[N], double b[N])
{
  int i, j;
  for (i = 0; i < n; i++) {
    x[i] = b[i];
    for (j = 0; j < i; j++)
      x[i] -= L[i][j] * x[j];
    x[i] = x[i] / L[i][i];
  }
}
