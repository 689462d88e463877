#if canImport(Glibc)
import Glibc
#endif

/// An invariant of a fuzz target. A broken one is a crash to libFuzzer (it saves the input as an
/// artifact), with the message saying which promise broke and for what.
public func fuzzRequire(_ condition: Bool, _ message: @autoclosure () -> String,
                        file: StaticString = #fileID, line: UInt = #line) {
    guard !condition else { return }
    let input = FuzzInput.label.map { " (input \($0))" } ?? ""
    let text = "fuzz invariant broken at \(file):\(line)\(input): \(message())\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
    abort()
}

/// What the replay test is running, so that a broken invariant names the committed file that broke it
/// (libFuzzer names its own artifacts). Set from one thread only, before each input.
public enum FuzzInput {
    nonisolated(unsafe) public static var label: String?
}

/// Bytes as printable text for a message: ASCII as is, the rest as \xNN; at most `limit` bytes.
public func printable(_ bytes: some Sequence<UInt8>, limit: Int = 200) -> String {
    var out = ""
    for (index, byte) in bytes.enumerated() {
        if index == limit { out += "…"; break }
        if byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") {
            out.unicodeScalars.append(Unicode.Scalar(byte))
        } else {
            let hex = String(byte, radix: 16)
            out += "\\x" + (hex.count == 1 ? "0" + hex : hex)
        }
    }
    return out
}

public func printable(_ text: String, limit: Int = 200) -> String { printable(text.utf8, limit: limit) }
