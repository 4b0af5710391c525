// keep_framework_options: what a search started from a scheme (cd-expert, the stage rebalance)
// keeps of it, so that its answer is judged with the framework options it was given.
#include <catch2/catch.hpp>

#include "autoddl/costmodel/scheme.hpp"
#include "autoddl/search/scheme_map.hpp"

using namespace autoddl::costmodel;
using autoddl::search::keep_framework_options;

TEST_CASE("a searched scheme keeps the framework options of the scheme it started from", "[search][scheme_map]") {
  Scheme from;
  from.scatter_gather_sends = true;
  from.schedule = PipelineSchedule::gpipe;
  from.bucket_bytes = 123456789;
  from.overlap_tp_comm = true;
  from.overlap_p2p_comm = true;
  from.overlap_param_gather = true;
  from.grad_reduce_16bit = true;
  Scheme to;  // as to_scheme() builds it: defaults for everything the tables do not choose
  to.shard_optimizer = true;
  keep_framework_options(from, to);
  CHECK(to.scatter_gather_sends);
  CHECK(to.schedule == PipelineSchedule::gpipe);
  CHECK(to.bucket_bytes == 123456789);
  CHECK(to.overlap_tp_comm);
  CHECK(to.overlap_p2p_comm);
  CHECK(to.overlap_param_gather);
  CHECK(to.grad_reduce_16bit);
  // No sharded optimizer in the searched scheme: no shard all-gather to overlap.
  Scheme unsharded;
  keep_framework_options(from, unsharded);
  CHECK_FALSE(unsharded.overlap_param_gather);
  CHECK(unsharded.grad_reduce_16bit);
}
