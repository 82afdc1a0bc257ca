func.func @cache_write_slot_mapping_type(%k: tensor<?x4x128xbf16>,
                                         %v: tensor<?x4x128xbf16>,
                                         %slots: tensor<?xui32>,
                                         %kc: tensor<?x16x4x128xbf16>,
                                         %vc: tensor<?x16x4x128xbf16>) {
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc
      : tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xui32>
      into tensor<?x16x4x128xbf16>, tensor<?x16x4x128xbf16>
  return
}
