#include "proxy/sessions/tls_reload.hpp"

namespace gistproxy::proxy {

tls_reload::tls_reload(services& svc, asio::io_context& io) : svc_(svc), timer_(io) {
  if (!svc_.client_tls) return;
  publish("start");
  if (svc_.cfg.tls_reload_interval.count() > 0) watch();
}

void tls_reload::publish(std::string_view trigger) {
  const auto facts = svc_.client_tls->facts();
  svc_.metrics.tls_certificate_expiry.get().set(double(facts.not_after));
  std::string fields = "\"trigger\":";
  telemetry::append_json_string(fields, trigger);
  fields += ",\"subject\":";
  telemetry::append_json_string(fields, facts.subject);
  fields += ",\"not_after\":" + std::to_string(facts.not_after);
  svc_.log.log(telemetry::log_level::info, "TLS certificate", fields);
}

void tls_reload::reload(std::string_view trigger) {
  if (!svc_.client_tls) return;
  const auto refused = svc_.client_tls->reload();
  svc_.metrics.tls_reloads.labels({refused ? "refused" : "ok"}).inc();
  if (!refused) return publish(trigger);
  std::string fields = "\"trigger\":";
  telemetry::append_json_string(fields, trigger);
  fields += ",\"reason\":";
  telemetry::append_json_string(fields, *refused);  // file names and OpenSSL's reasons, never key bytes
  svc_.log.log(telemetry::log_level::warn, "TLS reload refused: the certificate in use keeps serving", fields);
}

void tls_reload::watch() {
  timer_.expires_after(svc_.cfg.tls_reload_interval);
  timer_.async_wait([this](error_code ec) {
    if (ec) return;  // stopped
    if (svc_.client_tls->files_changed()) reload("file change");
    watch();
  });
}

void tls_reload::stop() { timer_.cancel(); }

}  // namespace gistproxy::proxy
