// Whether a page-in hop's answer showed the client anything: text, thinking
// or a refusal, in any API's shape (the turn as its API's JSON response,
// read_blob calls included). A streamed hop's text reaches the client as it
// comes; a hop that showed nothing can be asked again in place of being
// continued (page_in_loop: a re-reader's outputs go back inline inside the
// hop that tells it), and the client cannot tell the difference.
#pragma once

#include <nlohmann/json.hpp>

namespace gistproxy::rewrite {

// Conservative: true when the answer is too deep or too large to look
// through within the bounds, so an answer of any shape is never asked again
// after it may have shown something.
bool answer_shows_text(const nlohmann::json& response);

}  // namespace gistproxy::rewrite
