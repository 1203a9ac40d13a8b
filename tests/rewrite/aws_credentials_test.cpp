// "Is this request AWS-signed, and whose is it?" (rewrite/aws_credentials.hpp):
// the one reader routing, the tenant and the signing mode share, fed round
// 4's credential spellings.
#include "rewrite/aws_credentials.hpp"

#include <catch2/catch.hpp>
#include <string>

using namespace gistproxy::rewrite;

namespace {

const std::string invoke = "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke";
const std::string sigv4 = "AWS4-HMAC-SHA256 Credential=AKIDV4/20260101/us-east-1/bedrock/aws4_request, "
                          "SignedHeaders=host;x-amz-date, Signature=00";
const std::string sigv4a = "AWS4-ECDSA-P256-SHA256 Credential=AKIDV4A/20260101/bedrock/aws4_request, "
                           "SignedHeaders=host;x-amz-date;x-amz-region-set, Signature=3045022100ab";

aws_credentials with_authorization(const std::string& target, std::string_view authorization) {
  auto c = aws_credentials_in_query(target);
  c.add_authorization(authorization);
  return c;
}

}  // namespace

TEST_CASE("aws credentials: SigV4 and SigV4a Authorization are the client's signature, named by the access key id") {
  auto [value, key] = GENERATE_REF(table<std::string, std::string>({
      {sigv4, "AKIDV4"},
      {sigv4a, "AKIDV4A"},
      {" \t" + sigv4a, "AKIDV4A"},
      {"aws4-ecdsa-p256-sha256 Credential=AKIDLOWER/x", "AKIDLOWER"},
  }));
  CAPTURE(value);
  const auto c = with_authorization(invoke, value);
  CHECK(c.signature_field);
  CHECK(c.client_signed());
  CHECK(c.carried());
  CHECK(c.identity() == key);
  CHECK(is_aws_signature(value));
  CHECK(sigv4_access_key(value) == key);
}

TEST_CASE("aws credentials: any other Authorization is no AWS signature") {
  for (std::string_view other : {"Bearer AWS4-ECDSA-P256-SHA256", "Bearer ABSK-key", "", "AWS4", "AWS4-HMAC-SHA1 x"}) {
    CAPTURE(other);
    const auto c = with_authorization(invoke, other);
    CHECK_FALSE(c.client_signed());
    CHECK_FALSE(c.carried());
    CHECK(sigv4_access_key(other).empty());
  }
}

TEST_CASE("aws credentials: a presigned query is the client's signature in any case and %-encoding of its names") {
  auto name = GENERATE(as<std::string>{}, "X-Amz-Signature", "x-amz-signature", "X-AMZ-SIGNATURE", "X-Amz-%53ignature",
                       "X%2DAmz%2DSignature", "%58-%41mz-%53%69%67%6e%61%74%75%72%65", "x-AmZ-sIgNaTuRe");
  CAPTURE(name);
  // The reader's views are into the target: it outlives them.
  const std::string target = invoke + "?X-Amz-Algorithm=AWS4-HMAC-SHA256&x-AMZ-credential=AKIDQ%2F20260101%2F"
                                      "us-east-1%2Fbedrock%2Faws4_request&" + name + "=abcdef";
  const auto c = aws_credentials_in_query(target);
  CHECK(c.presigned);
  CHECK(c.client_signed());
  CHECK(c.identity() == "AKIDQ");
  // An empty signature signs nothing; its name alone is no credential.
  CHECK_FALSE(aws_credentials_in_query(invoke + "?" + name + "=").carried());
  CHECK_FALSE(aws_credentials_in_query(invoke + "?" + name).carried());
}

TEST_CASE("aws credentials: X-Amz-Security-Token names a session in its field or as a query parameter") {
  const std::string token_target = invoke + "?a=1&X-Amz-%53ecurity-Token=query-tok";
  const auto in_query = aws_credentials_in_query(token_target);
  CHECK(in_query.carried());
  CHECK_FALSE(in_query.client_signed());  // a token signs nothing: gistproxy may still sign for it
  CHECK(in_query.identity() == "query-tok");
  CHECK(aws_credentials_in_query(invoke + "?x%2Damz%2Dsecurity%2Dtoken=t").carried());
  CHECK_FALSE(aws_credentials_in_query(invoke + "?X-Amz-Security-Token=").carried());
  CHECK(aws_credentials_in_query(invoke + "?X-Amz-Security-Token=&X-Amz-Security-Token=second").identity() == "second");
  const std::string field_target = invoke + "?X-Amz-Security-Token=query-tok";
  auto field = aws_credentials_in_query(field_target);
  field.add_security_token(" \t");  // blank: none
  field.add_security_token(" field-tok ");
  field.add_security_token("later-tok");
  CHECK(field.identity() == "field-tok");  // the field before the query, its OWS trimmed
}

