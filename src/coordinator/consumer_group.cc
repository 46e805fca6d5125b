#include "coordinator/consumer_group.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>

namespace strata::coordinator {

namespace {

using protocol::ErrorCode;

TopicAssignment FromWire(const std::vector<protocol::ConsumerGroupTopicPartitions>& wire) {
  TopicAssignment out;
  for (const auto& t : wire) out[t.topic_id].insert(t.partitions.begin(), t.partitions.end());
  return out;
}

std::vector<protocol::ConsumerGroupTopicPartitions> ToWire(const TopicAssignment& a) {
  std::vector<protocol::ConsumerGroupTopicPartitions> out;
  for (const auto& [t, ps] : a) {
    if (!ps.empty()) out.push_back({t, std::vector<int32_t>(ps.begin(), ps.end())});
  }
  return out;
}

bool Blank(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); });
}

// FNV-1a, 64 bits: the metadata hash only has to change when a subscribed
// topic does (Kafka's own hash differs; a log Kafka wrote costs one bump).
void Mix(uint64_t& h, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
}

}  // namespace

const char* ConsumerGroupStateName(ConsumerGroupState s) {
  switch (s) {
    case ConsumerGroupState::kEmpty:
      return "Empty";
    case ConsumerGroupState::kAssigning:
      return "Assigning";
    case ConsumerGroupState::kReconciling:
      return "Reconciling";
    case ConsumerGroupState::kStable:
      return "Stable";
  }
  return "Unknown";
}

ErrorCode ValidateHeartbeat(const protocol::ConsumerGroupHeartbeatRequest& req, int16_t api_version,
                            const ConsumerGroupConfig& config, std::string* message) {
  auto invalid = [&](std::string m) {
    *message = std::move(m);
    return ErrorCode::kInvalidRequest;
  };
  const int32_t epoch = req.member_epoch;
  if ((api_version >= 1 || epoch > 0 || epoch == -1) && Blank(req.member_id)) {
    return invalid("MemberId can't be empty.");
  }
  if (Blank(req.group_id)) return invalid("GroupId can't be empty.");
  if (req.instance_id && Blank(*req.instance_id)) return invalid("InstanceId can't be empty.");
  if (req.rack_id && Blank(*req.rack_id)) return invalid("RackId can't be empty.");
  if (epoch == 0) {
    if (req.rebalance_timeout_ms == -1)
      return invalid("RebalanceTimeoutMs must be provided in first request.");
    if (!req.topic_partitions || !req.topic_partitions->empty()) {
      return invalid("TopicPartitions must be empty when (re-)joining.");
    }
    if (!req.subscribed_topic_names && !req.subscribed_topic_regex) {
      return invalid("SubscribedTopicNames or SubscribedTopicRegex must be set in first request.");
    }
  } else if (epoch == -2 && !req.instance_id) {
    return invalid("InstanceId can't be null.");
  } else if (epoch < -2) {
    return invalid(fmt::format("MemberEpoch {} is invalid.", epoch));
  }
  if (req.server_assignor && std::find(config.assignors.begin(), config.assignors.end(),
                                       *req.server_assignor) == config.assignors.end()) {
    *message = fmt::format("ServerAssignor {} is not supported. Supported assignors: {}.",
                           *req.server_assignor, fmt::join(config.assignors, ", "));
    return ErrorCode::kUnsupportedAssignor;
  }
  if (req.subscribed_topic_regex && !req.subscribed_topic_regex->empty()) {
    // RE2's syntax, which Kafka's RE2J shares.
    RE2 re(*req.subscribed_topic_regex, RE2::Quiet);
    if (!re.ok()) {
      *message = fmt::format("SubscribedTopicRegex `{}` is not a valid regular expression: {}.",
                             *req.subscribed_topic_regex, re.error());
      return ErrorCode::kInvalidRegularExpression;
    }
  }
  return ErrorCode::kNone;
}

const ConsumerGroupMember* ConsumerGroup::member(const std::string& id) const {
  auto it = members_.find(id);
  return it == members_.end() ? nullptr : &it->second;
}

ConsumerGroupState ConsumerGroup::state() const {
  if (members_.empty()) return ConsumerGroupState::kEmpty;
  if (group_epoch_ > assignment_epoch_) return ConsumerGroupState::kAssigning;
  for (const auto& [id, m] : members_) {
    if (m.current.state != MemberState::kStable || m.current.member_epoch != assignment_epoch_)
      return ConsumerGroupState::kReconciling;
  }
  return ConsumerGroupState::kStable;
}

