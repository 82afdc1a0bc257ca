// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// Whole attention layers as the layer builder lays them out: one function
// per layer kind, the arguments tagged with `attn.arg`, the layers of that
// kind in `attn.layers`, and (output, k_cache, v_cache) returned. The CHECK
// lines follow the data flow from argument to result.

//===----------------------------------------------------------------------===//
// MiMo-V2-Flash (examples/configs/mimo-v2-flash.json): Dqk = 192, Dv = 128,
// partial rotary 0.334 * 192 -> 64 dims (neox), attention_value_scale 0.707
// (taken here to apply to both layer kinds),
// no q/k norm, no output gate. Full attention: 64 / 4 heads, theta 5e6,
// no sinks. Sliding-window attention: 64 / 8 heads, theta 1e4, window 128,
// sinks.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: module @mimo_v2_flash attributes {attn.model_type = "mimo_v2_flash"}

// CHECK-LABEL: func.func @full_attention(
// CHECK-SAME:      %[[QKV:[^:]+]]: tensor<?x13568xbf16> {attn.arg = "qkv"},
// CHECK-SAME:      %[[POS:[^:]+]]: tensor<?xi64> {attn.arg = "positions"},
// CHECK-SAME:      %[[SLOTS:[^:]+]]: tensor<?xi64> {attn.arg = "slot_mapping"},
// CHECK-SAME:      %[[KCACHE:[^:]+]]: tensor<?x16x4x192xbf16> {attn.arg = "k_cache"},
// CHECK-SAME:      %[[VCACHE:[^:]+]]: tensor<?x16x4x128xbf16> {attn.arg = "v_cache"},
// CHECK-SAME:      %[[BT:[^:]+]]: tensor<?x?xi32> {attn.arg = "block_tables"},
// CHECK-SAME:      %[[SL:[^:]+]]: tensor<?xi32> {attn.arg = "seq_lens"},
// CHECK-SAME:      %[[QSL:[^:]+]]: tensor<?xi32> {attn.arg = "query_start_loc"})
// CHECK-SAME:      -> (tensor<?x64x128xbf16>, tensor<?x16x4x192xbf16>, tensor<?x16x4x128xbf16>)
// CHECK-SAME:      attributes {attn.layers = array<i64: 0, 5, 11, 17, 23, 29, 35, 41, 47>}
// CHECK-NEXT:    %[[Q:[^ ,]+]], %[[K:[^ ,]+]], %[[V:[^ ,]+]] = attn.qkv_split %[[QKV]] {num_kv_heads = 4 : i64, num_q_heads = 64 : i64, qk_head_dim = 192 : i64, v_head_dim = 128 : i64} : tensor<?x13568xbf16> -> tensor<?x64x192xbf16>, tensor<?x4x192xbf16>, tensor<?x4x128xbf16>
// CHECK-NEXT:    %[[QR:[^ ]+]] = attn.rope %[[Q]], %[[POS]] {rotary_dim = 64 : i64, theta = 5.000000e+06 : f64} : tensor<?x64x192xbf16>, tensor<?xi64>
// CHECK-NEXT:    %[[KR:[^ ]+]] = attn.rope %[[K]], %[[POS]] {rotary_dim = 64 : i64, theta = 5.000000e+06 : f64} : tensor<?x4x192xbf16>, tensor<?xi64>
// CHECK-NEXT:    %[[KC:[^ ,]+]], %[[VC:[^ ,]+]] = attn.cache_write %[[KR]], %[[V]], %[[SLOTS]] into %[[KCACHE]], %[[VCACHE]] : tensor<?x4x192xbf16>, tensor<?x4x128xbf16>, tensor<?xi64> into tensor<?x16x4x192xbf16>, tensor<?x16x4x128xbf16>{{$}}
// CHECK-NEXT:    %[[O:[^ ]+]] = attn.paged_attention %[[QR]], %[[KC]], %[[VC]], %[[BT]], %[[SL]], %[[QSL]] {softmax_scale = 0.07216878364870323 : f64, value_scale = 7.070000e-01 : f64} : tensor<?x64x192xbf16>, tensor<?x16x4x192xbf16>, tensor<?x16x4x128xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x64x128xbf16>
// CHECK-NEXT:    return %[[O]], %[[KC]], %[[VC]] : tensor<?x64x128xbf16>, tensor<?x16x4x192xbf16>, tensor<?x16x4x128xbf16>

