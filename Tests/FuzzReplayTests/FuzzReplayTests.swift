import Foundation
import FuzzHarness
import Testing

/// Every input committed under Fuzz/ (the seeds in Corpus/<Target>, every crash ever found in
/// FailCases/<Target>) runs once through its target's checks, as libFuzzer's `-runs=0` replay would, but in
/// the ordinary test build: a fixed crash stays fixed on every `make test`, with no sanitizer build. Timed
/// searching is `make fuzz`'s (scripts/dev/fuzz.sh). A broken invariant aborts the test process, and its
/// message names the file (`FuzzInput.label`).
@Suite(.serialized) struct FuzzReplayTests {
    static let fuzz = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz")

    /// "<Target>/<file>" lines of FailCases/known-unfixed.txt: crashes committed before their fix.
    static func knownUnfixed() throws -> Set<String> {
        let text = try String(contentsOf: fuzz.appendingPathComponent("FailCases/known-unfixed.txt"), encoding: .utf8)
        return Set(text.split(separator: "\n").compactMap { line in
            let entry = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
                .trimmingCharacters(in: .whitespaces)
            return entry.isEmpty ? nil : entry
        })
    }

    /// The committed inputs of one folder, sorted, without READMEs.
    static func inputs(_ folder: String, of target: FuzzTarget) -> [URL] {
        let directory = fuzz.appendingPathComponent("\(folder)/\(target.rawValue)")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { !$0.hasPrefix("README") && !$0.hasSuffix(".md") && !$0.hasPrefix(".") }
            .sorted().map { directory.appendingPathComponent($0) }
    }

    static func replay(_ files: [URL], through target: FuzzTarget) throws {
        for file in files {
            let data = try Data(contentsOf: file)
            FuzzInput.label = "\(file.deletingLastPathComponent().lastPathComponent)/\(file.lastPathComponent)"
            // Whole, even past scripts/dev/fuzz.sh's -max_len: a check holds for every input.
            data.withUnsafeBytes { target.run($0) }
        }
        FuzzInput.label = nil
    }

    @Test(arguments: FuzzTarget.allCases)
    func everySeedOfTheCorpusPassesItsTargetsChecks(_ target: FuzzTarget) throws {
        let seeds = Self.inputs("Corpus", of: target)
        #expect(seeds.count >= 3, "Fuzz/Corpus/\(target.rawValue) holds \(seeds.count) seeds")
        try Self.replay(seeds, through: target)
    }

    @Test(arguments: FuzzTarget.allCases)
    func everyCrashEverFoundStaysFixed(_ target: FuzzTarget) throws {
        let unfixed = try Self.knownUnfixed()
        let cases = Self.inputs("FailCases", of: target)
            .filter { !unfixed.contains("\(target.rawValue)/\($0.lastPathComponent)") }
        try Self.replay(cases, through: target)
    }

    @Test func everyFolderUnderFuzzBelongsToATarget() throws {
        let names = Set(FuzzTarget.allCases.map(\.rawValue))
        for folder in ["Corpus", "FailCases"] {
            let entries = try FileManager.default.contentsOfDirectory(atPath: Self.fuzz.appendingPathComponent(folder).path)
            for entry in entries where !entry.hasSuffix(".txt") && !entry.hasSuffix(".md") {
                #expect(names.contains(entry), "Fuzz/\(folder)/\(entry) is no target's: it would never be replayed")
            }
        }
        let sources = try FileManager.default.contentsOfDirectory(atPath: Self.fuzz.appendingPathComponent("Sources").path)
        #expect(Set(sources) == names, "Fuzz/Sources and FuzzTarget list different targets")
    }
}
