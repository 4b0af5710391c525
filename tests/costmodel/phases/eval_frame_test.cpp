// Pins evaluate()'s frame (eval_frame.hpp): the pipeline dim comes off the mesh with its link,
// the SBP mesh keeps the rest and the calibration, micro-batch shapes divide batch-major
// tensors only, and every op gets its chunk's stage.
#include <catch2/catch.hpp>

#include "autoddl/costmodel/eval_frame.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "../input_error.hpp"

using namespace autoddl::costmodel;

TEST_CASE("the pipeline dim leaves the SBP mesh and gives the stage-boundary link", "[costmodel][phases]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const DeviceMesh mesh = make_mesh(c, {2, 8});
  const PipelineSplit pp = split_pipeline_dim(mesh, 0);
  REQUIRE(pp.sbp_mesh.ndims() == 1);
  CHECK(pp.sbp_mesh.dims[0].size == 8);
  CHECK(pp.tier.beta_s_per_byte == mesh.dims[0].tier.beta_s_per_byte);
  CHECK(pp.tier.alpha_s == mesh.dims[0].tier.alpha_s);
  CHECK(pp.sbp_mesh.calibration == mesh.calibration);

  const PipelineSplit none = split_pipeline_dim(mesh, -1);
  CHECK(none.sbp_mesh.shape() == std::vector<int>{2, 8});
  CHECK(none.tier.alpha_s == 0);
  CHECK(none.tier.beta_s_per_byte == 0);

  // A pure pipeline leaves one size-1 SBP dim to place signatures on.
  const PipelineSplit only = split_pipeline_dim(make_mesh(c, {2}), 0);
  CHECK(only.sbp_mesh.shape() == std::vector<int>{1});
}

TEST_CASE("a micro-batch divides batch-major tensors and its bytes with them, parameters stay whole", "[costmodel][phases]") {
  const Graph g = build_zoo_model("gpt", {{"layers", "1"}, {"hidden", "64"}, {"heads", "4"}, {"seq", "32"},
                                          {"vocab", "128"}, {"batch", "8"}});
  CHECK(training_dtype(g) == DType::fp16);
  for (const Tensor& t : g.tensors) {
    const Shape s = micro_batch_shape(t, 4);
    INFO(t.name);
    const bool divided = t.role != TensorRole::parameter && t.batched && !t.shape.empty() && t.shape[0] % 4 == 0;
    if (!divided) {
      CHECK(s == t.shape);
      CHECK(micro_batch_bytes(t, s) == static_cast<double>(t.bytes()));
    } else {
      CHECK(s[0] * 4 == t.shape[0]);
      CHECK(micro_batch_bytes(t, s) * 4 == static_cast<double>(t.bytes()));
    }
  }
}

TEST_CASE("the frame puts each op on its chunk's stage and refuses a scheme of another size",
          "[costmodel][phases]") {
  const ClusterSpec c = resolve_cluster("dgx-a100", 2);
  const Graph g = build_zoo_model("gpt", {{"layers", "4"}, {"hidden", "256"}, {"heads", "8"}, {"seq", "128"},
                                          {"vocab", "1024"}, {"batch", "16"}});
  const Scheme s = make_scheme("megatron:tp=4,pp=2,dp=2,mb=4", g, c, {});
  const EvalFrame f = make_eval_frame(g, c, s);
  CHECK(f.stages == 2);
  CHECK(f.micro_batches == s.micro_batches);
  CHECK(f.sbp_shape == s.sbp_shape());
  REQUIRE(f.op_stage.size() == g.ops.size());
  CHECK(f.op_stage.front() == 0);
  CHECK(f.op_stage.back() == 1);
  for (size_t i = 0; i < g.ops.size(); ++i) CHECK(f.op_stage[i] == s.op_chunk[i] % 2);

  Scheme short_one = s;
  short_one.op_sigs.pop_back();
  const auto e = input_error_of([&] { make_eval_frame(g, c, short_one); });
  REQUIRE(e);
  CHECK(e->file() == "scheme");
  CHECK(e->field() == "op_sigs");
}
