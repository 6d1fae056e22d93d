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
