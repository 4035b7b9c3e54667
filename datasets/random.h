#pragma once
// Random draws that give the same numbers with every standard library (std::uniform_int_distribution and
// std::shuffle do not), so augmentation and epoch order are reproducible across builds, and resume is bit-exact.
#include <cstdint>
#include <initializer_list>
#include <random>
#include <vector>

namespace attnzoo {

// Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; the bias is below 2^-50 for any n used here).
inline uint64_t uniform_below(std::mt19937_64& rng, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(rng()) * n) >> 64);
}

// Uniform double in [0, 1) from the top 53 bits.
inline double uniform_unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// Fisher-Yates shuffle with uniform_below.
template <class T>
void shuffle_in_place(std::vector<T>& items, std::mt19937_64& rng) {
  for (size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[uniform_below(rng, i)]);
}

// Folds several numbers (seed, epoch, index, ...) into one well-mixed seed (splitmix64 finaliser), so nearby
// inputs give unrelated generators.
inline uint64_t mix_seed(std::initializer_list<uint64_t> parts) {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (uint64_t part : parts) {
    uint64_t z = state ^ (part + 0x9e3779b97f4a7c15ull + (state << 6) + (state >> 2));
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    state = z ^ (z >> 31);
  }
  return state;
}

}  // namespace attnzoo