// CHECK-LABEL: func.func @sliding_window_attention(
// CHECK-SAME:      %[[QKV:[^:]+]]: tensor<?x14848xbf16> {attn.arg = "qkv"},
// CHECK-SAME:      %[[SINKS:[^:]+]]: tensor<64xf32> {attn.arg = "sinks"})
// CHECK-SAME:      attributes {attn.layers = array<i64: 1, 2, 3, 4, 6, 7, 8, 9, 10, 12, 13, 14, 15, 16, 18, 19, 20, 21, 22, 24, 25, 26, 27, 28, 30, 31, 32, 33, 34, 36, 37, 38, 39, 40, 42, 43, 44, 45, 46>}
// CHECK-NEXT:    %[[Q:[^ ,]+]], %[[K:[^ ,]+]], %[[V:[^ ,]+]] = attn.qkv_split %[[QKV]] {num_kv_heads = 8 : i64, num_q_heads = 64 : i64, qk_head_dim = 192 : i64, v_head_dim = 128 : i64} : tensor<?x14848xbf16> -> tensor<?x64x192xbf16>, tensor<?x8x192xbf16>, tensor<?x8x128xbf16>
// CHECK-NEXT:    %[[QR:[^ ]+]] = attn.rope %[[Q]], %{{[^ ,]+}} {rotary_dim = 64 : i64, theta = 1.000000e+04 : f64}
// CHECK-NEXT:    %[[KR:[^ ]+]] = attn.rope %[[K]], %{{[^ ,]+}} {rotary_dim = 64 : i64, theta = 1.000000e+04 : f64}
// CHECK-NEXT:    %[[KC:[^ ,]+]], %[[VC:[^ ,]+]] = attn.cache_write %[[KR]], %[[V]],
// CHECK-NEXT:    %[[O:[^ ]+]] = attn.paged_attention %[[QR]], %[[KC]], %[[VC]], %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}} sinks %[[SINKS]] {sliding_window = 128 : i64, softmax_scale = 0.07216878364870323 : f64, value_scale = 7.070000e-01 : f64} :
// CHECK-SAME:      sinks tensor<64xf32> -> tensor<?x64x128xbf16>
// CHECK-NEXT:    return %[[O]], %[[KC]], %[[VC]]
module @mimo_v2_flash attributes {attn.model_type = "mimo_v2_flash"} {
  // W = 64*192 + 4*192 + 4*128 = 13568.
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
    // softmax_scale = 1 / sqrt(192).
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

  // W = 64*192 + 8*192 + 8*128 = 14848.
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

//===----------------------------------------------------------------------===//
// Qwen3-Next-80B-A3B (examples/configs/qwen3-next-80b-a3b.json), gated full
// attention layers: 16 / 2 heads, Dqk = Dv = 256, q_proj emits q and the
// sigmoid output gate interleaved per head, gemma-style (1 + w) q/k RMSNorm
// with eps 1e-6 before rope, partial rotary 0.25 * 256 -> 64 dims (neox),
// theta 1e7. W = 16*(256 + 256) + 2*256 + 2*256 = 9216.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: module @qwen3_next attributes {attn.model_type = "qwen3_next"}
// CHECK-LABEL: func.func @gated_full_attention(
// CHECK-SAME:      %[[QKV:[^:]+]]: tensor<?x9216xbf16> {attn.arg = "qkv"},
// CHECK-SAME:      %[[POS:[^:]+]]: tensor<?xi64> {attn.arg = "positions"},
// CHECK-SAME:      %[[SLOTS:[^:]+]]: tensor<?xi64> {attn.arg = "slot_mapping"},
// CHECK-SAME:      %[[KCACHE:[^:]+]]: tensor<?x16x2x256xbf16> {attn.arg = "k_cache"},
// CHECK-SAME:      %[[VCACHE:[^:]+]]: tensor<?x16x2x256xbf16> {attn.arg = "v_cache"},
// CHECK-SAME:      %[[BT:[^:]+]]: tensor<?x?xi32> {attn.arg = "block_tables"},
// CHECK-SAME:      %[[SL:[^:]+]]: tensor<?xi32> {attn.arg = "seq_lens"},
// CHECK-SAME:      %[[QSL:[^:]+]]: tensor<?xi32> {attn.arg = "query_start_loc"},
// CHECK-SAME:      %[[QW:[^:]+]]: tensor<256xbf16> {attn.arg = "q_norm_weight"},
// CHECK-SAME:      %[[KW:[^:]+]]: tensor<256xbf16> {attn.arg = "k_norm_weight"})
// CHECK-SAME:      -> (tensor<?x16x256xbf16>, tensor<?x16x2x256xbf16>, tensor<?x16x2x256xbf16>)
// CHECK-SAME:      attributes {attn.layers = array<i64: 3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47>}
// CHECK-NEXT:    %[[Q:[^ ,]+]], %[[K:[^ ,]+]], %[[V:[^ ,]+]], %[[G:[^ ,]+]] = attn.qkv_split %[[QKV]] {gate_layout = #attn.gate_layout<interleaved>, num_kv_heads = 2 : i64, num_q_heads = 16 : i64, qk_head_dim = 256 : i64, v_head_dim = 256 : i64} : tensor<?x9216xbf16> -> tensor<?x16x256xbf16>, tensor<?x2x256xbf16>, tensor<?x2x256xbf16>, tensor<?x16x256xbf16>
// CHECK-NEXT:    %[[QN:[^ ]+]] = attn.rms_norm %[[Q]], %[[QW]] {eps = 9.9999999999999995E-7 : f64, style = #attn.norm_style<gemma>} : tensor<?x16x256xbf16>, tensor<256xbf16>
// CHECK-NEXT:    %[[KN:[^ ]+]] = attn.rms_norm %[[K]], %[[KW]] {eps = 9.9999999999999995E-7 : f64, style = #attn.norm_style<gemma>} : tensor<?x2x256xbf16>, tensor<256xbf16>
// CHECK-NEXT:    %[[QR:[^ ]+]] = attn.rope %[[QN]], %[[POS]] {rotary_dim = 64 : i64, theta = 1.000000e+07 : f64} : tensor<?x16x256xbf16>, tensor<?xi64>
// CHECK-NEXT:    %[[KR:[^ ]+]] = attn.rope %[[KN]], %[[POS]] {rotary_dim = 64 : i64, theta = 1.000000e+07 : f64} : tensor<?x2x256xbf16>, tensor<?xi64>
// CHECK-NEXT:    %[[KC:[^ ,]+]], %[[VC:[^ ,]+]] = attn.cache_write %[[KR]], %[[V]], %[[SLOTS]] into %[[KCACHE]], %[[VCACHE]] : tensor<?x2x256xbf16>, tensor<?x2x256xbf16>, tensor<?xi64> into tensor<?x16x2x256xbf16>, tensor<?x16x2x256xbf16>{{$}}
// CHECK-NEXT:    %[[O:[^ ]+]] = attn.paged_attention %[[QR]], %[[KC]], %[[VC]], %[[BT]], %[[SL]], %[[QSL]] {softmax_scale = 6.250000e-02 : f64} : tensor<?x16x256xbf16>, tensor<?x16x2x256xbf16>, tensor<?x16x2x256xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x256xbf16>
// CHECK-NEXT:    %[[Y:[^ ]+]] = attn.output_gate %[[O]], %[[G]] : tensor<?x16x256xbf16>
// CHECK-NEXT:    return %[[Y]], %[[KC]], %[[VC]] : tensor<?x16x256xbf16>, tensor<?x16x2x256xbf16>, tensor<?x16x2x256xbf16>
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
    // softmax_scale = 1 / sqrt(256).
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
