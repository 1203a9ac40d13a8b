// gistproxy-sigv4: gistproxy's SigV4 signer as a filter, for the tests that
// compare it with an independent implementation (@smithy/signature-v4).
// stdin: {"method","path" (decoded),"query":[[k,v]…] (decoded),"headers":[[k,v]…],
//         "payload_sha256","amz_date","region","service","access_key_id",
//         "secret_access_key","session_token"}
// stdout: {"canonical_request","string_to_sign","signature","authorization"}
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "proxy/aws/sigv4.hpp"

using namespace gistproxy::aws;

int main() {
  std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  auto j = nlohmann::json::parse(input);
  sigv4_request r;
  r.method = j.at("method");
  r.path = j.at("path");
  for (const auto& q : j.at("query")) r.query.emplace_back(q.at(0), q.at(1));
  for (const auto& h : j.at("headers")) r.headers.emplace_back(h.at(0), h.at(1));
  r.payload_sha256 = j.at("payload_sha256");
  credentials c{j.at("access_key_id"), j.at("secret_access_key"), j.value("session_token", "")};
  sigv4_options o;
  o.region = j.at("region");
  o.service = j.at("service");
  o.amz_date = j.at("amz_date");
  o.sign_payload_header = j.value("sign_payload_header", true);
  auto s = sign(r, c, o);
  std::cout << nlohmann::json{{"canonical_request", s.canonical_request},
                              {"string_to_sign", s.string_to_sign},
                              {"signature", s.signature},
                              {"authorization", s.authorization}}
                   .dump()
            << "\n";
  return 0;
}
