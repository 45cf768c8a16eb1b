// SseReader: the text/event-stream framing of an HTTP upstream's response (`keel wrap
// --upstream-url`; WHATWG HTML "Server-sent events" §9.2.6, as MCP's Streamable HTTP uses
// it): bytes in, in chunks of any size; each event's data out. Pure: no I/O, no threads;
// one owner (HttpUpstream's transfer, on its thread).
//
// Rules:
//  1. Lines end with "\r\n", "\n" or "\r" (a pair split between two chunks is one end).
//     A "\xEF\xBB\xBF" (BOM) at the very start of the stream is skipped.
//  2. "data:" lines are joined with "\n" (one space after the colon is dropped); a blank
//     line ends the event and hands its data to on_event, unless it has none. Comments
//     (":..."), "event:", "id:", "retry:" and any other field are ignored: MCP's messages
//     are the data, keel does not resume streams.
//  3. Bounded: an event whose data plus the line being read pass max_event_bytes is dropped
//     (on_oversize, once per event, with the bytes seen) and skipped to its blank line
//     without being buffered; the event after it is read normally.
//  4. Finish() at the end of the stream: an event whose last line ended but no blank line
//     followed is still handed out (a server that closes right after its last data line
//     loses nothing); a line cut off mid-way is dropped (half a message) and counted in
//     the return value.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace keel {

class SseReader {
 public:
  using EventFn = std::function<void(std::string_view data)>;
  using OversizeFn = std::function<void(size_t bytes)>;

  SseReader(size_t max_event_bytes, EventFn on_event, OversizeFn on_oversize);

  void Feed(std::string_view bytes);
  // Rule 4: the bytes of a cut-off last line (0: the stream ended cleanly).
  size_t Finish();

 private:
  void EndLine();
  void Dispatch();
  void Append(std::string_view bytes);

  const size_t max_event_bytes_;
  EventFn on_event_;
  OversizeFn on_oversize_;
  std::string line_;        // the line being read (not while skipping)
  std::string data_;        // the event's data so far, each line followed by "\n"
  size_t line_length_ = 0;  // bytes of the current line, buffered or not
  size_t skipped_ = 0;      // rule 3: bytes of the event being skipped; 0: not skipping
  bool after_cr_ = false;   // the last byte was "\r": a "\n" next is the same line end
  bool bom_checked_ = false;
  std::string bom_prefix_;  // the first bytes while the BOM is not ruled out
};

}  // namespace keel
