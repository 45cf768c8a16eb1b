// The simulated deployment backend (FLT-1..4): the seed's inspect-then-restart
// journey against a "deployment API" whose state lives in keel's database (tables
// deploy_jobs and deploy_operations, schema migration 4), with fault injection (FaultPlan).
//   get_deployment_job {job_id}                  read: the job's state, version, restarts
//   restart_deployment_job {job_id, environment, intent_id, approval_id}
//       write: one restart operation per idempotency key, the key made of intent, job,
//       environment and approval (the backend's own guarantee: a repeat returns the same
//       operation id, marked replayed)
//   lookup_deployment_operation {idempotency_key} read: the operation under a key, if any
// Each call is a request to the backend: it waits the injected latency (within the
// attempt's deadline: past it the attempt fails with attempt_timeout, ambiguous), meets the
// injected 503, or is carried out and then loses its response (lost_response, ambiguous).
// Errors follow failure_classify.h. Jobs seeded: web-api and worker (production),
// billing-sync (staging). A restarted job reads "restarting" for 2 s, then "running".
//
// Thread-safety: Call() runs on workers; each uses its thread's connection (LedgerService).
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "server/catalog/tool.h"
#include "server/durable/ledger_service.h"
#include "server/tools/fault_plan.h"

namespace keel {

// The names of the simulated backend's tools (what --fault may name).
std::set<std::string> DeploymentToolNames();

std::vector<std::unique_ptr<Tool>> MakeDeploymentTools(std::shared_ptr<LedgerService> ledger,
                                                       std::shared_ptr<FaultPlan> faults);

// The backend's idempotency key of a restart: "restart:<job>:<environment>:<intent>:<approval>".
std::string RestartKey(const std::string& job_id, const std::string& environment,
                       const std::string& intent_id, const std::string& approval_id);

}  // namespace keel
