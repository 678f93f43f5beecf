// src/cli/heap.cc — the CLI's heap (commands.h): huge pages for an analysis, none for a trace; fresh heap
// memory faulted in on a second thread.
//
// A short analysis spends a quarter to a third of its time in the kernel's page faults: nearly every page
// it touches is fresh (its peak is what it touches), and on a VM each first touch of a 4 KiB page costs
// microseconds (Llama-3-70B's program: ~15,000 faults, ~20 ms of ~70). Two remedies, both only where jemalloc
// is linked:
// - Huge pages. `malloc_conf` below makes jemalloc advise transparent huge pages (MADV_HUGEPAGE) for every
//   chunk it maps, so that one fault maps 2 MiB. Where the kernel's THP mode is `never` this does nothing;
//   `MALLOC_CONF=thp:default` (read after this) turns it off. An analysis keeps them for its first
//   kHugeBytes of fresh heap; past that (a million-node model) the process turns them off
//   (PR_SET_THP_DISABLE): a 1 M-node decoder ran 1.2-1.3x slower with huge pages throughout, and the cost
//   grows with the bound (1.03x at 0, 1.06x at 32 MiB, 1.10x at 128; bench/README.md), where the Llama-3-70B
//   program gains as much at 32 MiB as at 128. Commands that stream (a trace) turn them off at once
//   (heap_without_huge_pages): a huge page half used by a streamed buffer is resident whole, which cost the
//   1 GB trace 29 MiB of peak.
// - Prefault. The hook here wraps jemalloc's own extent `alloc` and hands each chunk to a helper thread,
//   which faults it in with madvise(MADV_POPULATE_WRITE) (Linux 5.14+), in address order, the order
//   jemalloc carves it in. The main thread then finds its pages present. The helper writes no memory (the
//   kernel maps zeroed pages, as a first write would), so it never races with the main thread's writes; a
//   page the main thread touched first is left as it is. At most kMaxBytes are populated in all: a model
//   larger than that takes the rest of its faults itself, and resident memory grows by at most the unused
//   tail of the newest chunk.
#include "commands.h"

#if FLOPWISE_HEAP_PREFAULT

#include <jemalloc/jemalloc.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>

// jemalloc reads its options from this symbol at its start, before main (then /etc/malloc.conf and
// $MALLOC_CONF, which override it).
extern "C" {
const char* malloc_conf = "thp:always";
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; an older kernel answers EINVAL and the helper stops
#endif

namespace flopwise {

namespace {

constexpr size_t kMaxBytes = size_t{64} << 20;   // populated at most, over the process's life
constexpr size_t kStep = size_t{256} << 10;      // bytes per madvise call
constexpr size_t kQueue = 64;                    // chunks waiting; more are dropped (never blocks)
constexpr size_t kHugeBytes = size_t{64} << 20;  // fresh heap in huge pages, at most

struct Chunk {
  char* addr = nullptr;
  size_t size = 0;
};

// Leaked on purpose: the helper may still be populating while the process exits.
struct State {
  std::mutex m;
  std::condition_variable cv;
  Chunk queue[kQueue];
  size_t head = 0, tail = 0;  // waiting: queue[head % kQueue .. tail % kQueue), under m
  size_t budget = kMaxBytes;  // bytes not yet handed out, under m
  extent_hooks_t* jemalloc_hooks = nullptr;
  extent_hooks_t hooks{};
  std::atomic<size_t> mapped{0};  // bytes jemalloc's hook has mapped, for kHugeBytes
};
State* state = nullptr;

// Runs inside jemalloc with its locks held: no allocation, no blocking (try_lock; a busy queue drops the
// chunk, which is then faulted in by its first use as without the helper).
void* alloc_hook(extent_hooks_t*, void* new_addr, size_t size, size_t alignment, bool* zero, bool* commit,
                 unsigned arena) {
  void* p =
      state->jemalloc_hooks->alloc(state->jemalloc_hooks, new_addr, size, alignment, zero, commit, arena);
  if (!p) return p;
  const size_t before = state->mapped.fetch_add(size);
  if (before <= kHugeBytes && before + size > kHugeBytes) heap_without_huge_pages();  // once
  if (!*commit) return p;
  if (state->m.try_lock()) {
    const size_t n = size < state->budget ? size : state->budget;
    const bool queued = n > 0 && state->tail - state->head < kQueue;
    if (queued) {
      state->queue[state->tail++ % kQueue] = Chunk{static_cast<char*>(p), n};
      state->budget -= n;
    }
    state->m.unlock();
    if (queued) state->cv.notify_one();
  }
  return p;
}

void helper() {
  for (;;) {
    Chunk c;
    {
      std::unique_lock<std::mutex> lock(state->m);
      state->cv.wait(lock, [] { return state->head != state->tail; });
      c = state->queue[state->head++ % kQueue];
    }
    for (size_t off = 0; off < c.size; off += kStep) {
      const size_t len = c.size - off < kStep ? c.size - off : kStep;
      if (madvise(c.addr + off, len, MADV_POPULATE_WRITE) != 0) {
        if (errno == EINVAL) return;  // no MADV_POPULATE_WRITE: the main thread faults as it always did
        break;                        // the chunk is gone or out of memory: leave it
      }
    }
  }
}

}  // namespace

void heap_without_huge_pages() { prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0); }

void start_heap_prefault() {
  if (state) return;
  if (const char* e = std::getenv("FLOPWISE_PREFAULT"); e && std::strcmp(e, "0") == 0) return;
  unsigned arena = 0;
  size_t size = sizeof(arena);
  if (mallctl("thread.arena", &arena, &size, nullptr, 0) != 0) return;
  const std::string key = "arena." + std::to_string(arena) + ".extent_hooks";
  extent_hooks_t* current = nullptr;
  size = sizeof(current);
  if (mallctl(key.c_str(), &current, &size, nullptr, 0) != 0 || !current || !current->alloc) return;
  state = new State;
  state->jemalloc_hooks = current;
  state->hooks = *current;
  state->hooks.alloc = alloc_hook;
  try {
    std::thread(helper).detach();
  } catch (const std::system_error&) {  // no thread to be had (a process limit): analyse without it
    return;
  }
  extent_hooks_t* mine = &state->hooks;
  mallctl(key.c_str(), nullptr, nullptr, &mine, sizeof(mine));
}

}  // namespace flopwise

#else

namespace flopwise {
void heap_without_huge_pages() {}
void start_heap_prefault() {}
}  // namespace flopwise

#endif
