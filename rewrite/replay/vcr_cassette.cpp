#include "rewrite/replay/trace_readers.hpp"

#include <yaml-cpp/yaml.h>

#include <regex>
#include <stdexcept>

namespace gistproxy::rewrite::trace_readers {

namespace {

ojson yaml_to_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      ojson o = ojson::object();
      for (const auto& kv : n) o[kv.first.as<std::string>()] = yaml_to_json(kv.second);
      return o;
    }
    case YAML::NodeType::Sequence: {
      ojson a = ojson::array();
      for (const auto& v : n) a.push_back(yaml_to_json(v));
      return a;
    }
    case YAML::NodeType::Scalar: {
      const auto& s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted: always a string
      static const std::regex integer(R"(^[-+]?[0-9]+$)"), real(R"(^[-+]?([0-9]*\.[0-9]+|[0-9]+\.?[0-9]*)([eE][-+]?[0-9]+)?$)");
      if (s == "true" || s == "True" || s == "TRUE") return true;
      if (s == "false" || s == "False" || s == "FALSE") return false;
      if (s == "null" || s == "Null" || s == "NULL" || s == "~") return nullptr;
      if (std::regex_match(s, integer)) {
        try {
          return std::stoll(s);
        } catch (const std::exception&) {
        }
      }
      if (std::regex_match(s, real)) return std::stod(s);
      return s;
    }
    default:
      return nullptr;
  }
}

}  // namespace

void read_vcr(std::string_view text, recorded_trace& t) {
  t.format = "vcr";
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(std::string("vcr cassette: YAML error: ") + e.what());
  }
  if (!root["interactions"] || !root["interactions"].IsSequence())
    throw std::runtime_error("vcr cassette: no interactions list");
  for (const auto& it : root["interactions"]) {
    auto req = it["request"];
    if (!req) continue;
    auto uri = req["uri"] ? req["uri"].as<std::string>() : std::string();
    auto api = endpoint_for_path(path_of_url(uri));
    if (!api) {
      t.notes.push_back("not an LLM request: " + uri.substr(0, 80));
      continue;
    }
    if (req["parsed_body"]) {
      add_body(t, yaml_to_json(req["parsed_body"]), api);
    } else if (req["body"] && req["body"].IsScalar()) {
      add_body_text(t, req["body"].Scalar(), api);
    } else if (req["body"] && req["body"]["string"]) {
      add_body_text(t, req["body"]["string"].Scalar(), api);
    } else {
      t.notes.push_back("an LLM request without a body: " + uri.substr(0, 80));
    }
  }
}

}  // namespace gistproxy::rewrite::trace_readers
