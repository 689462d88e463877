import FuzzHarness

// The target's checks live in Sources/FuzzHarness/Targets/FuzzPlacesFile.swift, where the replay test runs them too.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEntry(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    FuzzTarget.placesFile.run(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}
