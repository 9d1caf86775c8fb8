// tools/profiler/kernel_profiler.hpp -- tt-metal's device profiler markers as trace zones.
//
// tt-metal kernels (and every kernel the TT-Lang compiler emits) include this header;
// `DeviceZoneScopedN("name")` opens a zone that closes at the end of its scope, and
// tt-metal's device profiler records its start and end cycles.  On Tilewright a zone is
// a span named "zone <name>" on the kernel's track of the trace (`tilewright run --trace`),
// timed by the kernel's modelled clock; `DeviceTimestampedData` and `DeviceRecordEvent`
// are instant events carrying their value.  With no trace the markers cost one request
// to the engine each and record nothing.
//
// Names are string literals (tt-metal hashes them at compile time; a pointer to a
// literal lives as long as the kernel).
#pragma once

#include <cstdint>
#include <exception>

#include "tilewright/bridge.h"

namespace kernel_profiler {

/** Request phases of the "zone" request (tilewright/native/requests.py). */
enum : int64_t { TW_ZONE_BEGIN = 0, TW_ZONE_END = 1, TW_ZONE_DATA = 2, TW_ZONE_EVENT = 3 };

/** One open zone: begun at construction, ended at the end of its scope. */
class ZoneScope {
public:
    ZoneScope(const char* name, tw::Loc loc)
        : name_(name), loc_(loc), start_(tw::call_at(loc, "zone", TW_ZONE_BEGIN, 0, 0)) {}
    ~ZoneScope() {
        // A kernel error unwinding through the scope ends the run: record nothing more.
        if (std::uncaught_exceptions() == 0)
            tw::call_at(loc_, "zone", TW_ZONE_END, reinterpret_cast<intptr_t>(name_), start_);
    }
    ZoneScope(const ZoneScope&) = delete;
    ZoneScope& operator=(const ZoneScope&) = delete;

private:
    const char* name_;
    tw::Loc loc_;
    int64_t start_;  // the kernel's clock when the zone opened
};

inline void timestamped_data(const char* name, uint64_t data, tw::Loc loc) {
    tw::call_at(loc, "zone", TW_ZONE_DATA, reinterpret_cast<intptr_t>(name), static_cast<int64_t>(data));
}

inline void record_event(uint32_t event_id, tw::Loc loc) {
    tw::call_at(loc, "zone", TW_ZONE_EVENT, 0, static_cast<int64_t>(event_id));
}

}  // namespace kernel_profiler

#define TW_PROFILER_CAT2(a, b) a##b
#define TW_PROFILER_CAT(a, b) TW_PROFILER_CAT2(a, b)

#define DeviceZoneScopedN(name) \
    ::kernel_profiler::ZoneScope TW_PROFILER_CAT(tw_zone_, __LINE__)(name, TW_HERE)
// The firmware's main / child zones and the summing zones are zones here too.
#define DeviceZoneScopedMainN(name) DeviceZoneScopedN(name)
#define DeviceZoneScopedMainChildN(name) DeviceZoneScopedN(name)
#define DeviceZoneScopedSumN1(name) DeviceZoneScopedN(name)
#define DeviceZoneScopedSumN2(name) DeviceZoneScopedN(name)
#define DeviceTimestampedData(name, data) ::kernel_profiler::timestamped_data(name, data, TW_HERE)
#define DeviceRecordEvent(event_id) ::kernel_profiler::record_event(event_id, TW_HERE)
// Profiler bookkeeping with nothing to record on a virtual device.
#define DeviceZoneSetCounter(counter) static_cast<void>(counter)
#define DeviceValidateProfiler(condition) static_cast<void>(condition)
#define DeviceProfilerInit()