TEST_CASE("aws credentials: the tenant's identity is the access key id before any token, however the query spells it") {
  CHECK(aws_credentials_in_query(invoke + "?X-Amz-Credential=AKIDQUERY%2F20260101%2Fus-east-1%2Fbedrock%2Faws4_request"
                                          "&X-Amz-Security-Token=tok")
            .identity() == "AKIDQUERY");
  CHECK(aws_credentials_in_query(invoke + "?x-amz-credential=AKIDRAW/20260101/us-east-1/bedrock/aws4_request").identity() ==
        "AKIDRAW");
  CHECK(aws_credentials_in_query(invoke + "?X-Amz-Credential=AKIDLOWER%2f2026").identity() == "AKIDLOWER");
  CHECK(with_authorization(invoke + "?X-Amz-Credential=AKIDQUERY%2Fx", sigv4).identity() == "AKIDV4");
  // A credential with a value is a credential even when it names no key.
  const std::string keyless_target = invoke + "?X-Amz-Credential=%2F20260101";
  const auto keyless = aws_credentials_in_query(keyless_target);
  CHECK(keyless.carried());
  CHECK(keyless.identity().empty());
  CHECK_FALSE(aws_credentials_in_query(invoke + "?X-Amz-Date=20260101T000000Z&X-Amz-Expires=60").carried());
  CHECK_FALSE(aws_credentials_in_query(invoke).carried());
}

TEST_CASE("aws credentials: SigV4's query parameters are known in any spelling, and nothing that merely contains one") {
  for (const auto& name : {"X-Amz-Algorithm", "x-amz-credential", "X-Amz-%44ate", "X%2DAmz%2DExpires", "X-AMZ-SIGNEDHEADERS",
                           "X-Amz-Signature", "x-amz-security-token"}) {
    CAPTURE(name);
    const auto target = std::string("/m?") + name + "=v";  // outlives the view over it
    bool known = false;
    for (const auto& pair : query_pairs(target)) known = is_sigv4_query_parameter(pair);
    CHECK(known);
  }
  for (const auto& name : {"X-Amz-Signatures", "keep", "X-Amz-Credential2", "amz-credential", "%zzX-Amz-Date"}) {
    CAPTURE(name);
    const auto target = std::string("/m?") + name + "=v";
    for (const auto& pair : query_pairs(target)) CHECK_FALSE(is_sigv4_query_parameter(pair));
  }
}

TEST_CASE("aws credentials: hostile queries and fields are read in bounded time, and fail to no credential") {
  CHECK(aws_credentials_in_query(invoke + "?" + std::string(10'000, '&') + "X-Amz-Security-Token=t").identity() == "t");
  const std::string huge_target = invoke + "?" + std::string(100 * 1024, 'X') + "=v&X-Amz-Signature=s";
  const auto huge = aws_credentials_in_query(huge_target);
  CHECK_FALSE(huge.carried());  // past the reader's bound; the transport refuses such a target
  CHECK_FALSE(aws_credentials_in_query(invoke + "?X-Amz-Signature%=s&%zzX-Amz-Signature=s&X-Amz-Signatur%65").carried());
  CHECK(aws_credentials_in_query(invoke + "?X-Amz-Signature=%").presigned);
}

TEST_CASE("aws credentials: a signature over an HTTP/2 pseudo-header is told apart from one over Host") {
  const std::string scope = "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/bedrock/aws4_request, ";
  // The reader keeps views into the fields: each value outlives what reads it.
  auto signs_pseudo = [&](const std::string& signed_part) {
    const std::string value = scope + signed_part;
    aws_credentials c;
    c.add_authorization(value);
    return c.signs_pseudo_field();
  };
  const std::string sdk = scope + "SignedHeaders=:authority;amz-sdk-invocation-id;x-amz-date, Signature=ab";
  aws_credentials h2;
  h2.add_authorization(sdk);
  CHECK(h2.signs_pseudo_field());
  CHECK(h2.signed_headers == ":authority;amz-sdk-invocation-id;x-amz-date");
  CHECK(signs_pseudo("SignedHeaders=content-type;:path, Signature=ab"));
  CHECK_FALSE(signs_pseudo("SignedHeaders=host;x-amz-date, Signature=ab"));
  CHECK_FALSE(signs_pseudo("SignedHeaders=, Signature=ab"));
  CHECK_FALSE(signs_pseudo("Signature=ab"));
  const std::string bearer = "Bearer SignedHeaders=:authority";
  aws_credentials not_sigv4;
  not_sigv4.add_authorization(bearer);
  CHECK_FALSE(not_sigv4.signs_pseudo_field());
  // Only the first signature field counts, as for its access key.
  const std::string first = scope + "SignedHeaders=host, Signature=ab", second = scope + "SignedHeaders=:authority, Signature=cd";
  aws_credentials two;
  two.add_authorization(first);
  two.add_authorization(second);
  CHECK_FALSE(two.signs_pseudo_field());
  CHECK_FALSE(signs_pseudo("SignedHeaders=" + std::string(100'000, ';') + "x, Signature=ab"));
  CHECK(signs_pseudo("SignedHeaders=" + std::string(100'000, ';') + ":x, Signature=ab"));
}
