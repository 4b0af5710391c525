// The Megatron-LM grid tries today's options as coordinates (issue 10 item 4): the distributed
// optimizer, tensor-parallel overlap with sp, and the interleaved schedule with overlapped p2p.
// Where they help, the `megatron` baseline's best point carries them, and it is faster than the
// same layout without them; cd-expert's descent starts from those points.
#include <catch2/catch.hpp>

#include <string>

#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/search/searcher.hpp"
#include "fixtures.hpp"

using namespace search_fixtures;

namespace {

std::string without(std::string spec, const std::string& option) {
  for (size_t at; (at = spec.find(option)) != std::string::npos;) spec.erase(at, option.size());
  return spec;
}

}  // namespace

TEST_CASE("the Megatron grid picks tp overlap, the distributed optimizer and overlapped p2p where they help",
          "[search][megatron][overlap]") {
  // GPT on 4 DGX H100 nodes: sequence-parallel collectives, pipeline sends and the distributed
  // optimizer's parameter all-gather are worth hiding.
  const ClusterSpec c = resolve_cluster("dgx-h100", 4);
  const Graph g = build_zoo_model("gpt", {{"layers", "16"}, {"hidden", "4096"}, {"heads", "32"}, {"seq", "2048"},
                                          {"batch", "64"}, {"flash", "1"}});
  SearchOptions o;
  o.time_limit_s = 120;
  const SearchRun run = run_search(g, c, o, {"megatron", "cd-expert"});
  const SearchResult& mega = result_of(run, "megatron");
  REQUIRE(mega.report.feasible);
  const std::string& spec = mega.scheme.name;
  INFO("best grid point " << spec << ": " << mega.report.iteration_s << " s");
  // The distributed optimizer overlaps its parameter all-gather with the next forward
  // (param_overlap, on with dist_opt=1): with it the grid's best here is data parallel.
  const bool tp_ov = mega.scheme.overlap_tp_comm, pp_ov = mega.scheme.overlap_p2p_comm;
  const bool param_ov = mega.scheme.overlap_param_gather;
  CHECK((tp_ov || pp_ov || param_ov));
  // The same layout with the overlaps off is slower: the grid kept them because they pay.
  std::string plain = without(without(spec, ",tp_overlap=1"), ",pp_overlap=1");
  if (param_ov) plain += ",param_overlap=0";
  REQUIRE(plain != spec);
  const CostReport r_plain = evaluate(g, c, make_scheme(plain, g, c, {}));
  INFO(plain << ": " << r_plain.iteration_s << " s");
  CHECK(r_plain.iteration_s > mega.report.iteration_s);
  // cd-expert starts from the grid's best points with their options and re-costs to its time.
  const SearchResult& ce = result_of(run, "cd-expert");
  CHECK(ce.report.iteration_s <= mega.report.iteration_s);
  CHECK(evaluate(g, c, ce.scheme).iteration_s == ce.report.iteration_s);
}
