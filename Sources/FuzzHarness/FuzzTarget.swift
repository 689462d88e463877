/// Every libFuzzer target, by the name of its executable in Fuzz/ and of its folders in Fuzz/Corpus and
/// Fuzz/FailCases. The executables are one-line shims over `run`; the replay test (Tests/FuzzReplayTests)
/// runs every committed input through the same `run` in the ordinary test build, so `make test` needs no
/// sanitizer build, and `make fuzz` searches with the very code the replay checks.
public enum FuzzTarget: String, CaseIterable, Sendable {
    case json = "FuzzJSON"
    case readOptions = "FuzzReadOptions"
    case token = "FuzzToken"
    case time = "FuzzTime"
    case curbFeed = "FuzzCurbFeed"
    case placesFile = "FuzzPlacesFile"
    case requestHead = "FuzzRequestHead"
    case requestFraming = "FuzzRequestFraming"
    case attestation = "FuzzAttestation"
    case keyAttestation = "FuzzKeyAttestation"

    /// One input. A broken invariant aborts (`fuzzRequire`), which libFuzzer saves as a crash.
    public func run(_ input: UnsafeRawBufferPointer) {
        switch self {
        case .json: fuzzJSON(input)
        case .readOptions: fuzzReadOptions(input)
        case .token: fuzzToken(input)
        case .time: fuzzTime(input)
        case .curbFeed: fuzzCurbFeed(input)
        case .placesFile: fuzzPlacesFile(input)
        case .requestHead: fuzzRequestHead(input)
        case .requestFraming: fuzzRequestFraming(input)
        case .attestation: fuzzAttestation(input)
        case .keyAttestation: fuzzKeyAttestation(input)
        }
    }
}
