// Graph IR: finalize() rejects graphs that break a kind's shape rule, the topological order
// or single assignment, naming the op or tensor; and each kind's FLOPs/bytes equal the
// hand-computed values (multiply-add = 2 FLOPs, backward only for inputs that need a gradient).
#include "autoddl/costmodel/graph.hpp"

#include <catch2/catch.hpp>

#include "autoddl/costmodel/graph_builder.hpp"
#include "autoddl/costmodel/op_registry.hpp"
#include "input_error.hpp"

using namespace autoddl::costmodel;

namespace {
// A graph written tensor by tensor and op by op, as a JSON file would give it.
struct Hand {
  Graph g;
  Hand() {
    g.name = "hand";
    g.source = "hand.json";
  }
  int act(const std::string& name, Shape s, DType d = DType::fp32) {
    return add(name, std::move(s), TensorRole::activation, d);
  }
  int param(const std::string& name, Shape s) {
    return add(name, std::move(s), TensorRole::parameter, DType::fp32);
  }
  int in(const std::string& name, Shape s, DType d = DType::fp32) {
    return add(name, std::move(s), TensorRole::input, d);
  }
  int add(const std::string& name, Shape s, TensorRole r, DType d) {
    g.tensors.push_back({name, std::move(s), d, r, -1});
    return static_cast<int>(g.tensors.size()) - 1;
  }
  Op& op(const std::string& name, OpKind kind, std::vector<int> inputs, std::vector<int> outputs) {
    Op o;
    o.name = name;
    o.kind = kind;
    o.inputs = std::move(inputs);
    o.outputs = std::move(outputs);
    g.ops.push_back(o);
    return g.ops.back();
  }
  const OpWork& work(const std::string& name) const { return g.ops[g.find_op(name)].work; }
};

// The InputError finalize() throws, which must name the file and `field`.
std::string finalize_error(Hand& h, const std::string& field) {
  auto e = input_error_of([&] { h.g.finalize(); });
  REQUIRE(e);
  CHECK(e->file() == "hand.json");
  CHECK(e->field() == field);
  return e->reason();
}
}  // namespace

TEST_CASE("a tensor's elements are the product of its shape, and a scalar has one", "[graph]") {
  Tensor t{"x", {8, 128, 768}, DType::fp16, TensorRole::activation, -1};
  CHECK(t.elements() == 8 * 128 * 768);
  CHECK(t.bytes() == 8 * 128 * 768 * 2);
  Tensor s{"loss", {}, DType::fp32, TensorRole::activation, -1};
  CHECK(s.elements() == 1);
  CHECK(s.bytes() == 4);
}

TEST_CASE("the op registry has one row per kind, in enum order, found by name",
          "[graph][registry]") {
  const auto& kinds = op_kinds();
  REQUIRE(kinds.size() == 19);
  for (size_t i = 0; i < kinds.size(); ++i) {
    CHECK(static_cast<size_t>(kinds[i].kind) == i);
    CHECK(find_op_kind(kinds[i].name) == &kinds[i]);
    CHECK(&op_kind_info(kinds[i].kind) == &kinds[i]);
    CHECK(kinds[i].min_inputs <= kinds[i].max_inputs);
  }
  CHECK(find_op_kind("convolution") == nullptr);
  UnaryFn u;
  CHECK(parse_unary_fn("gelu", u));
  CHECK(u == UnaryFn::gelu);
  CHECK(unary_fn_name(UnaryFn::dropout) == "dropout");
  PoolFn p;
  CHECK(parse_pool_fn("global_avg", p));
  BinaryFn bf;
  CHECK_FALSE(parse_binary_fn("sub", bf));
}

