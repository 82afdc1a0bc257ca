// torch_ops.cpp - torch.ops.attnc.preprocess / attention / mla_preprocess /
// latent_attention / varlen_attention / latent_gather.
//
// The ops registered in C++ (TORCH_LIBRARY), so a call costs the dispatcher
// and the attnc C checks, not a Python custom_op. Each op takes a "binding":
// the address of a KernelBinding made once per kernel by _make_binding (the
// attnc_kernel_t, and for each of the kernel's pointer parameters which op
// argument feeds it), then describes its tensors as attnc_tensor_t and calls
// attnc_kernel_launch_checked on torch's current stream of the tensors'
// device: the checks (dtype, rank, shapes bound to the ABI symbols, strides,
// alignment, device, split count, workspace size) are the C library's, with
// its named errors (raised as ValueError "attnc: <field>: <rule>").
//
// Bindings live as long as the process (a few hundred bytes per kernel); the
// kernel set they point to must outlive the calls (attnc.Model keeps it).
//
// Built by attnc.torch_ops.load() with torch.utils.cpp_extension against
// the libattnc.so the package loaded (attnc-c/Runtime.h from the source tree
// or the package's include/).

#include "attnc-c/Runtime.h"

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace {

constexpr int kMaxSlots = 16;

struct KernelBinding {
  attnc_kernel_t kernel = nullptr;
  int num_pointers = 0;
  // For pointer parameter i (ABI order): the op argument that feeds it.
  std::array<int, kMaxSlots> slot{};
  // Bit s set: op argument s feeds a parameter (optional arguments given
  // for a kernel without that feature are errors).
  uint32_t used = 0;
  std::array<std::string, kMaxSlots> slot_names; // op argument names
};

int32_t attncDtype(at::ScalarType type) {
  switch (type) {
  case at::kFloat: return ATTNC_DTYPE_F32;
  case at::kHalf: return ATTNC_DTYPE_F16;
  case at::kBFloat16: return ATTNC_DTYPE_BF16;
  case at::kFloat8_e4m3fn: return ATTNC_DTYPE_FP8_E4M3;
  case at::kFloat8_e5m2: return ATTNC_DTYPE_FP8_E5M2;
  case at::kChar: return ATTNC_DTYPE_I8;
  case at::kByte: return ATTNC_DTYPE_U8;
  case at::kInt: return ATTNC_DTYPE_I32;
  case at::kLong: return ATTNC_DTYPE_I64;
  default: return -1;
  }
}

const KernelBinding &binding(int64_t address) {
  TORCH_CHECK_VALUE(address != 0, "attnc: binding: NULL (make it with "
                                  "attnc.torch_ops.binding(model, layer, kind))");
  return *reinterpret_cast<const KernelBinding *>(address);
}

/// Describes op arguments `args` (index = slot; nullptr = not given) for
/// `b`'s kernel and launches it with the C library's checks.
void launchChecked(const KernelBinding &b, const at::Tensor *const *args,
                   int num_args, int64_t num_kv_splits) {
  std::array<attnc_tensor_t, kMaxSlots> tensors;
  const at::Tensor *first = nullptr;
  for (int s = 0; s < num_args; ++s)
    if (args[s] && !(b.used >> s & 1))
      TORCH_CHECK_VALUE(false, "attnc: ", b.slot_names[s],
                        ": this model's kernel has no such input (leave it None)");
  for (int i = 0; i < b.num_pointers; ++i) {
    const at::Tensor *t = args[b.slot[i]];
    TORCH_CHECK_VALUE(t != nullptr, "attnc: ", b.slot_names[b.slot[i]],
                      ": missing: this model's kernel needs it");
    TORCH_CHECK_VALUE(t->is_cuda(), "attnc: ", b.slot_names[b.slot[i]],
                      ": must be on a CUDA device, got ", t->device());
    attnc_tensor_t &d = tensors[i];
    d.data = t->data_ptr();
    d.dtype = attncDtype(t->scalar_type());
    TORCH_CHECK_VALUE(d.dtype >= 0, "attnc: ", b.slot_names[b.slot[i]],
                      ": unsupported dtype ", t->scalar_type());
    d.device = t->get_device();
    int64_t ndim = t->dim();
    TORCH_CHECK_VALUE(ndim <= ATTNC_MAX_TENSOR_DIMS, "attnc: ",
                      b.slot_names[b.slot[i]], ": more than ",
                      ATTNC_MAX_TENSOR_DIMS, " dims");
    d.ndim = int32_t(ndim);
    d.readonly = 0;
    auto sizes = t->sizes();
    auto strides = t->strides();
    for (int64_t k = 0; k < ndim; ++k) {
      d.shape[k] = sizes[k];
      d.strides[k] = strides[k];
    }
    if (!first)
      first = t;
  }
  if (!first)
    return;
  c10::cuda::CUDAGuard guard(first->device());
  cudaStream_t stream =
      c10::cuda::getCurrentCUDAStream(first->get_device()).stream();
  attnc_symbol_t symbol{"num_kv_splits", num_kv_splits};
  attnc_status_t status = attnc_kernel_launch_checked(
      b.kernel, stream, tensors.data(), size_t(b.num_pointers),
      num_kv_splits > 0 ? &symbol : nullptr, num_kv_splits > 0 ? 1 : 0);
  if (status != ATTNC_STATUS_OK) {
    if (status == ATTNC_STATUS_INVALID_ARGUMENT)
      TORCH_CHECK_VALUE(false, "attnc: ", attnc_last_error());
    TORCH_CHECK(false, "attnc (", attnc_status_name(status), "): ",
                attnc_last_error());
  }
}

const at::Tensor *opt(const std::optional<at::Tensor> &t) {
  return t.has_value() ? &*t : nullptr;
}

void preprocess(int64_t b, const at::Tensor &qkv, const at::Tensor &slot_mapping,
                const at::Tensor &k_cache, const at::Tensor &v_cache,
                const std::optional<at::Tensor> &positions,
                const std::optional<at::Tensor> &q_norm_weight,
                const std::optional<at::Tensor> &k_norm_weight,
                const std::optional<at::Tensor> &k_scale,
                const std::optional<at::Tensor> &v_scale,
                const at::Tensor &q_out,
                const std::optional<at::Tensor> &gate_out,
                const std::optional<at::Tensor> &q_norm_bias,
                const std::optional<at::Tensor> &k_norm_bias) {
  const at::Tensor *args[] = {&qkv,         &slot_mapping,       &k_cache,
                              &v_cache,     opt(positions),      opt(q_norm_weight),
                              opt(k_norm_weight), opt(k_scale),  opt(v_scale),
                              &q_out,       opt(gate_out),       opt(q_norm_bias),
                              opt(k_norm_bias)};
  launchChecked(binding(b), args, 13, 0);
}

void attention(int64_t b, const at::Tensor &query, const at::Tensor &k_cache,
               const at::Tensor &v_cache, const at::Tensor &block_tables,
               const at::Tensor &seq_lens, const at::Tensor &query_start_loc,
               const std::optional<at::Tensor> &sinks,
               const std::optional<at::Tensor> &k_scale,
               const std::optional<at::Tensor> &v_scale,
               const std::optional<at::Tensor> &gate, const at::Tensor &out,
               const std::optional<at::Tensor> &workspace,
               int64_t num_kv_splits) {
  const at::Tensor *args[] = {&query,        &k_cache,      &v_cache,
                              &block_tables, &seq_lens,     &query_start_loc,
                              opt(sinks),    opt(k_scale),  opt(v_scale),
                              opt(gate),     &out,          opt(workspace)};
  launchChecked(binding(b), args, 12, num_kv_splits);
}

void mlaPreprocess(int64_t b, const at::Tensor &kv_a, const at::Tensor &q_rope,
                   const at::Tensor &slot_mapping, const at::Tensor &positions,
                   const at::Tensor &kv_norm_weight, const at::Tensor &latent_cache,
                   const std::optional<at::Tensor> &cache_scale,
                   const at::Tensor &latent_out, const at::Tensor &q_rope_out) {
  const at::Tensor *args[] = {&kv_a,           &q_rope,       &slot_mapping,
                              &positions,      &kv_norm_weight, &latent_cache,
                              opt(cache_scale), &latent_out,  &q_rope_out};
  launchChecked(binding(b), args, 9, 0);
}

void latentAttention(int64_t b, const at::Tensor &query,
                     const at::Tensor &latent_cache, const at::Tensor &block_tables,
                     const at::Tensor &seq_lens, const at::Tensor &query_start_loc,
                     const std::optional<at::Tensor> &cache_scale,
                     const at::Tensor &out,
                     const std::optional<at::Tensor> &workspace,
                     int64_t num_kv_splits) {
  const at::Tensor *args[] = {&query,          &latent_cache, &block_tables,
                              &seq_lens,       &query_start_loc,
                              opt(cache_scale), &out,         opt(workspace)};
  launchChecked(binding(b), args, 8, num_kv_splits);
}

void varlenAttention(int64_t b, const at::Tensor &query, const at::Tensor &key,
                     const at::Tensor &value, const at::Tensor &cu_seqlens_q,
                     const at::Tensor &cu_seqlens_k, const at::Tensor &out,
                     const std::optional<at::Tensor> &workspace,
                     int64_t num_kv_splits) {
  const at::Tensor *args[] = {&query,        &key, &value, &cu_seqlens_q,
                              &cu_seqlens_k, &out, opt(workspace)};
  launchChecked(binding(b), args, 7, num_kv_splits);
}

void latentGather(int64_t b, const at::Tensor &latent_cache,
                  const at::Tensor &block_tables, const at::Tensor &cu_seqlens,
                  const std::optional<at::Tensor> &cache_scale,
                  const at::Tensor &out) {
  const at::Tensor *args[] = {&latent_cache, &block_tables, &cu_seqlens,
                              opt(cache_scale), &out};
  launchChecked(binding(b), args, 5, 0);
}

/// A binding for `kernel` (an attnc_kernel_t as int): slots[i] is the op
/// argument of pointer parameter i, names the op's argument names. Returns
/// its address (never freed).
int64_t makeBinding(int64_t kernel, std::vector<int64_t> slots,
                    std::vector<std::string> names) {
  TORCH_CHECK_VALUE(kernel != 0, "attnc: kernel: NULL");
  TORCH_CHECK_VALUE(slots.size() <= kMaxSlots && names.size() <= kMaxSlots,
                    "attnc: a kernel with more than ", kMaxSlots,
                    " tensor parameters");
  auto *b = new KernelBinding();
  b->kernel = reinterpret_cast<attnc_kernel_t>(kernel);
  b->num_pointers = int(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) {
    TORCH_CHECK_VALUE(slots[i] >= 0 && size_t(slots[i]) < names.size(),
                      "attnc: slot ", slots[i], " out of range");
    b->slot[i] = int(slots[i]);
    b->used |= 1u << slots[i];
  }
  for (size_t s = 0; s < names.size(); ++s)
    b->slot_names[s] = names[s];
  // Load the module in the current context now, before any capture.
  attnc_status_t status = attnc_kernel_prepare(b->kernel);
  TORCH_CHECK(status == ATTNC_STATUS_OK, "attnc: preparing the kernel: ",
              attnc_last_error());
  return reinterpret_cast<int64_t>(b);
}

} // namespace

