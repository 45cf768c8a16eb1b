#include "protocol/duplicate_keys.h"

#include <utility>

namespace keel {

bool DuplicateKeyFinder::operator()(int, nlohmann::json::parse_event_t event,
                                    nlohmann::json& parsed) {
  using Event = nlohmann::json::parse_event_t;
  switch (event) {
    case Event::object_start:
    case Event::array_start: {
      Frame frame;
      frame.path = TakeChildPath();
      frame.is_array = event == Event::array_start;
      frames_.push_back(std::move(frame));
      break;
    }
    case Event::object_end:
    case Event::array_end:
      frames_.pop_back();
      break;
    case Event::key: {
      Frame& frame = frames_.back();
      frame.key = parsed.get<std::string>();
      if (!frame.keys.insert(frame.key).second) {
        problems_.push_back(TakeChildPath() +
                            ": appears more than once in its object; write it once");
      }
      break;
    }
    case Event::value:
      // A scalar (objects and arrays have their own events): it takes an array's index.
      if (!frames_.empty() && frames_.back().is_array) ++frames_.back().next_index;
      break;
  }
  return true;
}

std::string DuplicateKeyFinder::TakeChildPath() {
  if (frames_.empty()) return std::string();
  Frame& parent = frames_.back();
  if (parent.is_array) return parent.path + "[" + std::to_string(parent.next_index++) + "]";
  return parent.path.empty() ? parent.key : parent.path + "." + parent.key;
}

}  // namespace keel
