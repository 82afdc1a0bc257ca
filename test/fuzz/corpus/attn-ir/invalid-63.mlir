func.func @cache_write_cache_dtype_not_activation(
    %k: tensor<?x4x128xbf16>, %v: tensor<?x4x128xbf16>, %slots: tensor<?xi64>,
    %kc: tensor<?x16x4x128xf16>, %vc: tensor<?x16x4x128xf16>) {
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc
      : tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
      into tensor<?x16x4x128xf16>, tensor<?x16x4x128xf16>
  return
}
