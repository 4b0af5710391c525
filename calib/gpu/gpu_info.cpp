// gpu_info: is there a usable GPU, and which? `autoddl calibrate` runs it first. Prints one
// summary line (or the reason there is no GPU, and exits 3) and, with --json FILE, the
// devices' properties. Links only the CUDA runtime, so it runs wherever the driver does.
#include <cstdio>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "harness.hpp"

using namespace autoddl::calib::gpu;

int main(int argc, char** argv) {
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: gpu_info [--json FILE]\n");
      return 2;
    }
  }
  std::string why = no_gpu_reason();
  if (!why.empty()) {
    std::printf("%s\n", why.c_str());
    return 3;
  }
  try {
    int n = 0, runtime = 0, driver = 0;
    CALIB_CHECK(cudaGetDeviceCount(&n));
    CALIB_CHECK(cudaRuntimeGetVersion(&runtime));
    CALIB_CHECK(cudaDriverGetVersion(&driver));
    nlohmann::json devices = nlohmann::json::array();
    std::string summary = std::to_string(n) + " GPU" + (n > 1 ? "s" : "") + ":";
    for (int d = 0; d < n; ++d) {
      cudaDeviceProp p{};
      CALIB_CHECK(cudaGetDeviceProperties(&p, d));
      int clock_khz = 0, mem_clock_khz = 0;
      cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, d);
      cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, d);
      devices.push_back({{"index", d},
                         {"name", p.name},
                         {"compute_capability", std::to_string(p.major) + "." + std::to_string(p.minor)},
                         {"sms", p.multiProcessorCount},
                         {"memory_bytes", static_cast<double>(p.totalGlobalMem)},
                         {"sm_clock_khz", clock_khz},
                         {"memory_clock_khz", mem_clock_khz},
                         {"memory_bus_bits", p.memoryBusWidth},
                         {"l2_bytes", p.l2CacheSize},
                         {"pci", {p.pciDomainID, p.pciBusID, p.pciDeviceID}}});
      char buf[160];
      std::snprintf(buf, sizeof buf, " %d: %s (sm_%d%d, %d SMs, %.1f GiB)", d, p.name, p.major,
                    p.minor, p.multiProcessorCount, p.totalGlobalMem / double(1ull << 30));
      summary += buf;
    }
    std::printf("%s\n", summary.c_str());
    if (!json_path.empty()) {
      nlohmann::json doc = {{"cuda_runtime", runtime}, {"cuda_driver", driver}, {"devices", devices}};
      std::ofstream(json_path) << doc.dump(1) << "\n";
    }
  } catch (const CalibError& e) {
    std::printf("%s\n", e.what());
    return 3;
  }
  return 0;
}
