// CUPTI activity buffers -> ActivityRecord (see cupti_activity.hpp). The record structs are the
// ones of the CUPTI this is built against (cupti_records.hpp: CUDA 12.0 .. 13.2), and a libcupti
// loaded at run time with other layouts is refused in init(), not misread.
#include "cupti_activity.hpp"

#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "cupti_records.hpp"

namespace autoddl::calib::gpu {

namespace {

constexpr size_t kBufferBytes = 8 << 20;
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};
// External correlation records precede the API records they tag, so those are enabled too.
constexpr CUpti_ActivityKind kExternalKinds[] = {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                                 CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER};

std::mutex g_mu;
std::vector<ActivityRecord> g_pending;
std::vector<ActivityRecord> g_all;
bool g_keep_all = false;
bool g_external = false;
bool g_inited = false;
bool g_is_injection = false;
std::string g_error;
std::atomic<uint64_t> g_dropped{0};

std::string result_text(CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return s ? s : "unknown CUPTI error";
}

const char* copy_kind(uint8_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "memcpy PtoP";
    default: return "memcpy";
  }
}

// The fields every timed record kind (kernel, memcpy, memset) carries under the same names.
template <typename Record>
void copy_timing(const Record* x, ActivityRecord& r) {
  r.start_ns = x->start;
  r.end_ns = x->end;
  r.device = x->deviceId;
  r.stream = x->streamId;
  r.correlation = x->correlationId;
}

bool convert(const CUpti_Activity* a, ActivityRecord& r) {
  switch (a->kind) {
#ifndef AUTODDL_CUPTI_RECORDS_UNKNOWN  // else init() refuses CUPTI and no buffer arrives
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      auto* k = reinterpret_cast<const KernelRecord*>(a);
      r.kind = "kernel";
      r.name = k->name ? k->name : "?";
      copy_timing(k, r);
      r.grid[0] = k->gridX, r.grid[1] = k->gridY, r.grid[2] = k->gridZ;
      r.block[0] = k->blockX, r.block[1] = k->blockY, r.block[2] = k->blockZ;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto* m = reinterpret_cast<const MemcpyRecord*>(a);
      r.kind = "memcpy";
      r.name = copy_kind(m->copyKind);
      copy_timing(m, r);
      r.bytes = m->bytes;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      auto* m = reinterpret_cast<const MemsetRecord*>(a);
      r.kind = "memset";
      r.name = "memset";
      copy_timing(m, r);
      r.bytes = m->bytes;
      return true;
    }
#endif
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(a);
      if (e->externalKind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) return false;
      r.kind = "external";
      r.name = "external";
      r.correlation = e->correlationId;
      r.external_id = e->externalId;
      return true;
    }
    default:
      return false;  // API records (enabled for external correlation) are not kept
  }
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t,
                               size_t valid) {
  std::vector<ActivityRecord> got;
  CUpti_Activity* a = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &a) == CUPTI_SUCCESS) {
    ActivityRecord r;
    if (!convert(a, r)) continue;
    if (r.kind == "external" || (r.end_ns >= r.start_ns && r.start_ns != 0)) got.push_back(std::move(r));
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS) g_dropped += dropped;
  std::free(buffer);
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_keep_all) g_all.insert(g_all.end(), got.begin(), got.end());
  g_pending.insert(g_pending.end(), std::make_move_iterator(got.begin()),
                   std::make_move_iterator(got.end()));
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

ActivityRecorder& ActivityRecorder::instance() {
  static ActivityRecorder r;
  return r;
}

const std::string& ActivityRecorder::init() {
  if (!g_inited) {
    g_inited = true;
    g_error = cupti_owned_elsewhere(std::getenv("CUDA_INJECTION64_PATH"), g_is_injection);
    if (!g_error.empty()) return g_error;  // never touch the owner's callbacks or kinds
    uint32_t loaded = 0;
    CUptiResult v = cuptiGetVersion(&loaded);
    if (v != CUPTI_SUCCESS) {
      g_error = "cuptiGetVersion: " + result_text(v);
      return g_error;
    }
    g_error = cupti_records_unreadable(CUPTI_API_VERSION, loaded);
    if (!g_error.empty()) return g_error;
    CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (r != CUPTI_SUCCESS) g_error = "cuptiActivityRegisterCallbacks: " + result_text(r);
  }
  return g_error;
}