TEST_CASE("finalize fills producers, consumers and per-op work", "[graph]") {
  Hand h;
  int x = h.in("x", {4, 8}), w = h.param("w", {8, 16}), y = h.act("y", {4, 16});
  int r = h.act("r", {4, 16});
  h.op("mm", OpKind::matmul, {x, w}, {y});
  h.op("relu", OpKind::unary, {y}, {r});
  h.g.finalize();
  CHECK(h.g.tensors[y].producer == 0);
  CHECK(h.g.tensors[r].producer == 1);
  CHECK(h.g.tensors[x].producer == -1);
  CHECK(h.g.consumers[y] == std::vector<int>{1});
  CHECK(h.g.consumers[w] == std::vector<int>{0});
  CHECK(h.g.consumers[r].empty());
  CHECK(h.g.parameter_count() == 128);
  CHECK(h.g.parameter_bytes() == 512);
  CHECK(h.g.forward_flops() == 2.0 * 4 * 8 * 16 + 4 * 16);
}

TEST_CASE("a matmul whose inner dimensions differ is rejected naming the op and input",
          "[graph][shapes]") {
  Hand h;
  int x = h.in("x", {4, 8}), w = h.param("w", {9, 16}), y = h.act("y", {4, 16});
  h.op("fc", OpKind::matmul, {x, w}, {y});
  CHECK(finalize_error(h, "op fc") ==
        "input 1 'w': has shape [9, 16]: inner dim 9 does not match A's k = 8 (A is [4, 8])");
}

TEST_CASE("a batched matmul needs equal batch dims, and transpose_b reads B as (n, k)",
          "[graph][shapes]") {
  Hand h;
  int q = h.in("q", {2, 4, 16, 8}), k = h.in("k", {2, 3, 16, 8}), s = h.act("s", {2, 4, 16, 16});
  int qi = h.in("qi", {2, 4, 16, 8});
  Op& op = h.op("scores", OpKind::matmul, {q, k}, {s});
  op.attrs.transpose_b = true;
  CHECK(finalize_error(h, "op scores") ==
        "input 1 'k': batch dims of [2, 3, 16, 8] differ from A's [2, 4, 16, 8]");
  h.g.ops[0].inputs[1] = qi;
  h.g.finalize();
  CHECK(h.g.tensors[s].shape == Shape{2, 4, 16, 16});
}

TEST_CASE("an output declared with the wrong shape is rejected with both shapes",
          "[graph][shapes]") {
  Hand h;
  int x = h.in("x", {4, 8}), w = h.param("w", {8, 16}), y = h.act("y", {4, 15});
  h.op("fc", OpKind::matmul, {x, w}, {y});
  CHECK(finalize_error(h, "op fc") ==
        "output 0 'y': is declared [4, 15] but the matmul rule gives [4, 16]");
}

TEST_CASE("a conv2d whose weight channels differ from the input's is rejected", "[graph][shapes]") {
  Hand h;
  int x = h.in("x", {2, 3, 32, 32}), w = h.param("w", {64, 4, 3, 3}),
      y = h.act("y", {2, 64, 32, 32});
  Op& op = h.op("conv", OpKind::conv2d, {x, w}, {y});
  op.attrs.pad = 1;
  CHECK(finalize_error(h, "op conv") ==
        "input 1 'w': has shape [64, 4, 3, 3]: its 4 input channels do not match x's 3 (x is [2, "
        "3, 32, 32])");
}

