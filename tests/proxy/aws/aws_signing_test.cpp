// Which SigV4 mode a Bedrock request is in (proxy/aws/aws_signing.hpp):
// a request the client signed, in any spelling of the signature, is never
// re-signed; a blank or doubled Authorization never passes for "no
// credentials"; and the query a signature of ours covers carries no client
// SigV4 parameter.
#include "rewrite/endpoint.hpp"
#include "proxy/aws/aws_signing.hpp"
#include "rewrite/upstream_route.hpp"

#include <catch2/catch.hpp>

using namespace gistproxy::proxy;

namespace {

const std::string invoke = "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke";

client_request request(const std::string& target, std::vector<std::pair<std::string, std::string>> fields = {}) {
  client_request r{http::verb::post, target, 11};
  for (const auto& [name, value] : fields) r.insert(name, value);
  return r;
}

aws_auth mode_of(const client_request& r, bool can_sign = true) {
  const auto* d = gistproxy::rewrite::endpoint_for("POST", std::string_view(r.target()));
  REQUIRE(d);
  return aws_auth_of(r, *d, can_sign);
}

}  // namespace

TEST_CASE("aws signing: a presigned query is the client's signature however its parameter names are encoded") {
  auto name = GENERATE(as<std::string>{}, "X-Amz-Signature", "X-Amz-%53ignature", "X%2DAmz%2DSignature",
                       "%58-%41mz-%53%69%67%6e%61%74%75%72%65", "x-amz-signature", "X-AMZ-SIGNATURE");
  CAPTURE(name);
  const auto r = request(invoke + "?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDCLIENT%2F20260101%2Fus-east-1%2F"
                                  "bedrock%2Faws4_request&" + name + "=abcdef");
  CHECK(mode_of(r) == aws_auth::client_signed);
  CHECK(mode_of(r, false) == aws_auth::client_signed);
}

TEST_CASE("aws signing: a blank Authorization is no credential, and two Authorization fields are ambiguous") {
  CHECK(mode_of(request(invoke, {{"Authorization", ""}})) == aws_auth::proxy_signs);
  CHECK(mode_of(request(invoke, {{"Authorization", " \t"}}), false) == aws_auth::anonymous);
  CHECK(mode_of(request(invoke, {{"Authorization", "Bearer sk-client"}})) == aws_auth::api_key);
  // A blank field then a Bearer: neither "no credentials" (the proxy would
  // sign a request carrying the client's key) nor the key alone.
  CHECK(mode_of(request(invoke, {{"Authorization", ""}, {"Authorization", "Bearer sk-client"}})) == aws_auth::ambiguous);
  CHECK(mode_of(request(invoke, {{"Authorization", "Bearer a"}, {"Authorization", "Bearer b"}})) == aws_auth::ambiguous);
  const std::string sigv4 = "AWS4-HMAC-SHA256 Credential=AKIDCLIENT/20260101/us-east-1/bedrock/aws4_request, "
                            "SignedHeaders=host;x-amz-date, Signature=00";
  CHECK(mode_of(request(invoke, {{"Authorization", sigv4}, {"Authorization", ""}}), false) == aws_auth::ambiguous);
  // Outside the AWS families nothing of this applies.
  const auto chat = request("/v1/chat/completions", {{"Authorization", ""}, {"Authorization", "Bearer b"}});
  CHECK(aws_auth_of(chat, *gistproxy::rewrite::endpoint_for("POST", "/v1/chat/completions"), true) == aws_auth::not_aws);
}

