// OpenAI's upstream family: Chat Completions and Responses (chat/,
// responses/) and the rest of OpenAI's API, which is forwarded untouched.
#pragma once

#include "rewrite/upstream_family.hpp"

namespace gistproxy::rewrite {

const upstream_family& openai_family();

}  // namespace gistproxy::rewrite