TEST_CASE(
    "layer_norm, bias_add, binary, reshape, transpose, embedding and cross_entropy enforce their "
    "rules",
    "[graph][shapes]") {
  SECTION("layer_norm gamma must match the normalized axes") {
    Hand h;
    int x = h.in("x", {4, 10}), g = h.param("g", {12}), b = h.param("b", {10}),
        y = h.act("y", {4, 10});
    h.op("ln", OpKind::layer_norm, {x, g, b}, {y});
    CHECK(finalize_error(h, "op ln") ==
          "input 1 'g': has shape [12] but gamma must be [10] (the axes from 1 of [4, 10])");
  }
  SECTION("bias_add bias must match the bias axis") {
    Hand h;
    int x = h.in("x", {2, 8, 5, 5}), b = h.param("b", {5}), y = h.act("y", {2, 8, 5, 5});
    h.op("bias", OpKind::bias_add, {x, b}, {y}).attrs.axis = 1;
    CHECK(finalize_error(h, "op bias") ==
          "input 1 'b': has shape [5] but the bias must be [8] (axis 1 of [2, 8, 5, 5])");
  }
  SECTION("binary inputs must broadcast") {
    Hand h;
    int a = h.in("a", {8, 128, 64}), b = h.in("b", {127, 64}), y = h.act("y", {8, 128, 64});
    h.op("add", OpKind::binary, {a, b}, {y});
    CHECK(finalize_error(h, "op add") ==
          "input 1 'b': has shape [127, 64], which does not broadcast with [8, 128, 64]");
  }
  SECTION("reshape must keep the element count") {
    Hand h;
    int x = h.in("x", {4, 6}), y = h.act("y", {5, 5});
    h.op("flat", OpKind::reshape, {x}, {y});
    CHECK(finalize_error(h, "op flat") ==
          "output 0 'y': shape [5, 5] holds 25 elements but the input [4, 6] holds 24");
  }
  SECTION("transpose perm must be a permutation") {
    Hand h;
    int x = h.in("x", {2, 3, 4}), y = h.act("y", {2, 3, 4});
    h.op("t", OpKind::transpose, {x}, {y}).attrs.perm = {0, 1, 1};
    CHECK(finalize_error(h, "op t") == "perm is not a permutation of 0..2");
  }
  SECTION("embedding indices must be integers") {
    Hand h;
    int t = h.param("table", {100, 8}), i = h.in("ids", {4}), y = h.act("y", {4, 8});
    h.op("emb", OpKind::embedding, {t, i}, {y});
    CHECK(finalize_error(h, "op emb") == "input 1 'ids': indices must be int32 or int64, not fp32");
  }
  SECTION("cross_entropy labels must match the logits without the class axis") {
    Hand h;
    int l = h.in("logits", {4, 10}), y = h.in("labels", {4, 10}, DType::int64),
        loss = h.act("loss", {});
    h.op("loss", OpKind::cross_entropy, {l, y}, {loss});
    CHECK(finalize_error(h, "op loss") ==
          "input 1 'labels': has shape [4, 10] but labels must be [4] (the logits [4, 10] without "
          "the class axis)");
  }
  SECTION("pooling windows must fit the input") {
    Hand h;
    int x = h.in("x", {1, 3, 1, 1}), y = h.act("y", {1, 3, 1, 1});
    Op& op = h.op("pool", OpKind::pool, {x}, {y});
    op.attrs.kernel_h = op.attrs.kernel_w = op.attrs.stride = 2;
    CHECK(finalize_error(h, "op pool") ==
          "input 0 'x': has shape [1, 3, 1, 1], smaller than the 2x2 pooling window");
  }
}

TEST_CASE("an op reading a tensor produced by a later op breaks topological order",
          "[graph][order]") {
  Hand h;
  int x = h.in("x", {4}), a = h.act("a", {4}), b = h.act("b", {4});
  h.op("second", OpKind::unary, {a}, {b});
  h.op("first", OpKind::unary, {x}, {a});
  CHECK(finalize_error(h, "op second") ==
        "input 0 'a': is produced by op 'first', which comes later (ops[1]); ops must be in "
        "topological order");
}