std::string ConsumerGroup::PreferredAssignor(const ConsumerGroupConfig& config) const {
  std::map<std::string, int> votes;
  for (const auto& [id, m] : members_) {
    if (m.metadata.server_assignor) votes[*m.metadata.server_assignor]++;
  }
  std::string best;
  int most = 0;
  for (const auto& [name, n] : votes) {
    if (n > most) best = name, most = n;
  }
  if (!best.empty()) return best;
  return config.assignors.empty() ? kUniformAssignor : config.assignors.front();
}

std::map<std::string, const ConsumerMemberMetadata*> ConsumerGroup::Subscriptions() const {
  std::map<std::string, const ConsumerMemberMetadata*> out;
  for (const auto& [id, m] : members_) out[id] = &m.metadata;
  return out;
}

void ConsumerGroup::ExpireRegexMatches(int64_t now_ms) {
  now_ms_ = now_ms;
  std::erase_if(regexes_,
                [&](const auto& e) { return now_ms - e.second.matched_at_ms >= kRegexRefreshMs; });
}

const std::vector<std::string>& ConsumerGroup::Matches(const std::string& regex,
                                                       const TopicCatalog& topics) const {
  auto it = regexes_.find(regex);
  if (it != regexes_.end()) return it->second.topics;
  RegexMatches m;
  m.matched_at_ms = now_ms_;
  RE2 re(regex, RE2::Quiet);
  if (re.ok() && topics.names) {
    for (const std::string& name : topics.names()) {
      if (RE2::FullMatch(name, re)) m.topics.push_back(name);
    }
  }
  return regexes_.emplace(regex, std::move(m)).first->second.topics;
}

std::set<std::string> ConsumerGroup::SubscribedNames(const ConsumerMemberMetadata& m,
                                                     const TopicCatalog& topics) const {
  std::set<std::string> out(m.subscribed_topic_names.begin(), m.subscribed_topic_names.end());
  if (m.subscribed_topic_regex && !m.subscribed_topic_regex->empty()) {
    const auto& matched = Matches(*m.subscribed_topic_regex, topics);
    out.insert(matched.begin(), matched.end());
  }
  return out;
}

bool ConsumerGroup::IsSubscribed(const std::string& topic) const {
  for (const auto& [id, m] : members_) {
    const auto& names = m.metadata.subscribed_topic_names;
    if (std::binary_search(names.begin(), names.end(), topic)) return true;
    const auto& regex = m.metadata.subscribed_topic_regex;
    if (regex && !regex->empty() && RE2::FullMatch(topic, RE2(*regex, RE2::Quiet))) return true;
  }
  return false;
}

int64_t ConsumerGroup::SubscriptionHash(
    const std::map<std::string, const ConsumerMemberMetadata*>& subs,
    const TopicCatalog& topics) const {
  std::set<std::string> names;
  for (const auto& [id, m] : subs) {
    std::set<std::string> mine = SubscribedNames(*m, topics);
    names.insert(mine.begin(), mine.end());
  }
  uint64_t h = 14695981039346656037ULL;
  bool any = false;
  for (const std::string& name : names) {
    auto topic = topics.by_name(name);
    if (!topic) continue;
    any = true;
    Mix(h, name.data(), name.size());
    Mix(h, topic->first.data(), topic->first.size());
    Mix(h, &topic->second, sizeof(topic->second));
  }
  return any ? static_cast<int64_t>(h) : 0;
}

int32_t ConsumerGroup::OwnerEpoch(const TopicId& t, int32_t p) const {
  auto it = owners_.find({t, p});
  return it == owners_.end() ? -1 : it->second.second;
}

void ConsumerGroup::Own(const std::string& member_id, const MemberAssignment& a, bool add) {
  for (const TopicAssignment* set : {&a.assigned, &a.pending_revocation}) {
    for (const auto& [t, ps] : *set) {
      for (int32_t p : ps) {
        auto it = owners_.find({t, p});
        if (add) {
          owners_[{t, p}] = {member_id, a.member_epoch};
        } else if (it != owners_.end() && it->second.first == member_id) {
          owners_.erase(it);  // only what this member held: never another's
        }
      }
    }
  }
}

