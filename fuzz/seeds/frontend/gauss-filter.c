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
