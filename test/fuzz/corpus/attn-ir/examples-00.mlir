module @mimo_v2_flash attributes {attn.model_type = "mimo_v2_flash"} {
  func.func @full_attention(
      %qkv: tensor<?x13568xbf16> {attn.arg = "qkv"},
      %positions: tensor<?xi64> {attn.arg = "positions"},
      %slot_mapping: tensor<?xi64> {attn.arg = "slot_mapping"},
      %k_cache: tensor<?x16x4x192xbf16> {attn.arg = "k_cache"},
      %v_cache: tensor<?x16x4x128xbf16> {attn.arg = "v_cache"},
      %block_tables: tensor<?x?xi32> {attn.arg = "block_tables"},
      %seq_lens: tensor<?xi32> {attn.arg = "seq_lens"},
      %query_start_loc: tensor<?xi32> {attn.arg = "query_start_loc"})
      -> (tensor<?x64x128xbf16>, tensor<?x16x4x192xbf16>,
          tensor<?x16x4x128xbf16>)
      attributes {attn.layers = array<i64: 0, 5, 11, 17, 23, 29, 35, 41, 47>} {
    %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 64, num_kv_heads = 4,
        qk_head_dim = 192, v_head_dim = 128}
        : tensor<?x13568xbf16>
        -> tensor<?x64x192xbf16>, tensor<?x4x192xbf16>, tensor<?x4x128xbf16>
    %q_rot = attn.rope %q, %positions {style = #attn.rope_style<neox>,
        rotary_dim = 64, theta = 5.0e+06 : f64}
        : tensor<?x64x192xbf16>, tensor<?xi64>
    %k_rot = attn.rope %k, %positions {style = #attn.rope_style<neox>,
        rotary_dim = 64, theta = 5.0e+06 : f64}
        : tensor<?x4x192xbf16>, tensor<?xi64>
    %kc, %vc = attn.cache_write %k_rot, %v, %slot_mapping
        into %k_cache, %v_cache
        : tensor<?x4x192xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
        into tensor<?x16x4x192xbf16>, tensor<?x16x4x128xbf16>
    %out = attn.paged_attention %q_rot, %kc, %vc, %block_tables, %seq_lens,
        %query_start_loc {softmax_scale = 0.07216878364870323 : f64,
                          causal = true, value_scale = 0.707 : f64}
        : tensor<?x64x192xbf16>, tensor<?x16x4x192xbf16>,
          tensor<?x16x4x128xbf16>, tensor<?x?xi32>, tensor<?xi32>,
          tensor<?xi32> -> tensor<?x64x128xbf16>
    return %out, %kc, %vc
        : tensor<?x64x128xbf16>, tensor<?x16x4x192xbf16>,
          tensor<?x16x4x128xbf16>
  }

  func.func @sliding_window_attention(
      %qkv: tensor<?x14848xbf16> {attn.arg = "qkv"},
      %positions: tensor<?xi64> {attn.arg = "positions"},
      %slot_mapping: tensor<?xi64> {attn.arg = "slot_mapping"},
      %k_cache: tensor<?x16x8x192xbf16> {attn.arg = "k_cache"},
      %v_cache: tensor<?x16x8x128xbf16> {attn.arg = "v_cache"},
      %block_tables: tensor<?x?xi32> {attn.arg = "block_tables"},
      %seq_lens: tensor<?xi32> {attn.arg = "seq_lens"},
      %query_start_loc: tensor<?xi32> {attn.arg = "query_start_loc"},
      %sinks: tensor<64xf32> {attn.arg = "sinks"})
      -> (tensor<?x64x128xbf16>, tensor<?x16x8x192xbf16>,
          tensor<?x16x8x128xbf16>)
      attributes {attn.layers = array<i64: 1, 2, 3, 4, 6, 7, 8, 9, 10, 12, 13,
          14, 15, 16, 18, 19, 20, 21, 22, 24, 25, 26, 27, 28, 30, 31, 32, 33,
          34, 36, 37, 38, 39, 40, 42, 43, 44, 45, 46>} {
    %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 64, num_kv_heads = 8,
        qk_head_dim = 192, v_head_dim = 128}
        : tensor<?x14848xbf16>
        -> tensor<?x64x192xbf16>, tensor<?x8x192xbf16>, tensor<?x8x128xbf16>
    %q_rot = attn.rope %q, %positions {rotary_dim = 64, theta = 1.0e+04 : f64}
        : tensor<?x64x192xbf16>, tensor<?xi64>
    %k_rot = attn.rope %k, %positions {rotary_dim = 64, theta = 1.0e+04 : f64}
        : tensor<?x8x192xbf16>, tensor<?xi64>
    %kc, %vc = attn.cache_write %k_rot, %v, %slot_mapping
        into %k_cache, %v_cache
        : tensor<?x8x192xbf16>, tensor<?x8x128xbf16>, tensor<?xi64>
        into tensor<?x16x8x192xbf16>, tensor<?x16x8x128xbf16>
    %out = attn.paged_attention %q_rot, %kc, %vc, %block_tables, %seq_lens,
        %query_start_loc sinks %sinks
        {softmax_scale = 0.07216878364870323 : f64, sliding_window = 128,
         value_scale = 0.707 : f64}
        : tensor<?x64x192xbf16>, tensor<?x16x8x192xbf16>,
          tensor<?x16x8x128xbf16>, tensor<?x?xi32>, tensor<?xi32>,
          tensor<?xi32> sinks tensor<64xf32> -> tensor<?x64x128xbf16>
    return %out, %kc, %vc
        : tensor<?x64x128xbf16>, tensor<?x16x8x192xbf16>,
          tensor<?x16x8x128xbf16>
  }
}