void ConsumerGroup::FenceRecords(const std::string& member_id,
                                 std::vector<ConsumerGroupRecord>& out) const {
  out.push_back(Tombstone(ConsumerRecordType::kCurrentMemberAssignment, group_id_, member_id));
  out.push_back(Tombstone(ConsumerRecordType::kTargetAssignmentMember, group_id_, member_id));
  out.push_back(Tombstone(ConsumerRecordType::kMemberMetadata, group_id_, member_id));
}

std::vector<ConsumerGroupRecord> ConsumerGroup::Fence(const std::vector<std::string>& member_ids,
                                                      const TopicCatalog& topics) const {
  std::vector<ConsumerGroupRecord> out;
  auto subs = Subscriptions();
  for (const std::string& id : member_ids) {
    if (members_.count(id) == 0) continue;
    FenceRecords(id, out);
    subs.erase(id);
  }
  if (out.empty()) return out;
  out.push_back(GroupEpochRecord(group_id_, group_epoch_ + 1, SubscriptionHash(subs, topics)));
  return out;
}

std::vector<ConsumerGroupRecord> ConsumerGroup::DeleteRecords() const {
  std::vector<ConsumerGroupRecord> out;
  for (const auto& [id, m] : members_) {
    out.push_back(Tombstone(ConsumerRecordType::kCurrentMemberAssignment, group_id_, id));
  }
  for (const auto& [id, m] : members_) {
    out.push_back(Tombstone(ConsumerRecordType::kTargetAssignmentMember, group_id_, id));
  }
  out.push_back(Tombstone(ConsumerRecordType::kTargetAssignmentMetadata, group_id_));
  for (const auto& [id, m] : members_) {
    out.push_back(Tombstone(ConsumerRecordType::kMemberMetadata, group_id_, id));
  }
  out.push_back(Tombstone(ConsumerRecordType::kPartitionMetadata, group_id_));
  out.push_back(Tombstone(ConsumerRecordType::kGroupMetadata, group_id_));
  return out;
}

ConsumerGroupChange ConsumerGroup::Leave(const protocol::ConsumerGroupHeartbeatRequest& req,
                                         const TopicCatalog& topics) const {
  ConsumerGroupChange out;
  out.response.member_id = req.member_id;
  const ConsumerGroupMember* m = member(req.member_id);
  if (req.instance_id) {
    auto it = static_members_.find(*req.instance_id);
    if (it == static_members_.end()) {
      out.response.error_code = static_cast<int16_t>(ErrorCode::kUnknownMemberId);
      return out;
    }
    if (it->second != req.member_id) {
      out.response.error_code = static_cast<int16_t>(ErrorCode::kFencedInstanceId);
      return out;
    }
  }
  if (m == nullptr) {
    out.response.error_code = static_cast<int16_t>(ErrorCode::kUnknownMemberId);
    return out;
  }
  if (req.member_epoch == -2) {
    // A static member stepping out: it keeps its partitions (others see
    // them as unreleased) until it rejoins or its session times out.
    MemberAssignment away = m->current;
    away.previous_member_epoch = away.member_epoch;
    away.member_epoch = -2;
    away.pending_revocation.clear();
    out.records.push_back(CurrentAssignmentRecord(group_id_, req.member_id, std::move(away)));
    out.response.member_epoch = -2;
    return out;
  }
  out.records = Fence({req.member_id}, topics);
  out.response.member_epoch = -1;
  return out;
}

