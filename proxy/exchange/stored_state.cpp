// The exchange's side of the Responses API's stored state (stored_state.hpp):
// which turns gistproxy changed, and reads of them shown as the client's.
#include "proxy/exchange/stored_state.hpp"

#include "proxy/exchange/exchange_stats.hpp"
#include "proxy/exchange/phases.hpp"
#include "rewrite/dialects/responses/responses_api.hpp"
#include "rewrite/dialects/responses/stored_turns.hpp"
#include "rewrite/json/checked.hpp"
#include "rewrite/json/scanner.hpp"
#include "rewrite/json/splice.hpp"
#include "rewrite/json/tree.hpp"

namespace gistproxy::proxy {
namespace {

namespace checked = rewrite::checked;

// A turn keeps at most this many of its hops' item ids and read_blob calls:
// more than any page-in turn makes (the registry refuses larger turns anyway).
constexpr std::size_t max_noted = 256;

bool speaks_responses(const rewrite::endpoint* e) {
  return e && dynamic_cast<const rewrite::responses_wire*>(&e->wire()) != nullptr;
}

// A top-level member of a request body, parsed; nullopt when absent (or the
// body is not an object). Only small members are asked for. `top` is the
// body's top level (received::top: each read walks the whole body).
std::optional<nlohmann::json> member_of(std::string_view body, const std::optional<rewrite::top_level>& top,
                                        std::string_view key) {
  const auto range = top ? top->member(key) : std::nullopt;
  if (!range) return std::nullopt;
  auto value = rewrite::json::parse_checked(body.substr(range->begin, range->size()));
  if (value.is_discarded()) return std::nullopt;
  return value;
}

std::vector<std::string> read_blob_names(const services& svc, const rewrite::stored_turn* turn) {
  std::vector<std::string> names = {svc.cfg.read_blob_name, svc.cfg.read_blob_fallback_name};
  if (turn && !turn->tool.empty()) names.push_back(turn->tool);
  return names;
}

void count_unmapped(services& svc, const request_context& ctx) {
  exchange_stats(svc.metrics, ctx.in.api).degraded_mode(degraded::stored_unmapped);
}

// A JSON answer to a read of stored state: shown as the client's, or as sent.
class stored_reader final : public hop_reader {
 public:
  stored_reader(services& svc, request_context& ctx, reader_env env) : svc_(svc), ctx_(ctx), env_(std::move(env)) {}

  awaitable<hop_read> read(upstream_answer& hop, int hop_index) override {
    const auto length = hop.content_length();
    if (hop.status() != 200 || body_kind_of(hop.head()) != rewrite::usage_observer::body_kind::json ||
        (length && *length > max_whole_answer)) {
      // An error, or not the JSON a read answers: the upstream's, as sent.
      relay_ = make_relay_reader(env_);
      co_return co_await relay_->read(hop, hop_index);
    }
    proxy_error failure;
    auto body = co_await hop.read_whole(failure);
    if (!body) {
      co_await env_.out.error(failure);
      co_return hop_read::stopped();
    }
    const auto shown = client_view(*body);
    hop.end(hop.status(), {});
    co_await env_.out.whole(hop.head(), shown ? *shown : *body);
    co_return hop_read::stopped();
  }

  awaitable<void> finish(hop_read&) override { co_return; }
  awaitable<void> fail(const proxy_error& e) override { co_await env_.out.error(e); }
  rewrite::token_usage usage() const override { return relay_ ? relay_->usage() : rewrite::token_usage{}; }
  bool showed(const hop_read&) const override { return true; }  // never finds a call

 private:
  // The answer as the client's; nullopt: as sent (unchanged, or not mapped).
  std::optional<std::string> client_view(const std::string& body) {
    const auto& st = ctx_.stored;
    const auto* turn = st.turn ? &*st.turn : nullptr;
    auto answer = rewrite::json::parse_checked(body);
    if (!turn || !answer.is_object()) {
      // Mapped but of a shape nothing expected, or a turn gistproxy does
      // not know that shows its read_blob: as sent, counted.
      if (turn || rewrite::shows_read_blob(answer, read_blob_names(svc_, nullptr))) count_unmapped(svc_, ctx_);
      return std::nullopt;
    }
    try {
      bool changed = false;
      if (st.read->what == rewrite::stored_read::kind::input_items) {
        auto* turns = svc_.stored_turns;
        const auto tenant = ctx_.in.tenant;
        rewrite::gistproxy_items ours{read_blob_names(svc_, turn), turn->hop_items,
                                      [turns, tenant](std::string_view call) { return turns->read_call(tenant, call); }};
        changed = rewrite::show_client_items(answer, ours, st.items_limit);
      } else {
        changed = rewrite::show_client_response(answer, *turn, st.client_id);
      }
      if (changed) return checked::dump(answer);
    } catch (const std::exception&) {
      count_unmapped(svc_, ctx_);
    }
    return std::nullopt;
  }

