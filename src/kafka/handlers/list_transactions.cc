// ListTransactions (66): the transactional ids this broker coordinates that
// pass the request's filters (kafka-transactions list sends it to every
// broker and merges the answers). The filters are Kafka's
// (TransactionStateManager.listTransactionStates): state names (names Kafka
// does not know come back in UnknownStateFilters and let nothing through),
// producer ids, v1 a minimum running time, v2 a regular expression the whole
// id must match (KIP-1152; null or empty: none). COORDINATOR_LOAD_IN_PROGRESS
// while any __transaction_state partition loads.
//
// Kafka compiles the pattern with RE2/J; here it is std::regex's ECMAScript
// grammar, close enough for the patterns people write (literals, classes,
// `.*`, alternation, `(?:...)`). With libstdc++ it runs in its polynomial
// (breadth-first) mode, so, as with RE2, a client's pattern cannot make the
// match backtrack exponentially, and back-references are refused. Lookahead
// is accepted where RE2 refuses it. A pattern that does not compile is
// INVALID_REGULAR_EXPRESSION, checked before the load state (Kafka checks it
// after).
#include "protocol/messages/list_transactions.h"

#include <algorithm>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "coordinator/txn_coordinator.h"
#include "kafka/authorization.h"
#include "kafka/handlers/handlers.h"
#include "protocol/error_code.h"

namespace strata::kafka {
namespace {

using protocol::ErrorCode;
using protocol::ListTransactionsRequest;
using protocol::ListTransactionsResponse;

constexpr std::regex::flag_type kPatternSyntax =
#if defined(__GLIBCXX__)
    std::regex::ECMAScript | std::regex_constants::__polynomial;
#else
    std::regex::ECMAScript;
#endif

// The state names as a filter, the unknown ones (each once) into `unknown`.
std::optional<std::set<coordinator::TxnStatus>> StateFilter(const std::vector<std::string>& names,
                                                            std::vector<std::string>& unknown) {
  if (names.empty()) return std::nullopt;
  std::set<coordinator::TxnStatus> states;
  for (const std::string& name : names) {
    if (auto status = coordinator::TxnStatusFromName(name)) {
      states.insert(*status);
    } else if (std::find(unknown.begin(), unknown.end(), name) == unknown.end()) {
      unknown.push_back(name);
    }
  }
  return states;
}

}  // namespace

HandlerResult HandleListTransactions(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(ListTransactionsRequest req,
                          DecodeRequest<ListTransactionsRequest>(request));
  ListTransactionsResponse resp;
  if (ctx.txn_coordinator == nullptr) {
    resp.error_code = Code(ErrorCode::kCoordinatorNotAvailable);
    return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  coordinator::TxnListFilter filter;
  if (req.transactional_id_pattern && !req.transactional_id_pattern->empty()) {
    try {
      auto pattern =
          std::make_shared<const std::regex>(*req.transactional_id_pattern, kPatternSyntax);
      filter.id_matches = [pattern](const std::string& id) {
        return std::regex_match(id, *pattern);
      };
    } catch (const std::regex_error&) {
      resp.error_code = Code(ErrorCode::kInvalidRegularExpression);
      return std::optional<Bytes>(EncodeResponse(request, resp));
    }
  }
  std::vector<std::string> unknown;
  filter.states = StateFilter(req.state_filters, unknown);
  filter.producer_ids.insert(req.producer_id_filters.begin(), req.producer_id_filters.end());
  filter.min_duration_ms = req.duration_filter;
  coordinator::TxnList listed = ctx.txn_coordinator->List(filter);
  resp.error_code = Code(listed.error);
  if (listed.error == ErrorCode::kNone) {
    resp.unknown_state_filters = std::move(unknown);
    for (const coordinator::TxnListing& t : listed.transactions) {
      // Only the transactional ids the client may DESCRIBE.
      if (!Authorized(ctx, request, security::AclOperation::kDescribe,
                      security::ResourceType::kTransactionalId, t.transactional_id, false)) {
        continue;
      }
      resp.transaction_states.push_back(
          {t.transactional_id, t.producer_id, std::string(coordinator::TxnStatusName(t.state))});
    }
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
