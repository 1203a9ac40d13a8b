// Path pieces the cloud endpoints read (Azure OpenAI, Vertex AI, Bedrock):
// a cloud names the model or deployment in the path, percent-encoded.
#pragma once

#include <string>
#include <string_view>

namespace gistproxy::rewrite {

// Path pieces the cloud endpoints read (query and fragment already removed).
namespace cloud_path {
// The segment after `prefix` up to the next '/' (or ':' when `stop_at_colon`);
// empty when `path` does not start with prefix.
std::string_view segment_after(std::string_view path, std::string_view prefix, bool stop_at_colon = false);
// A model id (or deployment name) as a path names it, %XX decoded (Bedrock's
// ARNs and profile ids carry ':' and '/' encoded). Empty when it is not one: a
// malformed escape, a byte outside printable ASCII (which must not reach span
// attributes or logs as if it were a name), or longer than Bedrock's 2048.
std::string model_id(std::string_view encoded);
// Each byte outside RFC 3986's unreserved set as %XX (a model id put in a path).
std::string percent_encoded(std::string_view s);
}  // namespace cloud_path

}  // namespace gistproxy::rewrite
