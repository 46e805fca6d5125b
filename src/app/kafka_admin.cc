#include "app/kafka_admin.h"

#include "protocol/error_code.h"
#include "protocol/messages/find_coordinator.h"

namespace strata::app {

namespace {

constexpr int16_t kFindCoordinatorVersion = 4;

std::vector<std::pair<std::string, uint16_t>> ParseBootstrap(const std::string& list) {
  std::vector<std::pair<std::string, uint16_t>> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string one =
        list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t colon = one.rfind(':');
    if (colon != std::string::npos && colon > 0) {
      try {
        out.emplace_back(one.substr(0, colon),
                         static_cast<uint16_t>(std::stoi(one.substr(colon + 1))));
      } catch (const std::exception&) {
      }
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::string DescribeError(int16_t code, const std::optional<std::string>& message) {
  if (code == 0) return "";
  std::string out = protocol::ErrorCodeName(code);
  if (message && !message->empty()) out += ": " + *message;
  return out;
}

KafkaAdmin::KafkaAdmin(std::chrono::milliseconds timeout)
    : timeout_(timeout), work_(asio::make_work_guard(io_)), thread_([this] { io_.run(); }) {}

KafkaAdmin::~KafkaAdmin() {
  if (bootstrap_) bootstrap_->Close();
  for (auto& [id, c] : nodes_) c->Close();
  work_.reset();
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

net::ClientOptions KafkaAdmin::Options() const {
  net::ClientOptions o;
  o.client_id = "strata-cli";
  o.request_timeout = timeout_;
  o.connect_timeout = timeout_;
  o.max_connections = 1;
  o.security = security_;
  return o;
}

Result<std::unique_ptr<KafkaAdmin>> KafkaAdmin::Connect(const std::string& bootstrap,
                                                        std::chrono::milliseconds timeout,
                                                        net::ClientSecurity security) {
  auto servers = ParseBootstrap(bootstrap);
  if (servers.empty()) {
    return MakeError(Errc::kInvalidArgument, "no host:port in --bootstrap '" + bootstrap + "'");
  }
  auto admin = std::make_unique<KafkaAdmin>(timeout);
  admin->security_ = std::move(security);
  std::string errors;
  for (const auto& [host, port] : servers) {
    admin->bootstrap_ =
        std::make_unique<net::Client>(admin->io_.get_executor(), host, port, admin->Options());
    auto md = admin->Metadata(std::vector<std::string>{});
    if (md.ok()) return admin;
    errors += (errors.empty() ? "" : "; ") + host + ":" + std::to_string(port) + ": " +
              md.error().message;
    admin->bootstrap_->Close();
  }
  return MakeError(Errc::kUnavailable, "no broker answered (" + errors + ")");
}

Result<protocol::MetadataResponse> KafkaAdmin::Metadata(
    const std::optional<std::vector<std::string>>& topics) {
  protocol::MetadataRequest req;
  req.allow_auto_topic_creation = false;
  if (topics) {
    req.topics.emplace();
    for (const auto& t : *topics) req.topics->push_back({{}, t});
  }
  auto md = Call<protocol::MetadataRequest, protocol::MetadataResponse>(req, kMetadataVersion);
  if (!md.ok()) return md;
  for (const auto& b : md->brokers) addresses_[b.node_id] = {b.host, b.port};
  return md;
}

Result<int32_t> KafkaAdmin::GroupCoordinator(const std::string& group) {
  protocol::FindCoordinatorRequest req;
  req.key_type = 0;
  req.coordinator_keys = {group};
  auto r = Call<protocol::FindCoordinatorRequest, protocol::FindCoordinatorResponse>(
      req, kFindCoordinatorVersion);
  if (!r.ok()) return r.take_error();
  if (r->coordinators.empty()) return MakeError(Errc::kUnavailable, "no coordinator named");
  const auto& c = r->coordinators.front();
  if (c.error_code != 0) {
    return MakeError(Errc::kUnavailable, DescribeError(c.error_code, c.error_message));
  }
  addresses_[c.node_id] = {c.host, c.port};
  return c.node_id;
}

std::vector<int32_t> KafkaAdmin::Brokers() const {
  std::vector<int32_t> out;
  for (const auto& [id, address] : addresses_) out.push_back(id);
  return out;
}

net::Client* KafkaAdmin::ClientFor(int32_t node) {
  if (node < 0) return bootstrap_.get();
  auto address = addresses_.find(node);
  if (address == addresses_.end()) return nullptr;
  auto& client = nodes_[node];
  if (!client) {
    client =
        std::make_unique<net::Client>(io_.get_executor(), address->second.first,
                                      static_cast<uint16_t>(address->second.second), Options());
  }
  return client.get();
}

}  // namespace strata::app