TEST_CASE("aws signing: a target gistproxy signs keeps its query but none of SigV4's parameters, however encoded") {
  CHECK(without_sigv4_query(invoke) == invoke);
  CHECK(without_sigv4_query(invoke + "?") == invoke);
  CHECK(without_sigv4_query(invoke + "?trace=1&x=%2F") == invoke + "?trace=1&x=%2F");
  CHECK(without_sigv4_query(invoke + "?X-Amz-Credential=AKIDCLIENT%2Fx&trace=1&X-Amz-Security-Token=tok&"
                                     "x-amz-date=20260101T000000Z&X%2DAmz%2DSignedHeaders=host&X-Amz-%45xpires=60&"
                                     "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature&keep=X-Amz-Credential") ==
        invoke + "?trace=1&keep=X-Amz-Credential");
  CHECK(without_sigv4_query(invoke + "?X-Amz-Security-Token=tok") == invoke);
}

TEST_CASE("aws signing: gistproxy's identity signs only the Bedrock operations it reads, and only with a model named") {
  // As receive routes them: /model/count-tokens is read as a CountTokens (no model id).
  auto mode = [](const std::string& target) {
    const auto route = gistproxy::rewrite::route_request("POST", target, {});
    REQUIRE(route.api);
    return aws_auth_of(request(target), *route.api, true);
  };
  for (const std::string op : {"invoke", "invoke-with-response-stream", "converse", "converse-stream", "count-tokens"}) {
    CAPTURE(op);
    CHECK(mode("/model/us.anthropic.claude-sonnet-4-5-v1%3A0/" + op) == aws_auth::proxy_signs);
    CHECK(mode("/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fx/" + op + "?trace=1") ==
          aws_auth::proxy_signs);
  }
  CHECK(mode("/model/count-tokens") == aws_auth::anonymous);  // was signed with gistproxy's key
  CHECK(mode("/model//count-tokens") == aws_auth::anonymous);
  for (const std::string path : {"/model/m", "/model/m/", "/model/", "/model//invoke", "/model/m/apply-guardrail",
                                 "/model/m/invoke/extra", "/guardrail/g/version/1/apply", "/model/m/invoke-with-bidirectional-stream"}) {
    CAPTURE(path);
    CHECK_FALSE(signs_operation(path));
  }
}

TEST_CASE("aws signing: a SigV4a signature is the client's, like SigV4's") {
  const std::string sigv4a = "AWS4-ECDSA-P256-SHA256 Credential=AKIDCLIENT/20260101/bedrock/aws4_request, "
                             "SignedHeaders=host;x-amz-date;x-amz-region-set, Signature=3045022100ab";
  CHECK(mode_of(request(invoke, {{"Authorization", sigv4a}})) == aws_auth::client_signed);
  CHECK(aws_credentials_of(request(invoke, {{"Authorization", sigv4a}})).identity() == "AKIDCLIENT");
}

// The reader itself is tested in tests/rewrite/aws_credentials_test.cpp; here,
// that every field of a request reaches it.
TEST_CASE("aws signing: a request's AWS credentials are read from its query, every Authorization and every token field") {
  CHECK(aws_credentials_of(request(invoke + "?X-Amz-Credential=AKIDQUERY%2F20260101%2Fus-east-1%2Fbedrock%2Faws4_request"
                                            "&X-Amz-Security-Token=tok"))
            .identity() == "AKIDQUERY");
  CHECK(aws_credentials_of(request(invoke + "?X-Amz-Security-Token=query-tok", {{"X-Amz-Security-Token", "field-tok"}}))
            .identity() == "field-tok");
  CHECK(aws_credentials_of(request(invoke, {{"X-Amz-Security-Token", ""}, {"X-Amz-Security-Token", "second-tok"}}))
            .identity() == "second-tok");
  // The credentials' views are into the request: it outlives them.
  const auto two_fields = request(invoke, {{"Authorization", "Bearer k"}, {"Authorization", "AWS4-HMAC-SHA256 Credential=AKID2/x"}});
  const auto second_field = aws_credentials_of(two_fields);
  CHECK(second_field.signature_field);
  CHECK(second_field.identity() == "AKID2");
  CHECK_FALSE(aws_credentials_of(request(invoke + "?X-Amz-Date=20260101T000000Z&X-Amz-Signature=")).carried());
}