TEST_CASE(
    "single assignment: a tensor written twice, a parameter written, an activation never written",
    "[graph][order]") {
  SECTION("written twice") {
    Hand h;
    int x = h.in("x", {4}), y = h.act("y", {4});
    h.op("a", OpKind::unary, {x}, {y});
    h.op("b", OpKind::unary, {x}, {y});
    CHECK(finalize_error(h, "tensor y") ==
          "is written by both op 'a' and op 'b'; each tensor is written once");
  }
  SECTION("a parameter as an output") {
    Hand h;
    int x = h.in("x", {4}), w = h.param("w", {4});
    h.op("a", OpKind::unary, {x}, {w});
    CHECK(finalize_error(h, "op a") ==
          "output 0 'w': is a parameter tensor; only activations are written by ops");
  }
  SECTION("an activation read but never produced") {
    Hand h;
    int x = h.act("x", {4}), y = h.act("y", {4});
    h.op("a", OpKind::unary, {x}, {y});
    CHECK(finalize_error(h, "op a") ==
          "input 0 'x': is an activation that no op produces (data fed to the model must have role "
          "input)");
  }
  SECTION("an activation nobody writes or reads") {
    Hand h;
    int x = h.in("x", {4}), y = h.act("y", {4});
    h.act("orphan", {3});
    h.op("a", OpKind::unary, {x}, {y});
    CHECK(finalize_error(h, "tensor orphan") == "is an activation that no op produces");
  }
  SECTION("a wrong number of inputs") {
    Hand h;
    int x = h.in("x", {4}), y = h.act("y", {4});
    h.op("mm", OpKind::matmul, {x}, {y});
    CHECK(finalize_error(h, "op mm") == "has 1 inputs but a matmul op takes 2");
  }
  SECTION("duplicate tensor names and zero dimensions") {
    Hand h;
    h.in("x", {4});
    h.in("x", {4});
    CHECK(finalize_error(h, "tensor x") == "name is used by more than one tensor");
    Hand z;
    z.in("x", {4, 0});
    CHECK(finalize_error(z, "tensor x") == "dimension 1 of [4, 0] is 0; dimensions must be >= 1");
  }
}

TEST_CASE("matmul FLOPs are 2·batch·m·k·n forward and one such product per needed gradient",
          "[graph][flops]") {
  Hand h;
  int x = h.in("x", {2, 3, 4}), w = h.param("w", {4, 5}), y = h.act("y", {2, 3, 5});
  int w2 = h.param("w2", {5, 6}), z = h.act("z", {2, 3, 6});
  h.op("fc1", OpKind::matmul, {x, w}, {y});   // x is data: no dx
  h.op("fc2", OpKind::matmul, {y, w2}, {z});  // both gradients
  h.g.finalize();
  CHECK(h.work("fc1").fwd_flops == 2 * 2 * 3 * 4 * 5);
  CHECK(h.work("fc1").bwd_flops == 2 * 2 * 3 * 4 * 5);
  CHECK(h.work("fc2").fwd_flops == 2 * 2 * 3 * 5 * 6);
  CHECK(h.work("fc2").bwd_flops == 2 * (2 * 2 * 3 * 5 * 6));
  // bytes: fp32 A + B + C forward
  CHECK(h.work("fc2").fwd_bytes == 4 * (30 + 30 + 36));
}

TEST_CASE("conv2d FLOPs are 2·N·K·C·R·S·H'·W' with H' from stride and pad", "[graph][flops]") {
  Hand h;
  int x = h.act("x0", {2, 3, 8, 8}), w = h.param("w", {4, 3, 3, 3}), y = h.act("y", {2, 4, 4, 4});
  int xin = h.in("img", {2, 3, 8, 8});
  h.op("copy", OpKind::unary, {xin}, {x}).attrs.unary = UnaryFn::relu;
  Op& op = h.op("conv", OpKind::conv2d, {x, w}, {y});
  op.attrs.stride = 2;
  op.attrs.pad = 1;  // H' = (8 + 2 - 3) / 2 + 1 = 4
  h.g.finalize();
  double fwd = 2.0 * 2 * 4 * 3 * 3 * 3 * 4 * 4;
  CHECK(h.work("conv").fwd_flops == fwd);
  CHECK(h.work("conv").bwd_flops == 2 * fwd);
  CHECK(h.work("copy").bwd_flops == 0);  // its input is data
}