module @qwen3_next attributes {attn.model_type = "qwen3_next"} {
  func.func @gated_full_attention(
      %qkv: tensor<?x9216xbf16> {attn.arg = "qkv"},
      %positions: tensor<?xi64> {attn.arg = "positions"},
      %slot_mapping: tensor<?xi64> {attn.arg = "slot_mapping"},
      %k_cache: tensor<?x16x2x256xbf16> {attn.arg = "k_cache"},
      %v_cache: tensor<?x16x2x256xbf16> {attn.arg = "v_cache"},
      %block_tables: tensor<?x?xi32> {attn.arg = "block_tables"},
      %seq_lens: tensor<?xi32> {attn.arg = "seq_lens"},
      %query_start_loc: tensor<?xi32> {attn.arg = "query_start_loc"},
      %q_norm_weight: tensor<256xbf16> {attn.arg = "q_norm_weight"},
      %k_norm_weight: tensor<256xbf16> {attn.arg = "k_norm_weight"})
      -> (tensor<?x16x256xbf16>, tensor<?x16x2x256xbf16>,
          tensor<?x16x2x256xbf16>)
      attributes {attn.layers = array<i64: 3, 7, 11, 15, 19, 23, 27, 31, 35,
                                           39, 43, 47>} {
    %q, %k, %v, %gate = attn.qkv_split %qkv {num_q_heads = 16,
        num_kv_heads = 2, qk_head_dim = 256, v_head_dim = 256,
        gate_layout = #attn.gate_layout<interleaved>}
        : tensor<?x9216xbf16>
        -> tensor<?x16x256xbf16>, tensor<?x2x256xbf16>, tensor<?x2x256xbf16>,
           tensor<?x16x256xbf16>
    %q_norm = attn.rms_norm %q, %q_norm_weight {eps = 1.0e-06 : f64,
        style = #attn.norm_style<gemma>}
        : tensor<?x16x256xbf16>, tensor<256xbf16>
    %k_norm = attn.rms_norm %k, %k_norm_weight {eps = 1.0e-06 : f64,
        style = #attn.norm_style<gemma>}
        : tensor<?x2x256xbf16>, tensor<256xbf16>
    %q_rot = attn.rope %q_norm, %positions {rotary_dim = 64,
        theta = 1.0e+07 : f64}
        : tensor<?x16x256xbf16>, tensor<?xi64>
    %k_rot = attn.rope %k_norm, %positions {rotary_dim = 64,
        theta = 1.0e+07 : f64}
        : tensor<?x2x256xbf16>, tensor<?xi64>
    %kc, %vc = attn.cache_write %k_rot, %v, %slot_mapping
        into %k_cache, %v_cache
        : tensor<?x2x256xbf16>, tensor<?x2x256xbf16>, tensor<?xi64>
        into tensor<?x16x2x256xbf16>, tensor<?x16x2x256xbf16>
    %attn = attn.paged_attention %q_rot, %kc, %vc, %block_tables, %seq_lens,
        %query_start_loc {softmax_scale = 0.0625 : f64}
        : tensor<?x16x256xbf16>, tensor<?x16x2x256xbf16>,
          tensor<?x16x2x256xbf16>, tensor<?x?xi32>, tensor<?xi32>,
          tensor<?xi32> -> tensor<?x16x256xbf16>
    %out = attn.output_gate %attn, %gate : tensor<?x16x256xbf16>
    return %out, %kc, %vc
        : tensor<?x16x256xbf16>, tensor<?x16x2x256xbf16>,
          tensor<?x16x2x256xbf16>
  }
}
