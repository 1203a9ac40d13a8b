// `gistproxy tokens [--tokenizer o200k|cl100k|estimate] [--json] FILE...`:
// counts the tokens of files (or - for standard input) with the tokenizer the
// proxy uses, so an operator can check a figure, and the tests can compare it
// with the reference implementation.
#pragma once

#include <string>
#include <vector>

namespace gistproxy::proxy {

int tokens_command(const std::vector<std::string>& args);

}  // namespace gistproxy::proxy
