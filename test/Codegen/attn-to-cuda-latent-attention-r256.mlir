// RUN: attn-opt %s -attnc-pipeline | attn-translate --attn-to-cuda | FileCheck %s

// MLA's absorbed decode at kv_lora_rank 256 (Mistral 4: 32 heads, rope 64),
// worked out by hand from plan/LatentAttention.h (sm_90a, 132 SMs): rows of
// 256 + 64 = 320 values (5 column blocks). Shared memory: Q 64 x 320 x 2 =
// 40960 bytes, two K tiles of 40960 from 40960, P (64 x 64 x 2) at 122880,
// row maxima (2 x 2 x 64 floats) at 131072, row sums (2 x 64 floats) at
// 132096, split flag at 132608, the tile's sequence at 132624, the K
// tiles' mbarriers (2 x 5 x 8 bytes) at 132640, 132720 in all (one CTA
// per SM still: two would need 265440 > 232448 bytes). Workspace W = 264 x 64 x
// (256 + 2) + 132 = 4359300 floats. P V by wgmma m64n128k16 (each
// warpgroup keeps 128 of the 256 output columns).

// CHECK-LABEL: // ===== kernel mla__latent_attention (latent_attention) =====
// CHECK: // configuration: num_heads=32 kv_lora_rank=256 rope_head_dim=64 softmax_scale=0.13519999999999999 causal
// CHECK: P V of both
// CHECK-NEXT: // tiles by wgmma m64n128k16
// CHECK: static constexpr int kNumHeads = 32;
// CHECK-NEXT: static constexpr int kLatentDim = 256;
// CHECK-NEXT: static constexpr int kQkDim = 320;
// CHECK: static constexpr int kWorkspaceTiles = 264;
// CHECK: static constexpr int kQOffset = 0;
// CHECK-NEXT: static constexpr int kKOffset = 40960;
// CHECK-NEXT: static constexpr int kKBytes = 40960;
// CHECK-NEXT: static constexpr int kPOffset = 122880;
// CHECK-NEXT: static constexpr int kMaxOffset = 131072;
// CHECK-NEXT: static constexpr int kLOffset = 132096;
// CHECK-NEXT: static constexpr int kSplitFlagOffset = 132608;
// CHECK-NEXT: static constexpr int kOwnerOffset = 132624;
// CHECK-NEXT: static constexpr int kBarOffset = 132640;
// CHECK-NEXT: static constexpr int kSharedBytes = 132720;
// CHECK-LABEL: // ===== abi mla__latent_attention =====
// CHECK: "name": "query",
// CHECK: "shape": [
// CHECK-NEXT: "num_tokens",
// CHECK-NEXT: 32,
// CHECK-NEXT: 320
// CHECK: "name": "output",
// CHECK: "shape": [
// CHECK-NEXT: "num_tokens",
// CHECK-NEXT: 32,
// CHECK-NEXT: 256
// CHECK: "name": "workspace",
// CHECK-NEXT: "kind": "pointer",
// CHECK-NEXT: "dtype": "f32",
// CHECK-NEXT: "shape": [
// CHECK-NEXT: 4359300
// CHECK: "grid": [
// CHECK-NEXT: {
// CHECK-NEXT: "value": "num_tokens",
// CHECK-NEXT: "multiplier": 32,
// CHECK: "dynamic_shared_memory_bytes": 132720,
func.func @mla(%q: tensor<?x32x320xbf16>, %cache: tensor<?x64x320xbf16>,
               %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>)
    -> tensor<?x32x256xbf16> {
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts
      {kv_lora_rank = 256, softmax_scale = 0.1352 : f64}
      : tensor<?x32x320xbf16>, tensor<?x64x320xbf16>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x32x256xbf16>
  return %o : tensor<?x32x256xbf16>
}