TORCH_LIBRARY(attnc, m) {
  m.def("preprocess(int binding, Tensor qkv, Tensor slot_mapping, "
        "Tensor(a!) k_cache, Tensor(b!) v_cache, Tensor? positions, "
        "Tensor? q_norm_weight, Tensor? k_norm_weight, Tensor? k_scale, "
        "Tensor? v_scale, Tensor(c!) q_out, Tensor(d!)? gate_out, "
        "Tensor? q_norm_bias=None, Tensor? k_norm_bias=None) -> ()");
  m.def("attention(int binding, Tensor query, Tensor k_cache, Tensor v_cache, "
        "Tensor block_tables, Tensor seq_lens, Tensor query_start_loc, "
        "Tensor? sinks, Tensor? k_scale, Tensor? v_scale, Tensor? gate, "
        "Tensor(a!) out, Tensor(b!)? workspace, int num_kv_splits) -> ()");
  m.def("mla_preprocess(int binding, Tensor kv_a, Tensor q_rope, "
        "Tensor slot_mapping, Tensor positions, Tensor kv_norm_weight, "
        "Tensor(a!) latent_cache, Tensor? cache_scale, Tensor(b!) latent_out, "
        "Tensor(c!) q_rope_out) -> ()");
  m.def("latent_attention(int binding, Tensor query, Tensor latent_cache, "
        "Tensor block_tables, Tensor seq_lens, Tensor query_start_loc, "
        "Tensor? cache_scale, Tensor(a!) out, Tensor(b!)? workspace, "
        "int num_kv_splits) -> ()");
  m.def("varlen_attention(int binding, Tensor query, Tensor key, Tensor value, "
        "Tensor cu_seqlens_q, Tensor cu_seqlens_k, Tensor(a!) out, "
        "Tensor(b!)? workspace, int num_kv_splits) -> ()");
  m.def("latent_gather(int binding, Tensor latent_cache, Tensor block_tables, "
        "Tensor cu_seqlens, Tensor? cache_scale, Tensor(a!) out) -> ()");
  // No tensor arguments: a catch-all kernel.
  m.def("_make_binding(int kernel, int[] slots, str[] names) -> int",
        &makeBinding);
}

TORCH_LIBRARY_IMPL(attnc, CUDA, m) {
  m.impl("preprocess", &preprocess);
  m.impl("attention", &attention);
  m.impl("mla_preprocess", &mlaPreprocess);
  m.impl("latent_attention", &latentAttention);
  m.impl("varlen_attention", &varlenAttention);
  m.impl("latent_gather", &latentGather);
}