bool ActivityRecorder::start() {
  if (!init().empty()) return false;
  // A whole-run trace (keep_all, cupti_tracer) keeps CUPTI on between passes, so records of
  // everything since the last stop (warm-up, timed iterations, buffer fills and checks) are
  // pending: drop them here, or stop() would divide them by this pass's iterations (kernel_us
  // came out ~6x too large; issue 16, defect 2). They stay in all() for the trace.
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_pending.clear();
  }
  for (CUpti_ActivityKind k : kKinds) {
    CUptiResult r = cuptiActivityEnable(k);
    if (r != CUPTI_SUCCESS) {
      g_error = "cuptiActivityEnable: " + result_text(r);
      return false;
    }
  }
  for (CUpti_ActivityKind k : kExternalKinds) {
    if (!g_external) break;
    CUptiResult r = cuptiActivityEnable(k);
    if (r != CUPTI_SUCCESS) {
      g_error = "cuptiActivityEnable (external correlation): " + result_text(r);
      return false;
    }
  }
  return true;
}

std::vector<ActivityRecord> ActivityRecorder::stop() {
  if (!g_inited || !g_error.empty()) return {};  // never started, or CUPTI is another client's
  bool keep_tracing;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    keep_tracing = g_keep_all;  // a whole-run trace stays on
  }
  if (!keep_tracing) {
    for (CUpti_ActivityKind k : kKinds) cuptiActivityDisable(k);
    if (g_external) {
      for (CUpti_ActivityKind k : kExternalKinds) cuptiActivityDisable(k);
    }
  }
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<ActivityRecord> out;
  out.swap(g_pending);
  return out;
}

void ActivityRecorder::keep_all(bool on) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_keep_all = on;
}

std::vector<ActivityRecord> ActivityRecorder::all() {
  if (!g_inited || !g_error.empty()) return {};
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> lock(g_mu);
  return g_all;
}

void ActivityRecorder::correlate_external(bool on) { g_external = on; }

void ActivityRecorder::as_injection() { g_is_injection = true; }

uint64_t ActivityRecorder::dropped() const { return g_dropped; }

bool push_external_id(uint64_t id) {
  return cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id) == CUPTI_SUCCESS;
}

void pop_external_id() {
  uint64_t last = 0;
  cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

double busy_us_per_iter(const std::vector<ActivityRecord>& recs, int iterations) {
  if (recs.empty() || iterations <= 0) return -1;
  std::map<uint32_t, double> per_device_ns;
  for (const ActivityRecord& r : recs) {
    if (r.kind != "external") per_device_ns[r.device] += double(r.end_ns - r.start_ns);
  }
  double busiest = 0;
  for (auto& [dev, ns] : per_device_ns) busiest = std::max(busiest, ns);
  return busiest / 1e3 / iterations;
}

void write_chrome_trace(const std::vector<ActivityRecord>& all_recs, const std::string& path) {
  std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cannot write trace %s\n", path.c_str());
    return;
  }
  std::vector<ActivityRecord> timed;
  for (const ActivityRecord& r : all_recs) {
    if (r.kind != "external") timed.push_back(r);
  }
  const std::vector<ActivityRecord>& recs = timed;
  uint64_t t0 = UINT64_MAX;
  for (const ActivityRecord& r : recs) t0 = std::min(t0, r.start_ns);
  std::fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
  bool first = true;
  std::map<uint32_t, std::map<uint32_t, bool>> seen;  // device -> streams
  for (const ActivityRecord& r : recs) seen[r.device][r.stream] = true;
  for (auto& [dev, streams] : seen) {
    std::fprintf(f, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"tid\":0,"
                 "\"args\":{\"name\":\"GPU %u\"}}", first ? "" : ",\n", dev, dev);
    first = false;
    for (auto& [stream, unused] : streams) {
      std::fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,"
                   "\"args\":{\"name\":\"stream %u\"}}", dev, stream, stream);
    }
  }
  for (const ActivityRecord& r : recs) {
    std::fprintf(f, "%s{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,"
                 "\"pid\":%u,\"tid\":%u,\"args\":{\"correlation\":%u",
                 first ? "" : ",\n", json_escape(r.name).c_str(), r.kind.c_str(),
                 (r.start_ns - t0) / 1e3, (r.end_ns - r.start_ns) / 1e3, r.device, r.stream,
                 r.correlation);
    first = false;
    if (r.kind == "kernel") {
      std::fprintf(f, ",\"grid\":[%d,%d,%d],\"block\":[%d,%d,%d]", r.grid[0], r.grid[1],
                   r.grid[2], r.block[0], r.block[1], r.block[2]);
    } else {
      std::fprintf(f, ",\"bytes\":%llu", static_cast<unsigned long long>(r.bytes));
    }
    std::fprintf(f, "}}");
  }
  std::fprintf(f, "\n]}\n");
  bool ok = std::fclose(f) == 0;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::fprintf(stderr, "cannot write trace %s\n", path.c_str());
    std::remove(tmp.c_str());
  }
}

}  // namespace autoddl::calib::gpu
