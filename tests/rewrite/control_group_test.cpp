#include <catch2/catch.hpp>

#include <array>
#include <random>

#include "rewrite/control_group.hpp"

using namespace gistproxy::rewrite;

TEST_CASE("control percent: a number in [0, 100] with at most two decimals, held in basis points") {
  CHECK(parse_control_percent("0") == 0u);
  CHECK(parse_control_percent("5") == 500u);
  CHECK(parse_control_percent("12.5") == 1250u);
  CHECK(parse_control_percent("0.01") == 1u);
  CHECK(parse_control_percent("100") == 10000u);
  CHECK(parse_control_percent("100.00") == 10000u);
  for (const char* bad : {"", "-1", "100.01", "101", "1e2", "5%", ".5", "5.", "1.234", "abc", "1000", " 5"})
    CHECK_FALSE(parse_control_percent(bad));
}

TEST_CASE("control group: a conversation's group depends on its trace id alone, and P% land in control") {
  std::mt19937_64 rng(42);
  auto random_id = [&] {
    std::array<std::uint8_t, 16> id{};
    for (auto& b : id) b = std::uint8_t(rng());
    return id;
  };
  const auto id = random_id();
  for (int turn = 0; turn < 10; ++turn) CHECK(group_of(id, 5000) == group_of(id, 5000));  // every turn
  int control = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) control += group_of(random_id(), 1000) == experiment_group::control;
  CHECK(control > n / 10 - 400);  // 10% ± 4.7 standard deviations
  CHECK(control < n / 10 + 400);
  CHECK(group_of(id, 0) == experiment_group::treated);
  CHECK(group_of(id, all_basis_points) == experiment_group::control);
  CHECK(group_of(std::span<const std::uint8_t>(), 5000) == experiment_group::treated);
  // Raising the share only moves conversations from treated to control.
  for (int i = 0; i < 1000; ++i) {
    auto other = random_id();
    if (group_of(other, 1000) == experiment_group::control) CHECK(group_of(other, 2000) == experiment_group::control);
  }
  CHECK(group_label(experiment_group::control) == "control");
  CHECK(group_label(experiment_group::treated) == "treated");
}