TEST_CASE(
    "elementwise, normalization, softmax, pooling and loss ops count their documented FLOPs per "
    "element",
    "[graph][flops]") {
  GraphBuilder b("ops", "test", 4, DType::fp32);
  int x = b.input("x", {4, 16, 8, 8}, DType::fp32);
  int t = b.relu("t", b.conv("c", x, 16, 1, 1, 0, false));  // an activation that needs a gradient
  const double n = 4 * 16 * 8 * 8;
  b.gelu("gelu", t);
  b.softmax("softmax", t);
  b.bn("bn", t);
  b.pool("maxpool", t, PoolFn::max, 2, 2, 0);
  b.global_avg_pool("gap", t);
  int flat = b.reshape("flat", t, {4, 16 * 8 * 8});
  b.ln("ln", flat);
  b.transpose("tr", t, {0, 2, 3, 1});
  int labels = b.input("labels", {4}, DType::int64);
  b.cross_entropy("loss", flat, labels);
  Graph g = b.finish();
  auto w = [&](const char* name) { return g.ops[g.find_op(name)].work; };
  CHECK(w("t").fwd_flops == n);
  CHECK(w("gelu").fwd_flops == 8 * n);
  CHECK(w("gelu").bwd_flops == 12 * n);
  CHECK(w("softmax").fwd_flops == 5 * n);
  CHECK(w("softmax").bwd_flops == 4 * n);
  CHECK(w("bn").fwd_flops == 8 * n);
  CHECK(w("ln").fwd_flops == 8 * n);
  CHECK(w("maxpool").fwd_flops == 4 * (n / 4));  // 2x2 window per output element
  CHECK(w("gap").fwd_flops == n);
  CHECK(w("flat").fwd_flops == 0);
  CHECK(w("flat").fwd_bytes == 0);
  CHECK(w("tr").fwd_bytes == 2 * 4 * n);
  CHECK(w("loss").fwd_flops == 5 * n);
  CHECK(w("loss").bwd_flops == 2 * n);
}

TEST_CASE("an embedding is a gather with no forward FLOPs and a dense table gradient",
          "[graph][flops]") {
  GraphBuilder b("emb", "test", 2, DType::fp16);
  int ids = b.input("ids", {2, 5}, DType::int64);
  int table = b.parameter("table", {1000, 16});
  int y = b.embedding("lookup", table, ids);
  Graph g = b.finish();
  const OpWork& w = g.ops[0].work;
  CHECK(g.tensors[y].shape == Shape{2, 5, 16});
  CHECK(w.fwd_flops == 0);
  CHECK(w.fwd_bytes == 2 * (2 * 5 * 16 * 2) + 2 * 5 * 8);
  CHECK(w.bwd_flops == 2 * 5 * 16);
  CHECK(w.bwd_bytes == 2 * 5 * 16 * 2 + 2 * 5 * 8 + 1000 * 16 * 2);
}

TEST_CASE(
    "binary ops broadcast missing leading dims and pay a reduction for the broadcast gradient",
    "[graph][flops]") {
  GraphBuilder b("bin", "test", 2, DType::fp32);
  int x = b.relu("x", b.linear("fc", b.input("in", {2, 3, 4}, DType::fp32), 4, false));
  int p = b.parameter("pos", {3, 4});
  int y = b.add("add", x, p);
  int m = b.mul("mul", x, p);
  Graph g = b.finish();
  CHECK(g.tensors[y].shape == Shape{2, 3, 4});
  CHECK(g.ops[g.find_op("add")].work.fwd_flops == 24);
  CHECK(g.ops[g.find_op("add")].work.bwd_flops == 24);       // dx free, dpos reduced over batch
  CHECK(g.ops[g.find_op("mul")].work.bwd_flops == 24 + 48);  // dx = dy·p; dpos = Σ dy·x
  CHECK(g.tensors[m].shape == Shape{2, 3, 4});
}

TEST_CASE("the graph builder prefixes names inside a block and labels its ops",
          "[graph][builder]") {
  GraphBuilder b("m", "test", 2, DType::fp32);
  int x = b.input("x", {2, 8}, DType::fp32);
  b.begin_block("layer.0");
  int y = b.linear("fc", x, 4);
  b.end_block();
  b.relu("out", y);
  Graph g = b.finish();
  CHECK(g.find_tensor("layer.0.fc.weight") >= 0);
  CHECK(g.find_tensor("layer.0.fc.bias") >= 0);
  CHECK(g.ops[g.find_op("layer.0.fc")].block == "layer.0");
  CHECK(g.ops[g.find_op("layer.0.fc.add_bias")].block == "layer.0");
  CHECK(g.ops[g.find_op("out")].block.empty());
  CHECK(g.parameter_count() == 8 * 4 + 4);
}
