// Korthikanti et al. 2022's memory figures (experiments/published/memory/korthikanti2022_fig1_fig7.json)
// from the cost model's memory report, for the paper's own configurations (its Table 3 layouts
// on DGX A100): Figure 1's parameters+optimizer and activation GiB per GPU (tensor-parallel
// baseline and sp + selective recompute) and Figure 7's activations per mode as a percentage
// of that baseline, each within 10%, except one known difference (not_compared):
// - Figure 7's full recompute is the 2·s·b·h per layer of the paper's Table 2; the cost model also
//   holds the one layer being recomputed (its full activations while backward re-runs it), which
//   Figure 7 leaves out: +20% (175B) to +73% (1T) of a small number.
// 1T with sp + selective recompute (160 heads of 160) was 19% below Figure 1 while selective
// recompute found the attention core by shape: the (batch, seq, heads, head_dim) views of Q, K, V
// and the attention output looked like score matrices and were dropped (issue 28, item 1).
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <string>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/eval_frame.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/costmodel/stage_memory.hpp"
#include "autoddl/costmodel/zoo.hpp"

using namespace autoddl::costmodel;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

bool not_compared(const std::string& model, const std::string& quantity) {
  return quantity == "full";
}

nlohmann::json figures() {
  std::ifstream f(AUTODDL_SOURCE_DIR "/experiments/published/memory/korthikanti2022_fig1_fig7.json");
  REQUIRE(f.good());
  return nlohmann::json::parse(f);
}

struct ModelReports {
  std::string name;
  nlohmann::json published;
  std::map<std::string, CostReport> by_mode;
};

std::vector<ModelReports> reports() {
  const nlohmann::json doc = figures();
  std::vector<ModelReports> out;
  for (const auto& m : doc["models"]) {
    ModelReports mr{m["name"].get<std::string>(), m, {}};
    const ClusterSpec c = resolve_cluster(doc["cluster"].get<std::string>(), m["nodes"].get<int>());
    const Graph g = build_zoo_model("gpt", parse_knob_list(m["knobs"].get<std::string>()));
    for (const auto& [mode, options] : doc["modes"].items()) {
      const std::string spec = m["layout"].get<std::string>() + "," + options.get<std::string>();
      mr.by_mode[mode] = evaluate(g, c, make_scheme(spec, g, c, {}));
    }
    out.push_back(std::move(mr));
  }
  return out;
}

}  // namespace

TEST_CASE("Korthikanti et al. 2022 Figures 1 and 7: memory per GPU of the 22B-1T models within 10%",
          "[costmodel][memory][published]") {
  const std::vector<ModelReports> all = reports();
  REQUIRE(all.size() == 4);
  for (const ModelReports& m : all) {
    const nlohmann::json& fig1 = m.published["figure1_gib"];
    const CostReport& none = m.by_mode.at("none");
    const CostReport& seqsel = m.by_mode.at("seqsel");
    INFO(m.name << ": parameters+optimizer " << none.param_memory_bytes / kGiB << " GiB, activations "
                << none.activation_memory_bytes / kGiB << " / " << seqsel.activation_memory_bytes / kGiB << " GiB");
    CHECK(none.param_memory_bytes / kGiB == Approx(fig1["params_optimizer"].get<double>()).epsilon(0.10));
    CHECK(none.activation_memory_bytes / kGiB == Approx(fig1["activations_none"].get<double>()).epsilon(0.10));
    if (!not_compared(m.name, "seqsel")) {
      CHECK(seqsel.activation_memory_bytes / kGiB == Approx(fig1["activations_seqsel"].get<double>()).epsilon(0.10));
    }
    for (const auto& [mode, percent] : m.published["figure7_percent"].items()) {
      if (not_compared(m.name, mode)) continue;
      const double ours = 100.0 * m.by_mode.at(mode).activation_memory_bytes / none.activation_memory_bytes;
      INFO(m.name << " " << mode << ": " << ours << "% of the baseline, published " << percent.get<double>() << "%");
      CHECK(ours == Approx(percent.get<double>()).epsilon(0.10));
    }
  }
}

TEST_CASE("Korthikanti et al. 2022 Figure 1: parameters+optimizer of a stage's layers within 5%",
          "[costmodel][memory][published]") {
  // Figure 1's bars are 18 bytes per parameter (fp16 weights, fp32 main gradients, fp32 master
  // weights and Adam moments) of the layers a GPU holds: 530B's first stage holds 3 layers, 31.64
  // GiB, without the 131 M embedding parameters its real first stage also holds. A pipeline's
  // middle stage holds layers only; the 22B model (one stage) holds its embedding too (+1.6%).
  const nlohmann::json doc = figures();
  for (const auto& m : doc["models"]) {
    const std::string name = m["name"].get<std::string>();
    const ClusterSpec c = resolve_cluster(doc["cluster"].get<std::string>(), m["nodes"].get<int>());
    const Graph g = build_zoo_model("gpt", parse_knob_list(m["knobs"].get<std::string>()));
    const Scheme s = make_scheme(m["layout"].get<std::string>(), g, c, {});
    const MemoryPhase mem = stage_memory(g, s, make_eval_frame(g, c, s));
    const double ours = mem.stage_param_bytes[mem.stage_param_bytes.size() / 2] / kGiB;
    INFO(name << ": " << ours << " GiB");
    CHECK(ours == Approx(m["figure1_gib"]["params_optimizer"].get<double>()).epsilon(0.05));
  }
}
