// A shared store (S3) this replica cannot reach, through the real binary: a
// request that carries a reference made elsewhere still gets read_blob, and
// the model's call is a tool error saying the store could not be reached,
// so the model learns the reference cannot be followed now.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <catch2/catch.hpp>

#include "rewrite/blob/digest.hpp"
#include "rewrite/gist/reference.hpp"
#include "tests/integration/harness.hpp"
#include "tests/support/api_scenarios.hpp"

using namespace gistproxy::testing;

TEST_CASE("with the shared store unreachable a request carrying only a reference is offered read_blob and told why it cannot read") {
  // A port nothing listens on: every S3 call is refused at once.
  std::uint16_t closed_port = 0;
  {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor a(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
    closed_port = a.local_endpoint().port();
  }
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--store", "s3://bucket/gp", "--s3-endpoint",
                       "http://127.0.0.1:" + std::to_string(closed_port), "--store-timeout", "1s"},
                      {"AWS_ACCESS_KEY_ID=AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY=not-a-secret"});
  // The reference another replica made: this one never saw the conversation.
  const auto bytes = haystack();
  const auto handle = gistproxy::rewrite::sha256_hex(bytes);
  gistproxy::rewrite::char_ratio_estimator estimator;
  const auto reference = gistproxy::rewrite::render_reference(bytes, gistproxy::rewrite::shape_of(bytes, estimator), "cat", handle, {});
  auto res = http_request(proxy.port(), "POST", "/v1/chat/completions", request_for("chat", "read it all", reference).dump(),
                          key_header("chat"));
  REQUIRE(res.status == 200);
  const auto answer = nlohmann::json::parse(res.body);
  CHECK_FALSE(answer["choices"][0]["message"].contains("tool_calls"));  // offered, so the call was the proxy's to answer
  const auto said = answer_text("chat", answer);
  CHECK(said.rfind("tool said: read_blob error: the blob store holding \"" + handle.substr(0, 16), 0) == 0);
  CHECK(said.find("could not be reached") != std::string::npos);
  REQUIRE(!upstream.llm_bodies().empty());
  CHECK(upstream.llm_bodies().front().find("\"read_blob\"") != std::string::npos);  // was: not offered
}
