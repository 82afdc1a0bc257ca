func.func @qkvg_norm_rope_192_128(%qkv: tensor<?x1920xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x2x192xbf16>, %vc: tensor<?x16x2x128xbf16>, %qw: tensor<192xbf16>, %kw: tensor<192xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> (tensor<?x4x128xbf16>, tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>) {
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 192, v_head_dim = 128, gate_layout = #attn.gate_layout<qkvg>} : tensor<?x1920xbf16> -> tensor<?x4x192xbf16>, tensor<?x2x192xbf16>, tensor<?x2x128xbf16>, tensor<?x4x128xbf16>
  %qn = attn.rms_norm %q, %qw {eps = 1.0e-6 : f64} : tensor<?x4x192xbf16>, tensor<192xbf16>
  %kn = attn.rms_norm %k, %kw {eps = 1.0e-6 : f64} : tensor<?x2x192xbf16>, tensor<192xbf16>
  %qr = attn.rope %qn, %pos {style = #attn.rope_style<gptj>, rotary_dim = 64, rotary_offset = 128, theta = 1.0e4 : f64, scaling = #attn.rope_scaling<kind = yarn, factor = 40.0, original_max_position = 4096, mscale_all_dim = 1.0>} : tensor<?x4x192xbf16>, tensor<?xi64>
  %kr = attn.rope %kn, %pos {style = #attn.rope_style<gptj>, rotary_dim = 64, rotary_offset = 128, theta = 1.0e4 : f64, scaling = #attn.rope_scaling<kind = yarn, factor = 40.0, original_max_position = 4096, mscale_all_dim = 1.0>} : tensor<?x2x192xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x2x192xbf16>, tensor<?x2x128xbf16>, tensor<?xi64> into tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>
  %o = attn.paged_attention %qr, %kc2, %vc2, %tables, %lens, %starts {softmax_scale = 0.0722 : f64} : tensor<?x4x192xbf16>, tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x128xbf16>
  %y = attn.output_gate %o, %g : tensor<?x4x128xbf16>
  return %y, %kc2, %vc2 : tensor<?x4x128xbf16>, tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>
}
