// The idempotency key of a call (IDEM-1, OPS-3): where a client puts it, what makes it
// invalid, and how an approval scopes it. Pure: reads the request, no I/O.
//
// A call's key is computed once, at admission, into its CallIdentity (call_identity.h);
// tools read it from there. Only the paths that run without a live call (task recovery,
// Tool::Reconcile) compute it from stored arguments and _meta — with CallKey, the same
// function admission uses.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace keel {

using Json = nlohmann::json;

// The idempotency key of a call: `_meta["dev.keel/idempotency-key"]` of the request, else
// an `idempotencyKey` argument. Empty when there is none. Sets *problem for a key that is
// not a string of 1..255 characters, or two different keys.
std::string IdempotencyKey(const Json& meta, const Json& arguments, std::string* problem);
// OPS-3: an approval authorises one intent, so a call's `approval_id` argument is part of its
// key: "<key>|approval:<id>", or "approval:<id>" when the call has no key of its own (then the
// approval id alone makes the call run once). Without an approval_id, `key` unchanged.
std::string ApprovalScopedKey(std::string key, const Json& arguments);

// The key a call runs under: ApprovalScopedKey(IdempotencyKey(...)). `problem` is non-empty
// when the key the client gave is invalid (the call is then refused as invalid_arguments by
// whoever needs the key); `key` may still hold the approval scope alone.
struct CallKey {
  std::string key;      // empty: none
  std::string problem;  // empty: the client's key (if any) is valid
};
CallKey CallKeyOf(const Json& meta, const Json& arguments);

}  // namespace keel