ConsumerGroupChange ConsumerGroup::Heartbeat(const protocol::ConsumerGroupHeartbeatRequest& req,
                                             const RequestContext& ctx, const TopicCatalog& topics,
                                             const ConsumerGroupConfig& config) const {
  ConsumerGroupChange out;
  auto& resp = out.response;
  auto fail = [&](ErrorCode e, std::string message) {
    resp.error_code = static_cast<int16_t>(e);
    resp.error_message = std::move(message);
    out.records.clear();
    return out;
  };
  const std::string& id = req.member_id;
  const ConsumerGroupMember* existing = member(id);
  if (!existing && members_.size() >= static_cast<size_t>(config.max_size)) {
    return fail(ErrorCode::kGroupMaxSizeReached,
                fmt::format("The consumer group has reached its maximum capacity of {} members.",
                            config.max_size));
  }
  // The epoch fence: a member may speak at its epoch, or at the previous
  // one if it owns nothing it was not given (its last answer was lost).
  auto fenced = [&](const ConsumerGroupMember& m) {
    const int32_t e = m.current.member_epoch;
    if (req.member_epoch > e) return true;
    if (req.member_epoch < e) {
      return req.member_epoch != m.current.previous_member_epoch || !req.topic_partitions ||
             !IsSubset(FromWire(*req.topic_partitions), m.current.assigned);
    }
    return false;
  };
  ConsumerGroupMember updated{id, {}, {}};
  std::optional<std::string> replaced;  // a static member's old id
  bool reset = false;                   // a known member id joining afresh
  if (req.instance_id) {
    auto it = static_members_.find(*req.instance_id);
    const ConsumerGroupMember* holder = it == static_members_.end() ? nullptr : member(it->second);
    if (req.member_epoch == 0) {
      if (holder != nullptr && holder->current.member_epoch != -2) {
        return fail(ErrorCode::kUnreleasedInstanceId,
                    fmt::format("Static member {} with instance id {} is not released.",
                                holder->member_id, *req.instance_id));
      }
      if (holder != nullptr) {
        // The static member comes back (maybe under a new id): it keeps
        // its partitions and its target.
        updated = *holder;
        updated.member_id = id;
        updated.current.member_epoch = 0;
        updated.current.previous_member_epoch = 0;
        if (holder->member_id != id) replaced = holder->member_id;
      } else if (existing != nullptr) {
        reset = true;
      }
    } else {
      if (holder == nullptr) return fail(ErrorCode::kUnknownMemberId, "");
      if (holder->member_id != id) return fail(ErrorCode::kFencedInstanceId, "");
      if (fenced(*holder)) {
        return fail(ErrorCode::kFencedMemberEpoch,
                    "The consumer group member has a greater member epoch than expected.");
      }
      updated = *holder;
    }
  } else if (existing == nullptr) {
    if (req.member_epoch != 0) {
      return fail(ErrorCode::kUnknownMemberId,
                  fmt::format("Member {} is not a member of group {}.", id, group_id_));
    }
  } else if (req.member_epoch == 0 && fenced(*existing)) {
    // A member that lost everything (fenced, restarted) joins again under
    // its id: it starts over, what it held goes back to the group. (A join
    // repeated because its answer was lost passes the fence: it is simply
    // answered again.)
    reset = true;
  } else {
    if (fenced(*existing)) {
      return fail(ErrorCode::kFencedMemberEpoch,
                  "The consumer group member has a member epoch that does not match.");
    }
    updated = *existing;
  }
  if (reset) updated.metadata = existing->metadata;

  ConsumerMemberMetadata& md = updated.metadata;
  const ConsumerMemberMetadata before = md;
  if (req.instance_id) md.instance_id = req.instance_id;
  if (req.rack_id) md.rack_id = req.rack_id;
  if (req.rebalance_timeout_ms != -1) md.rebalance_timeout_ms = req.rebalance_timeout_ms;
  if (req.server_assignor) md.server_assignor = req.server_assignor;
  bool bump = group_epoch_ == 0 || reset || (existing == nullptr && !replaced);
  if (req.subscribed_topic_names) {
    std::vector<std::string> names = *req.subscribed_topic_names;
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    if (names != md.subscribed_topic_names) bump = true;
    md.subscribed_topic_names = std::move(names);
  }
  if (req.subscribed_topic_regex) {
    // "" takes the expression away.
    std::optional<std::string> regex;
    if (!req.subscribed_topic_regex->empty()) regex = req.subscribed_topic_regex;
    if (regex != md.subscribed_topic_regex) bump = true;
    md.subscribed_topic_regex = std::move(regex);
  }
  md.client_id = ctx.client_id;
  md.client_host = ctx.client_host;

  if (replaced) FenceRecords(*replaced, out.records);
  if (existing == nullptr || replaced || !(md == before) || !(existing->metadata == md)) {
    out.records.push_back(MemberMetadataRecord(group_id_, id, md));
  }
  auto subs = Subscriptions();
  if (replaced) subs.erase(*replaced);
  subs[id] = &md;
  const int64_t hash = SubscriptionHash(subs, topics);
  if (hash != metadata_hash_) bump = true;
  int32_t group_epoch = group_epoch_;
  if (bump) {
    group_epoch = group_epoch_ + 1;
    out.records.push_back(GroupEpochRecord(group_id_, group_epoch, hash));
  }

  // The target: recomputed for everyone when the group moved on.
  const std::string& target_key = replaced ? *replaced : id;
  TopicAssignment target;
  if (auto it = targets_.find(target_key); it != targets_.end()) target = it->second;
  int32_t target_epoch = assignment_epoch_;
  if (group_epoch > assignment_epoch_) {
    AssignmentSpec spec;
    AssignableTopics assignable;
    for (const auto& [mid, m] : subs) {
      AssignmentSpec::Member& sm = spec.members[mid];
      sm.rack = m->rack_id;
      for (const std::string& name : SubscribedNames(*m, topics)) {
        auto topic = topics.by_name(name);
        if (!topic) continue;
        sm.subscribed.insert(topic->first);
        assignable[topic->first] = {name, topic->second};
      }
      const std::string& key = mid == id ? target_key : mid;
      if (auto t = targets_.find(key); t != targets_.end() && !(reset && mid == id))
        sm.current = t->second;
    }
    std::string assignor_name = PreferredAssignor(config);
    if (md.server_assignor && subs.size() == 1) assignor_name = *md.server_assignor;
    auto assignor = MakeServerAssignor(assignor_name);
    if (!assignor) assignor = MakeServerAssignor(kUniformAssignor);
    GroupAssignment next = assignor->Assign(spec, assignable);
    for (auto& [mid, a] : next) {
      auto old = targets_.find(mid);
      if (old == targets_.end() || !(old->second == a) || (mid == id && replaced))
        out.records.push_back(TargetMemberRecord(group_id_, mid, a));
    }
    out.records.push_back(TargetEpochRecord(group_id_, group_epoch));
    target = next[id];
    target_epoch = group_epoch;
  } else if (replaced) {
    out.records.push_back(TargetMemberRecord(group_id_, id, target));
  }

  std::optional<TopicAssignment> owned;
  if (req.topic_partitions) owned = FromWire(*req.topic_partitions);
  const MemberAssignment& start = updated.current;
  MemberAssignment next =
      ReconcileMember(start, target_epoch, target, owned, [&](const TopicId& t, int32_t p) {
        // What this member held before it
        // started over is free for it.
        if (reset) {
          const auto& mine = existing->current;
          for (const auto* s : {&mine.assigned, &mine.pending_revocation}) {
            auto it = s->find(t);
            if (it != s->end() && it->second.count(p)) return -1;
          }
        }
        return OwnerEpoch(t, p);
      });
  if (existing == nullptr || replaced || reset || !(next == start) ||
      !(existing->current == start)) {
    out.records.push_back(CurrentAssignmentRecord(group_id_, id, next));
  }
  resp.member_id = id;
  resp.member_epoch = next.member_epoch;
  resp.heartbeat_interval_ms = config.heartbeat_interval_ms;
  const bool full = req.rebalance_timeout_ms != -1 &&
                    (req.subscribed_topic_names || req.subscribed_topic_regex) &&
                    req.topic_partitions.has_value();
  const TopicAssignment& had = existing && !reset ? existing->current.assigned : start.assigned;
  if (req.member_epoch == 0 || full || !(next.assigned == had)) {
    resp.assignment = ToWire(next.assigned);
  }
  return out;
}

