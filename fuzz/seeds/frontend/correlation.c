#pragma scop
  for (j1 = 0; j1 < m; j1++) {
    mean[j1] = 0.0;
    for (i = 0; i < n; i++)
      mean[j1] += data[i][j1];
    mean[j1] /= float_n;
  }
  for (j1 = 0; j1 < m; j1++) {
    stddev[j1] = 0.0;
    for (i = 0; i < n; i++)
      stddev[j1] += (data[i][j1] - mean[j1]) * (data[i][j1] - mean[j1]);
    stddev[j1] /= float_n;
    stddev[j1] = sqrt(stddev[j1]);
    stddev[j1] = stddev[j1] <= eps ? 1.0 : stddev[j1];
  }
  for (i = 0; i < n; i++)
    for (j1 = 0; j1 < m; j1++) {
      data[i][j1] -= mean[j1];
      data[i][j1] /= sqrt(float_n) * stddev[j1];
    }
  for (j1 = 0; j1 < m - 1; j1++) {
    symmat[j1][j1] = 1.0;
    for (j2 = j1 + 1; j2 < m; j2++) {
      symmat[j1][j2] = 0.0;
      for (i = 0; i < n; i++)
        symmat[j1][j2] += data[i][j1] * data[i][j2];
      symmat[j2][j1] = symmat[j1][j2];
    }
  }
  symmat[m - 1][m - 1] = 1.0;
#pragma endscop
