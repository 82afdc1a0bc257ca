func.func @cache_write_block_size(%k: tensor<?x4x128xbf16>,
                                  %v: tensor<?x4x128xbf16>,
                                  %slots: tensor<?xi64>,
                                  %kc: tensor<?x16x4x128xbf16>,
                                  %vc: tensor<?x32x4x128xbf16>) {
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc
      : tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
      into tensor<?x16x4x128xbf16>, tensor<?x32x4x128xbf16>
  return
}
