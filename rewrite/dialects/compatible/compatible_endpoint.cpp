#include "rewrite/dialects/compatible/compatible_endpoint.hpp"

namespace gistproxy::rewrite {

compatible_family::compatible_family(std::string name, std::string prefix, std::string url)
    : name_(std::move(name)), prefix_(std::move(prefix)), folder_(prefix_ + "/"), url_(std::move(url)),
      claim_{folder_}, family_{.name = name_, .default_url = url_, .paths = {&claim_, 1}, .local_prefix = prefix_} {}

compatible_endpoint::compatible_endpoint(const wire_format& wire, const compatible_family& family, std::string_view operation)
    : endpoint(wire), family_(family),
      name_(std::string(family.family().name) + "-" + std::string(operation.substr(0, operation.find('/')))),
      path_(std::string(family.prefix()) + "/" + std::string(operation)) {}

}  // namespace gistproxy::rewrite
