// Vertex AI's endpoints (rewrite/dialects/vertex/vertex_endpoints.cpp): Claude
// and Gemini under a project's publisher paths or in express mode, the model
// and streaming mode a path names, token counts, and the family, keys and
// label their requests carry.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "rewrite/dialects/gemini/gemini_api.hpp"
#include "rewrite/dialects/messages/messages_api.hpp"
#include "rewrite/dialects/vertex/vertex_endpoints.hpp"
#include "rewrite/upstream_route.hpp"

using namespace gistproxy::rewrite;

namespace {

const messages_wire messages;
const gemini_wire gemini;
// As the registry builds them: Claude counts at a model of its own, Gemini at a verb of its own.
const vertex_endpoint claude{messages, "vertex-messages", {"anthropic", "rawPredict", "streamRawPredict", {}, "count-tokens"}};
const vertex_endpoint google{gemini, "vertex-gemini", {"google", "generateContent", "streamGenerateContent", "countTokens"},
                             &gemini_endpoint::read_gemini_target};

const std::string project = "/v1/projects/p/locations/us-east5/publishers/";

request_facts inspected(const vertex_endpoint& e, std::string_view target, request_facts facts = {}) {
  e.inspect_target(target, facts);
  return facts;
}

}  // namespace

TEST_CASE("a Vertex endpoint serves its publisher's two verbs under a project or in express mode") {
  CHECK(claude.serves_path(project + "anthropic/models/claude-x@20250101:rawPredict"));
  CHECK(claude.serves_path(project + "anthropic/models/claude-x:streamRawPredict"));
  CHECK(claude.serves_path("/v1beta1/projects/p/locations/global/publishers/anthropic/models/claude-x:rawPredict"));
  CHECK(google.serves_path(project + "google/models/gemini-2.5-flash:generateContent"));
  CHECK(google.serves_path("/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent"));  // express mode
  CHECK(google.serves_path("/v1beta1/publishers/google/models/gemini-2.5-flash:generateContent"));
}

TEST_CASE("a Vertex endpoint serves no other publisher or verb and no path of another shape") {
  const auto path = GENERATE(as<std::string>{}, project + "google/models/claude-x:rawPredict",
                             project + "meta/models/llama:rawPredict", project + "anthropic/models/claude-x:generateContent",
                             project + "anthropic/models/claude-x", project + "anthropic/models/:rawPredict",
                             project + "anthropic/models/claude-x:rawPredict/more", project + "anthropic/models/claude-x:rawPredictx",
                             project + "anthropic/endpoints/claude-x:rawPredict",
                             "/v1/projects/p/regions/l/publishers/anthropic/models/claude-x:rawPredict",
                             "/v1/projects//locations/l/publishers/anthropic/models/claude-x:rawPredict",
                             "/v1/projects/p/locations/l/publishers/anthropic/models/a/b:rawPredict",
                             "/v2/projects/p/locations/l/publishers/anthropic/models/claude-x:rawPredict",
                             "/v1beta/projects/p/locations/l/publishers/anthropic/models/claude-x:rawPredict",
                             "/v1/publishers/anthropic/claude-x:rawPredict", "/v1/messages");
  CAPTURE(path);
  CHECK_FALSE(claude.serves_path(path));
}

TEST_CASE("a Vertex path names the model over the body's and says whether the answer streams") {
  auto facts = inspected(claude, project + "anthropic/models/claude-x@20250101:streamRawPredict");
  CHECK(facts.model == "claude-x@20250101");
  CHECK(facts.stream);
  request_facts body;
  body.model = "from-body";
  body.stream = true;  // a body that asks for a stream keeps it on the unstreamed verb
  facts = inspected(claude, project + "anthropic/models/claude-x:rawPredict?x=1", body);
  CHECK(facts.model == "claude-x");
  CHECK(facts.stream);
  CHECK_FALSE(inspected(claude, project + "anthropic/models/claude-x:rawPredict").stream);
  // A path that is not the endpoint's leaves the body's facts alone.
  facts = inspected(claude, project + "google/models/g:generateContent", body);
  CHECK(facts.model == "from-body");
  // Gemini's own reader has its say too: a stream is followed only as SSE.
  const auto stream = project + "google/models/gemini-2.5-flash:streamGenerateContent";
  facts = inspected(google, stream + "?alt=sse");
  CHECK(facts.model == "gemini-2.5-flash");
  CHECK(facts.stream);
  CHECK(facts.answer_interceptable);
  CHECK_FALSE(inspected(google, stream).answer_interceptable);
}

