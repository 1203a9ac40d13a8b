#include "telemetry/span_json.hpp"

namespace gistproxy::telemetry {
namespace {

const char* kind_name(span_kind k) {
  switch (k) {
    case span_kind::server: return "server";
    case span_kind::client: return "client";
    case span_kind::internal: return "internal";
  }
  return "internal";
}

const char* status_name(span_status s) {
  switch (s) {
    case span_status::ok: return "ok";
    case span_status::error: return "error";
    case span_status::unset: return "unset";
  }
  return "unset";
}

nlohmann::json otlp_value(const attribute_value& v) {
  return std::visit(
      [](const auto& x) -> nlohmann::json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) return {{"stringValue", x}};
        else if constexpr (std::is_same_v<T, bool>) return {{"boolValue", x}};
        else if constexpr (std::is_same_v<T, std::int64_t>) return {{"intValue", std::to_string(x)}};
        else return {{"doubleValue", x}};
      },
      v);
}

}  // namespace

std::string to_span_log_line(const span& s) {
  nlohmann::json attrs = nlohmann::json::object();
  for (const auto& a : s.attributes)
    std::visit([&](const auto& x) { attrs[a.key] = x; }, a.value);
  nlohmann::json status = {{"code", status_name(s.status)}};
  if (!s.status_message.empty()) status["message"] = s.status_message;
  nlohmann::json j = {
      {"traceId", s.trace.hex()},
      {"spanId", s.id.hex()},
      {"parentSpanId", s.parent.valid() ? s.parent.hex() : std::string()},
      {"name", s.name},
      {"kind", kind_name(s.kind)},
      {"startTimeUnixNano", s.start_unix_nano},
      {"endTimeUnixNano", s.end_unix_nano},
      {"attributes", std::move(attrs)},
      {"status", std::move(status)},
  };
  // Replace invalid UTF-8 instead of throwing: attributes are ours, but a model
  // name comes from the client.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json to_otlp_request(const std::vector<span>& spans, const resource_info& resource) {
  nlohmann::json out_spans = nlohmann::json::array();
  for (const auto& s : spans) {
    nlohmann::json attrs = nlohmann::json::array();
    for (const auto& a : s.attributes) attrs.push_back({{"key", a.key}, {"value", otlp_value(a.value)}});
    nlohmann::json j = {
        {"traceId", s.trace.hex()},
        {"spanId", s.id.hex()},
        {"name", s.name},
        {"kind", int(s.kind)},
        {"startTimeUnixNano", std::to_string(s.start_unix_nano)},
        {"endTimeUnixNano", std::to_string(s.end_unix_nano)},
        {"attributes", std::move(attrs)},
        {"status", {{"code", int(s.status)}}},
    };
    if (s.parent.valid()) j["parentSpanId"] = s.parent.hex();
    if (!s.status_message.empty()) j["status"]["message"] = s.status_message;
    out_spans.push_back(std::move(j));
  }
  nlohmann::json resource_attrs = nlohmann::json::array({
      {{"key", "service.name"}, {"value", {{"stringValue", resource.service_name}}}},
      {{"key", "service.version"}, {"value", {{"stringValue", resource.service_version}}}},
  });
  return {{"resourceSpans",
           nlohmann::json::array({{{"resource", {{"attributes", std::move(resource_attrs)}}},
                                   {"scopeSpans", nlohmann::json::array({{{"scope", {{"name", "gistproxy"},
                                                                                     {"version", GISTPROXY_VERSION}}},
                                                                          {"spans", std::move(out_spans)}}})}}})}};
}

}  // namespace gistproxy::telemetry
