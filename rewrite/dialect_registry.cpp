#include "rewrite/dialect.hpp"
#include "rewrite/dialects/chat.hpp"
#include "rewrite/dialects/messages.hpp"
#include "rewrite/dialects/responses.hpp"

namespace gistproxy::rewrite {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

const dialect* dialect_for(std::string_view method, std::string_view target) {
  static const chat_dialect chat;
  static const responses_dialect responses;
  static const messages_dialect messages;
  if (method != "POST") return nullptr;
  auto path = target.substr(0, target.find('?'));
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  if (ends_with(path, "/chat/completions")) return &chat;
  if (ends_with(path, "/responses")) return &responses;
  if (ends_with(path, "/messages")) return &messages;
  return nullptr;
}

}  // namespace gistproxy::rewrite
