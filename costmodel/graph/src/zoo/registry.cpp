// The one table of zoo models (zoo.hpp). Adding a model = one file zoo/<name>.cpp defining
// <name>_model() plus one row here; the CLI's `models` command and the generic zoo tests walk
// this table.
#include "models.hpp"

namespace autoddl::costmodel {

const std::vector<ZooModel>& zoo_models() {
  using namespace zoo;
  static const std::vector<ZooModel> table = [] {
    std::vector<ZooModel> t = {
        mlp_model(),       vgg16_model(),       resnet50_model(),     bert_model(),
        gpt_model(),       ncf_model(),         resnet101_model(),    densenet121_model(),
        inception_v3_model(), llama_model(),
    };
    for (ZooModel& m : moe_models()) t.push_back(std::move(m));
    return t;
  }();
  return table;
}

const ZooModel* find_zoo_model(std::string_view name) {
  for (const ZooModel& m : zoo_models()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

}  // namespace autoddl::costmodel
