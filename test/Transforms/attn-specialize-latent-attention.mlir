// RUN: attn-opt %s -split-input-file -attn-specialize | FileCheck %s --check-prefix=SM90A
// RUN: attn-opt %s -split-input-file -attn-specialize=num-sms=16 | FileCheck %s --check-prefix=SMS16
// RUN: not attn-opt %s -split-input-file -attn-specialize=arch=sm_90 2>&1 | FileCheck %s --check-prefix=SM90

// MLA's absorbed decode has one tile (plan/LatentAttention.h): 64 rows, 64
// keys, 8 warps. Its Q and two K tiles of 64 x 576 bf16 (216 KB) leave room
// for one CTA per SM, so target_ctas = SMs (132 on sm_90a's flagship, or
// num-sms), and max_kv_splits = min(32, SMs).

// SM90A-LABEL: func.func @mla
// SM90A: attn.latent_attention
// SM90A-SAME: schedule = #attn.latent_attention_schedule<block_m = 64, block_n = 64, num_warps = 8, max_kv_splits = 32, target_ctas = 132>
// SMS16: schedule = #attn.latent_attention_schedule<block_m = 64, block_n = 64, num_warps = 8, max_kv_splits = 16, target_ctas = 16>
// The kernel needs wgmma: sm_90 (no "a") has none.
// SM90: error: 'attn.latent_attention' op cannot be specialized: the MLA decode kernel needs wgmma (sm_90a), the arch is sm_90
func.func @mla(%q: tensor<?x16x576xbf16>, %cache: tensor<?x64x576xbf16>,
               %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>)
    -> tensor<?x16x512xbf16> {
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts
      {kv_lora_rank = 512, softmax_scale = 0.1352 : f64}
      : tensor<?x16x576xbf16>, tensor<?x64x576xbf16>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x16x512xbf16>
  return %o : tensor<?x16x512xbf16>
}
