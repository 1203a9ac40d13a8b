#include "rewrite/dialects/openai_family.hpp"

namespace gistproxy::rewrite {
namespace {

// Paths only OpenAI serves (some end like another API's: the Assistants'
// /v1/threads/{id}/messages is not Anthropic's /v1/messages).
constexpr path_claim openai_paths[] = {
    {"/v1/chat/"},        {"/v1/responses/"},   {"/v1/completions/"}, {"/v1/embeddings/"},   {"/v1/threads/"},
    {"/v1/assistants/"},  {"/v1/audio/"},       {"/v1/images/"},      {"/v1/moderations/"},  {"/v1/batches/"},
    {"/v1/fine_tuning/"}, {"/v1/vector_stores/"}, {"/v1/uploads/"},   {"/v1/realtime/"},     {"/v1/conversations/"},
    {"/v1/organization/"},
    // Both OpenAI and Anthropic (and Gemini's v1) list models and keep files
    // here: a request that says nothing else about itself is OpenAI's.
    {"/v1/models/", nullptr, claim_strength::bare},
    {"/v1/files/", nullptr, claim_strength::bare},
};

// Bearer tokens only: no credential kind names OpenAI.
constexpr upstream_family openai{.name = "openai", .default_url = "https://api.openai.com", .paths = openai_paths};

}  // namespace

const upstream_family& openai_family() { return openai; }

}  // namespace gistproxy::rewrite