Status ConsumerGroup::Replay(const ConsumerGroupRecord& r) {
  switch (r.type) {
    case ConsumerRecordType::kGroupMetadata:
      if (r.tombstone) {
        exists_ = false;
        group_epoch_ = 0;
        metadata_hash_ = 0;
      } else {
        exists_ = true;
        group_epoch_ = r.group_epoch;
        metadata_hash_ = r.metadata_hash;
      }
      return Status::Ok();
    case ConsumerRecordType::kPartitionMetadata:
      return Status::Ok();
    case ConsumerRecordType::kMemberMetadata: {
      auto it = members_.find(r.member_id);
      if (r.tombstone) {
        if (it == members_.end()) return Status::Ok();
        Own(r.member_id, it->second.current, false);
        if (const auto& inst = it->second.metadata.instance_id) {
          auto s = static_members_.find(*inst);
          if (s != static_members_.end() && s->second == r.member_id) static_members_.erase(s);
        }
        members_.erase(it);
        timers_.erase(r.member_id);
        return Status::Ok();
      }
      ConsumerGroupMember& m = members_[r.member_id];
      m.member_id = r.member_id;
      m.metadata = r.member;
      if (m.metadata.instance_id) static_members_[*m.metadata.instance_id] = r.member_id;
      return Status::Ok();
    }
    case ConsumerRecordType::kTargetAssignmentMetadata:
      assignment_epoch_ = r.tombstone ? -1 : r.assignment_epoch;
      return Status::Ok();
    case ConsumerRecordType::kTargetAssignmentMember:
      if (r.tombstone) {
        targets_.erase(r.member_id);
      } else {
        targets_[r.member_id] = r.target;
      }
      return Status::Ok();
    case ConsumerRecordType::kCurrentMemberAssignment: {
      auto it = members_.find(r.member_id);
      if (it == members_.end()) {
        if (r.tombstone) return Status::Ok();
        // Compaction may leave a member's latest assignment before its
        // latest metadata record: the member is made here, as Kafka does,
        // and its metadata arrives later in the log.
        it = members_.emplace(r.member_id, ConsumerGroupMember{r.member_id, {}, {}}).first;
      }
      Own(r.member_id, it->second.current, false);
      if (r.tombstone) {
        it->second.current = MemberAssignment{-1, -1, MemberState::kStable, {}, {}};
      } else {
        it->second.current = r.current;
        Own(r.member_id, it->second.current, true);
      }
      return Status::Ok();
    }
  }
  return Status::Ok();
}

