#pragma once
// Edit distance for "did you mean" suggestions on misspelt config keys and choices.
#include <string>
#include <vector>

namespace attnzoo {

size_t edit_distance(const std::string& a, const std::string& b);
// The candidate closest to `word`, or "" when none is close enough to be a likely typo.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace attnzoo
