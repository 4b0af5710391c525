// OpKind: a small id naming a row of the op table (op_registry.hpp). The built-in kinds are the
// rows of the list below, each implemented by one file costmodel/graph/src/ops/<kind>.cpp that
// defines ops::<kind>_kind(), the kind's whole table row (shape rule, FLOPs and bytes, SBP
// rules, saved activations, traits). Adding a built-in kind is that file plus one row here;
// the OpKind constant (OpKind::<kind>) and the table row come from this list. Kinds beyond
// these are added at run time by register_op_kind() (op_registry.hpp), which returns a new id.
#pragma once
#include <cstdint>

// X(kind): the built-in kinds, in id order.
#define AUTODDL_BUILTIN_OP_KINDS(X)                                                           \
  X(matmul)        /* A(..., m, k) · B(k, n) [B may carry A's batch dims]; Linear, BatchMatMul */ \
  X(conv2d)        /* x(N, C, H, W) * w(K, C, R, S) -> (N, K, H', W') */                       \
  X(pool)          /* max/avg pooling over H, W; global average pooling */                     \
  X(bias_add)      /* x(..., c) + b(c) along `axis` (default last; 1 for NCHW) */              \
  X(unary)         /* elementwise: relu, gelu, dropout, tanh, sigmoid, silu */                 \
  X(binary)        /* elementwise add / mul, broadcasting size-1 or missing leading dims */    \
  X(softmax)       /* softmax over `axis` (default last) */                                    \
  X(layer_norm)    /* normalize the trailing axes from `axis`; gamma/beta (RMSNorm: gamma) */ \
  X(batch_norm)    /* normalize over all but axis 1 (channels); gamma/beta */                  \
  X(embedding)     /* table(vocab, h) gathered by indices(...) -> (..., h) */                  \
  X(reshape)       /* same elements, new shape (Flatten is a reshape) */                       \
  X(transpose)     /* permute axes by `perm` */                                                \
  X(concat)        /* concatenate along `axis` */                                              \
  X(cross_entropy) /* logits(..., classes), labels(...) -> scalar loss */                      \
  X(attention)     /* fused softmax(q·kᵀ/√d)·v over (batch, heads, seq, head_dim) */          \
  X(moe_router)    /* x(..., h) · W(h, E), softmax/sigmoid, top-k -> probabilities (..., E) */ \
  X(moe_dispatch)  /* tokens x(b, s, h) -> expert slots (C, E, h), top_k copies per token */   \
  X(expert_matmul) /* grouped GEMM x(C, E, k) · W(E, k, n) -> (C, E, n) */                     \
  X(moe_combine)   /* slots y(C, E, h), probabilities p(b, s, E) -> tokens (b, s, h) */

namespace autoddl::costmodel {

// Built-in kinds have named constants (OpKind::matmul); registered kinds take the ids after
// them (up to 255), so an OpKind is an index into op_kinds().
enum class OpKind : uint8_t {
#define AUTODDL_OP_KIND_ENUMERATOR(kind) kind,
  AUTODDL_BUILTIN_OP_KINDS(AUTODDL_OP_KIND_ENUMERATOR)
#undef AUTODDL_OP_KIND_ENUMERATOR
};

#define AUTODDL_OP_KIND_COUNT_ONE(kind) +1
inline constexpr int kBuiltinOpKindCount = 0 AUTODDL_BUILTIN_OP_KINDS(AUTODDL_OP_KIND_COUNT_ONE);
#undef AUTODDL_OP_KIND_COUNT_ONE

}  // namespace autoddl::costmodel
