#include "proxy/exchange/compaction_span.hpp"

namespace gistproxy::proxy {

void emit_compaction_span(telemetry::tracer& tracer, const telemetry::span& request, const rewrite::offload_record& o) {
  auto s = tracer.start("compaction", telemetry::span_kind::internal, request.trace, request.id);
  if (o.start_ns) s.start_unix_nano = o.start_ns;
  if (o.end_ns) s.end_unix_nano = o.end_ns;
  if (const auto* conversation = request.find("gen_ai.conversation.id")) s.set("gen_ai.conversation.id", *conversation);
  s.set("gistproxy.strategy", "offload");
  s.set("gistproxy.tokens_before", o.tokens_before);
  s.set("gistproxy.tokens_after", o.tokens_after);
  s.set("gistproxy.bytes_offloaded", o.bytes);
  s.set_text("gistproxy.handle", o.hash);
  s.set("gistproxy.content_kind", o.kind);
  s.set("gistproxy.deduplicated", o.deduplicated);
  s.set("gen_ai.tool.name", o.tool_name);
  s.set("gen_ai.tool.call.id", o.call_id);
  tracer.end(s);
}

}  // namespace gistproxy::proxy
