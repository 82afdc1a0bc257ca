func.func @two_errors(%q: tensor<?x8x1024xbf16>,
                      %kc: tensor<?x16x8x1024xbf16>,
                      %vc: tensor<?x16x8x128xbf16>,
                      %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
                      %qs: tensor<?xi32>) -> tensor<?x8x128xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.03125 : f64}
      : tensor<?x8x1024xbf16>, tensor<?x16x8x1024xbf16>,
        tensor<?x16x8x128xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x8x128xbf16>
  %o2 = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.03125 : f64}
      : tensor<?x8x1024xbf16>, tensor<?x16x8x1024xbf16>,
        tensor<?x16x8x128xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x8x128xbf16>
  return %o2 : tensor<?x8x128xbf16>
}


func.func @unknown_arch(%q: tensor<?x8x64xbf16>, %kc: tensor<?x16x8x64xbf16>,
                        %vc: tensor<?x16x8x64xbf16>, %bt: tensor<?x?xi32>,
                        %sl: tensor<?xi32>, %qs: tensor<?xi32>)
    -> tensor<?x8x64xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.125 : f64}
      : tensor<?x8x64xbf16>, tensor<?x16x8x64xbf16>, tensor<?x16x8x64xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  %o2 = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.125 : f64}
      : tensor<?x8x64xbf16>, tensor<?x16x8x64xbf16>, tensor<?x16x8x64xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o2 : tensor<?x8x64xbf16>
}


module {
  func.func @empty() {
    return
  }
}


func.func @negative_num_sms(%q: tensor<?x8x64xbf16>,
                            %kc: tensor<?x16x8x64xbf16>,
                            %vc: tensor<?x16x8x64xbf16>, %bt: tensor<?x?xi32>,
                            %sl: tensor<?xi32>, %qs: tensor<?xi32>)
    -> tensor<?x8x64xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.125 : f64}
      : tensor<?x8x64xbf16>, tensor<?x16x8x64xbf16>, tensor<?x16x8x64xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}
