// RUN: attn-opt %s -attnc-pipeline | attn-translate --attn-to-cuda | FileCheck %s

// A warp-specialised schedule with persistent = true (kept by
// attn.keep_schedule): the Config says kPersistent, the producer keeps 40
// registers (AttentionTiling.h), the shared map adds the tile-info slots'
// 4 mbarriers (13 from 212992) and two 64-byte slots at 213104 (16-aligned)
// in place of the owner's int4, and the grid is one block an SM (target_ctas
// 264 / 2 = 132) by 1 by the splits, each block striding over the row tiles
// x the 16 / 4 = 4 KV head packs.
// CHECK: schedule: block_m=128 block_n=176 {{.*}} mma=wgmma_ws {{.*}}persistent=1
// CHECK: static constexpr int kProducerRegisters = 40;
// CHECK: static constexpr int kWsBarOffset = 212992;
// CHECK-NEXT: static constexpr int kWsOwnerOffset = 213104;
// CHECK-NEXT: static constexpr int kSharedBytes = 213232;
// CHECK-NEXT: static constexpr int kWsInfoSlotBytes = 64;
// CHECK-NEXT: static constexpr bool kPersistent = true;
// CHECK: "grid": [
// CHECK-NEXT: 132,
// CHECK-NEXT: 1,
// CHECK-NEXT: {
// CHECK-NEXT: "value": "num_kv_splits",
func.func @p(%q: tensor<?x16x128xbf16>, %k: tensor<?x4x128xbf16>, %v: tensor<?x4x128xbf16>,
             %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> tensor<?x16x128xbf16> {
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.088 : f64, attn.keep_schedule,
      schedule = #attn.attention_schedule<block_m = 128, block_n = 176, num_warps = 12, pipeline_stages = 2, qk_dim_padded = 128, v_dim_padded = 128, gqa_pack = 4, split_kv_min_keys = 256, max_kv_splits = 1, target_ctas = 264, mma = "wgmma_ws", persistent = true>}
      : tensor<?x16x128xbf16>, tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x128xbf16>
  return %o : tensor<?x16x128xbf16>
}