  services& svc_;
  request_context& ctx_;
  reader_env env_;
  std::unique_ptr<hop_reader> relay_;
};

}  // namespace

// A chained turn's previous_response_id names the id the client holds: the
// turn it names is kept under another (the last hop's), and the upstream
// would refuse to continue the first hop's (its read_blob call has no output).
void map_previous_response(services& svc, request_context& ctx) {
  if (!svc.stored_turns || !speaks_responses(ctx.in.endpoint)) return;
  auto& body = ctx.in.request.body();
  const auto& top = ctx.in.top.of(body);
  const auto range = top ? top->member("previous_response_id") : std::nullopt;
  if (!range) return;
  const auto previous = rewrite::json::parse_checked(std::string_view(body).substr(range->begin, range->size()));
  if (!previous.is_string()) return;
  const auto& sent = previous.get_ref<const std::string&>();
  const auto turn = svc.stored_turns->find(ctx.in.tenant, sent);
  if (!turn) return;
  ctx.stored.chains = true;
  if (turn->stored_id == sent) return;
  std::string id = "\"";
  rewrite::json::escape_into(id, turn->stored_id);
  id += '"';
  ctx.stored.previous_sent = sent;
  body = rewrite::set_member(body, *top, "previous_response_id", id);
}

void read_stored(services& svc, request_context& ctx) {
  auto& in = ctx.in;
  if (!svc.stored_turns || in.endpoint) return;
  const auto target = std::string_view(in.request.target());
  auto read = rewrite::stored_read_of(std::string_view(in.request.method_string()), target);
  if (!read) return;
  // The endpoint a POST of this family's …/responses would reach names the
  // tenant, as it would for the turn that made the response.
  const auto* api = svc.endpoints->endpoint_for_path(target.substr(0, read->id_at - 1));
  if (!speaks_responses(api)) return;
  in.api = api->name();
  in.tenant = tenant_of_request(svc, ctx, *api);
  auto& st = ctx.stored;
  st.client_id = read->id;
  st.items_limit = rewrite::items_limit(target).value_or(100);
  st.turn = svc.stored_turns->find(in.tenant, st.client_id);
  if (st.turn) {
    const auto hidden = read->what == rewrite::stored_read::kind::input_items
                            ? svc.stored_turns->hidden_in_chain(in.tenant, st.client_id) : 0;
    const auto sent = rewrite::stored_target(target, *read, st.turn->stored_id, hidden);
    if (sent != target) in.request.target(sent);
  }
  st.read = std::move(read);
}

void note_hop(request_context& ctx, const hop_read& got, bool continued) {
  auto& st = ctx.stored;
  const auto id = checked::string_at(got.response, "id");
  if (st.first_id.empty()) st.first_id = id;
  st.last_id = id;
  for (const auto& call : got.calls)
    if (st.read_calls.size() < max_noted) st.read_calls.push_back(call.id);
  if (!continued) {
    st.answered = true;
    return;
  }
  // What continue_conversation added to the next hop's input: everything
  // the model produced but the client's own calls.
  for (const auto& item : checked::array_at(got.response, "output")) {
    const bool client_call = checked::string_is(item, "type", "function_call") &&
                             !checked::string_is(item, "name", ctx.rw.intercept_tool);
    const auto item_id = checked::string_at(item, "id");
    if (!client_call && !item_id.empty() && st.hop_items.size() < max_noted) st.hop_items.push_back(item_id);
  }
}

void remember_stored(services& svc, request_context& ctx) {
  auto& st = ctx.stored;
  if (!svc.stored_turns || !speaks_responses(ctx.in.endpoint) || !st.answered || ctx.out.reply().status != 200) return;
  if (!ctx.offers_read_blob() && !st.chains) return;  // nothing of gistproxy's in its stored state
  const std::string_view body = ctx.in.request.body();
  const auto& top = ctx.in.top.of(body);
  if (member_of(body, top, "store") == nlohmann::json(false)) return;  // never kept
  if (!rewrite::is_response_id(st.last_id)) return;  // never put in a request target
  rewrite::stored_turn turn;
  turn.stored_id = st.last_id;
  turn.tool = ctx.rw.intercept_tool;
  turn.tool_added = ctx.rw.tool_added;
  turn.tool_choice = member_of(body, top, "tool_choice").value_or("auto");
  turn.previous_response_id = st.previous_sent.empty() ? member_of(body, top, "previous_response_id").value_or(nullptr)
                                                       : nlohmann::json(st.previous_sent);
  turn.hop_items = std::move(st.hop_items);
  turn.read_calls = std::move(st.read_calls);
  // A stream announced its first hop's id too (stored_state.hpp).
  if (st.streamed && rewrite::is_response_id(st.first_id) && st.first_id != st.last_id)
    svc.stored_turns->remember(ctx.in.tenant, st.first_id, turn);
  svc.stored_turns->remember(ctx.in.tenant, st.last_id, std::move(turn));
}

std::unique_ptr<hop_reader> make_stored_reader(services& svc, request_context& ctx, const upstream_answer& first,
                                               reader_env env) {
  const auto& st = ctx.stored;
  if (!st.read) return nullptr;
  if (!st.read->stream) return std::make_unique<stored_reader>(svc, ctx, std::move(env));
  if (!st.turn || first.status() != 200 || body_kind_of(first.head()) != rewrite::usage_observer::body_kind::sse)
    return make_relay_reader(std::move(env));
  return make_stream_reader(std::move(env), rewrite::make_stored_replay_filter(*st.turn, st.client_id),
                            rewrite::stream_transport::sse);
}

}  // namespace gistproxy::proxy