void ConsumerGroup::ArmTimers(const std::string& member_id, int64_t now_ms,
                              const ConsumerGroupConfig& config) {
  const ConsumerGroupMember* m = member(member_id);
  if (m == nullptr) return;
  Timer& t = timers_[member_id];
  t.session_deadline_ms = now_ms + config.session_timeout_ms;
  if (m->current.state != MemberState::kUnrevokedPartitions) {
    t.rebalance_deadline_ms = INT64_MAX;
    t.revoking_epoch = -1;
  } else if (t.revoking_epoch != m->current.member_epoch) {
    t.revoking_epoch = m->current.member_epoch;
    t.rebalance_deadline_ms = now_ms + std::max(0, m->metadata.rebalance_timeout_ms);
  }
}

std::vector<std::string> ConsumerGroup::Expired(int64_t now_ms) const {
  std::vector<std::string> out;
  for (const auto& [id, t] : timers_) {
    const ConsumerGroupMember* m = member(id);
    if (m == nullptr) continue;
    const bool revoking_too_long = now_ms >= t.rebalance_deadline_ms &&
                                   m->current.state == MemberState::kUnrevokedPartitions &&
                                   m->current.member_epoch == t.revoking_epoch;
    if (now_ms >= t.session_deadline_ms || revoking_too_long) out.push_back(id);
  }
  return out;
}

int64_t ConsumerGroup::NextDeadline() const {
  int64_t next = INT64_MAX;
  for (const auto& [id, t] : timers_) {
    next = std::min(next, t.session_deadline_ms);
    // A rebalance timeout counts only while its revocation is still under
    // way (else a passed one would make the group due on every tick).
    const ConsumerGroupMember* m = member(id);
    if (m != nullptr && m->current.state == MemberState::kUnrevokedPartitions &&
        m->current.member_epoch == t.revoking_epoch) {
      next = std::min(next, t.rebalance_deadline_ms);
    }
  }
  return next;
}

protocol::ConsumerGroupDescribeResponse::Group ConsumerGroup::Describe(
    const TopicCatalog& topics, const ConsumerGroupConfig& config) const {
  using Resp = protocol::ConsumerGroupDescribeResponse;
  auto assignment = [&](const TopicAssignment& a) {
    Resp::Assignment out;
    for (const auto& [t, ps] : a) {
      if (ps.empty()) continue;
      out.topic_partitions.push_back(
          {t, topics.name_of(t).value_or(""), std::vector<int32_t>(ps.begin(), ps.end())});
    }
    return out;
  };
  Resp::Group g;
  g.group_id = group_id_;
  g.group_state = ConsumerGroupStateName(state());
  g.group_epoch = group_epoch_;
  g.assignment_epoch = assignment_epoch_;
  g.assignor_name = PreferredAssignor(config);
  for (const auto& [id, m] : members_) {
    Resp::Member out;
    out.member_id = id;
    out.instance_id = m.metadata.instance_id;
    out.rack_id = m.metadata.rack_id;
    out.member_epoch = m.current.member_epoch;
    out.client_id = m.metadata.client_id;
    out.client_host = m.metadata.client_host;
    out.subscribed_topic_names = m.metadata.subscribed_topic_names;
    out.subscribed_topic_regex = m.metadata.subscribed_topic_regex;
    out.assignment = assignment(m.current.assigned);
    auto t = targets_.find(id);
    if (t != targets_.end()) out.target_assignment = assignment(t->second);
    out.member_type = Resp::kConsumerMember;
    g.members.push_back(std::move(out));
  }
  return g;
}

}  // namespace strata::coordinator
