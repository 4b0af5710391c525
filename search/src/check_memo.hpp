// The descent's joint, window and region checks that came back empty, by local configuration (private to
// search/src): a key is the sequence of op kinds, term kinds and choices a check reads
// (Descent::check_key). Cleared in O(1) by a generation counter; keys live in one arena; after
// warm-up, finding and inserting allocate nothing (the table and arena only grow).
#pragma once
#include <cstdint>
#include <vector>

namespace autoddl::search {

class CheckMemo {
 public:
  static uint64_t hash(const int64_t* key, int n) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(n);
    for (int i = 0; i < n; ++i) {
      h ^= static_cast<uint64_t>(key[i]) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
      h *= 0xff51afd7ed558ccdull;
    }
    return h ^ (h >> 29);
  }

  size_t size() const { return count_; }

  void clear() {
    ++gen_;
    count_ = 0;
    arena_.clear();
  }

  bool contains(const int64_t* key, int n, uint64_t h) const {
    if (slots_.empty()) return false;
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.gen != gen_) return false;
      if (s.hash == h && s.len == n && equal(&arena_[s.offset], key, n)) return true;
    }
  }

  void insert(const int64_t* key, int n, uint64_t h) {
    if (2 * (count_ + 1) > slots_.size()) grow();
    const size_t offset = arena_.size();
    arena_.insert(arena_.end(), key, key + n);
    place(Slot{h, offset, n, gen_});
    ++count_;
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    size_t offset = 0;
    int len = 0;
    uint64_t gen = 0;  // a slot of another generation is empty
  };
  static bool equal(const int64_t* a, const int64_t* b, int n) {
    for (int i = 0; i < n; ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  }
  void place(const Slot& s) {
    const size_t mask = slots_.size() - 1;
    size_t i = s.hash & mask;
    while (slots_[i].gen == gen_) i = (i + 1) & mask;
    slots_[i] = s;
  }
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.empty() ? 1024 : 2 * old.size(), Slot{});
    for (const Slot& s : old) {
      if (s.gen == gen_) place(s);
    }
  }

  std::vector<Slot> slots_;
  std::vector<int64_t> arena_;
  size_t count_ = 0;
  uint64_t gen_ = 1;  // slots start at generation 0: empty
};

}  // namespace autoddl::search