TEST_CASE("Vertex counts tokens at Claude's count-tokens model and at Gemini's countTokens verb") {
  CHECK(claude.counts_tokens_at(project + "anthropic/models/count-tokens:rawPredict"));
  CHECK(claude.counts_tokens_at("/v1beta1/publishers/anthropic/models/count-tokens:rawPredict"));
  CHECK_FALSE(claude.counts_tokens_at(project + "anthropic/models/claude-x:rawPredict"));
  CHECK_FALSE(claude.counts_tokens_at(project + "google/models/count-tokens:rawPredict"));
  CHECK(google.counts_tokens_at(project + "google/models/gemini-2.5-flash:countTokens"));
  CHECK(google.counts_tokens_at("/v1/publishers/google/models/gemini-2.5-flash:countTokens"));
  CHECK_FALSE(google.counts_tokens_at(project + "google/models/gemini-2.5-flash:generateContent"));
  CHECK_FALSE(google.counts_tokens_at(project + "anthropic/models/claude-x:countTokens"));
  const vertex_endpoint uncounted{gemini, "vertex-x", {"google", "generateContent", "streamGenerateContent"}};
  CHECK_FALSE(uncounted.counts_tokens_at(project + "google/models/gemini-2.5-flash:countTokens"));
}

TEST_CASE("a Vertex request goes to a project region and names its model percent-encoded") {
  CHECK(claude.request_path("claude-x@20250101") ==
        "/v1/projects/project/locations/us-east5/publishers/anthropic/models/claude-x%4020250101:rawPredict");
  CHECK(google.request_path("") == "/v1/projects/project/locations/us-east5/publishers/google/models/model:generateContent");
  for (const auto* e : {&claude, &google})
    for (std::string_view model : {"m-1", "a b", ""}) {
      CAPTURE(e->name(), model);
      CHECK(e->serves_path(e->request_path(model)));
    }
}

TEST_CASE("Vertex requests go to the vertex family named by a Bearer token or a Google API key") {
  for (const auto* e : {&claude, &google}) {
    CAPTURE(e->name());
    CHECK(&e->upstream() == &vertex_family());
    CHECK(e->credentials().headers == std::vector<std::string_view>{"authorization", "x-goog-api-key"});
    CHECK(e->credentials().query_parameter == "key");
    CHECK(e->provider_name() == "gcp.vertex_ai");
  }
  CHECK(claude.name() == "vertex-messages");
  const auto& f = vertex_family();
  CHECK(f.name == "vertex");
  CHECK(f.default_url.empty());  // a project's region is the operator's
  CHECK(f.gateway_mount == "/vertex_ai");
  auto claimed = [&](std::string_view path) {
    for (const auto& c : f.paths)
      if (claims(c, path)) return true;
    return false;
  };
  CHECK(claimed("/v1/projects/p/locations/l/operations"));
  CHECK(claimed("/v1beta1/publishers/google/models"));
  CHECK(claimed("/v1/publishers/google/models/g:predict"));
  CHECK_FALSE(claimed("/v1/models"));
  CHECK_FALSE(claimed("/v1beta/models/g:generateContent"));  // Google AI's, not Vertex's
}

TEST_CASE("only Claude on Vertex takes a bare body by its vertex anthropic_version") {
  auto body = [](std::string_view text) { return nlohmann::json::parse(text); };
  CHECK(claude.request_affinity(body(R"({"anthropic_version":"vertex-2023-10-16","messages":[]})")) > 0);
  CHECK(claude.request_affinity(body(R"({"anthropic_version":"bedrock-2023-05-31","messages":[]})")) == 0);
  CHECK(claude.request_affinity(body(R"({"model":"claude-x","messages":[]})")) == 0);
  CHECK(claude.request_affinity(body(R"({"anthropic_version":16})")) == 0);
  CHECK(claude.request_affinity(body(R"(["vertex-2023-10-16"])")) == 0);
  CHECK(google.request_affinity(body(R"({"anthropic_version":"vertex-2023-10-16"})")) == 0);
}
