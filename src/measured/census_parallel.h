// src/measured/census_parallel.h — runs a job per trace file on a few threads (the census's rank files), the
// error of the first file in order rethrown once all have stopped (the one a single thread meets). Internal
// header of src/measured.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace flopwise::census {

// fn(i) for i in [0, n), on `jobs` threads (0: the cores, at most 8): each thread takes the next index, so at
// most `jobs` files are in memory at once.
template <class Fn>
void for_each_file(size_t n, int jobs, Fn fn) {
  size_t threads =
      jobs > 0 ? static_cast<size_t>(jobs) : std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
  threads = std::max<size_t>(1, std::min(threads, n));
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  size_t error_at = n;  // files are taken in order, so every file before a failed one is read to its end
  std::mutex mu;
  auto work = [&] {
    for (size_t i; !failed && (i = next++) < n;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (i < error_at) error = std::current_exception(), error_at = i;
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace flopwise::census
