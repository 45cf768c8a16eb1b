#include "ledger/instance_registry.h"

namespace keel {

void InstanceRegistry::Register(const InstanceInfo& self) {
  const int64_t now = db_.ClockMs();
  Statement upsert = db_.Prepare(
      "INSERT INTO keel_instances(owner, host, pid, boot_id, started_ms, heartbeat_ms) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?5) ON CONFLICT(owner) DO UPDATE SET "
      "heartbeat_ms = excluded.heartbeat_ms");
  upsert.Bind(1, self.owner).Bind(2, self.host).Bind(3, self.pid).Bind(4, self.boot_id);
  upsert.Bind(5, now).Run();
}

void InstanceRegistry::Heartbeat(const InstanceInfo& self) {
  Statement beat = db_.Prepare(
      "UPDATE keel_instances SET heartbeat_ms = "
      "(extract(epoch FROM clock_timestamp()) * 1000)::bigint WHERE owner = ?1");
  beat.Bind(1, self.owner).Run();
  if (db_.Changes() == 0) Register(self);
}

void InstanceRegistry::Deregister(const std::string& owner) {
  db_.Prepare("DELETE FROM keel_instances WHERE owner = ?1").Bind(1, owner).Run();
}

bool InstanceRegistry::Gone(const std::string& owner, int64_t gone_after_ms) {
  Statement age = db_.Prepare(
      "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint - heartbeat_ms "
      "FROM keel_instances WHERE owner = ?1");
  age.Bind(1, owner);
  if (!age.Step()) return true;
  return age.Int64(0) > gone_after_ms;
}

std::vector<InstanceInfo> InstanceRegistry::List() {
  std::vector<InstanceInfo> out;
  Statement rows = db_.Prepare(
      "SELECT owner, host, pid, boot_id, started_ms, heartbeat_ms FROM keel_instances "
      "ORDER BY started_ms, owner");
  while (rows.Step()) {
    InstanceInfo info;
    info.owner = rows.Text(0);
    info.host = rows.Text(1);
    info.pid = rows.Int64(2);
    info.boot_id = rows.Text(3);
    info.started_ms = rows.Int64(4);
    info.heartbeat_ms = rows.Int64(5);
    out.push_back(std::move(info));
  }
  return out;
}

size_t InstanceRegistry::Prune(int64_t older_than_ms) {
  Statement prune = db_.Prepare(
      "DELETE FROM keel_instances WHERE heartbeat_ms < "
      "(extract(epoch FROM clock_timestamp()) * 1000)::bigint - ?1");
  prune.Bind(1, older_than_ms).Run();
  return static_cast<size_t>(db_.Changes());
}

}  // namespace keel
