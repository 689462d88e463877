import Glibc

/// The texts of one libpq call (a statement name or SQL, then its parameters) as NUL-terminated copies
/// in one buffer, so a call costs two allocations however many parameters it has.
///
/// A text with a NUL byte cannot travel as a C string (libpq would cut it short there): `containsNUL`
/// says so before anything is sent.
struct CTexts {
    private var bytes: [CChar] = []
    /// Where each text starts in `bytes`; -1 for nil (SQL NULL).
    private var starts: [Int] = []
    private(set) var containsNUL = false

    /// `first` (a statement name or SQL text), then `rest` (the SQL or the parameters).
    init(_ first: String, _ rest: [String?]) {
        var size = first.utf8.count + 1
        for text in rest { size += (text?.utf8.count ?? 0) + 1 }
        bytes.reserveCapacity(size)
        starts.reserveCapacity(rest.count + 1)
        append(first)
        for text in rest { append(text) }
    }

    var count: Int { starts.count }

    private mutating func append(_ text: String?) {
        guard var text else {
            starts.append(-1)
            return
        }
        starts.append(bytes.count)
        text.withUTF8 { utf8 in
            if !containsNUL, let base = utf8.baseAddress, memchr(base, 0, utf8.count) != nil { containsNUL = true }
            utf8.withMemoryRebound(to: CChar.self) { bytes.append(contentsOf: $0) }
        }
        bytes.append(0)
    }

    /// Calls `body` with a C string pointer for each text (NULL for nil), valid during the call.
    func withPointers<R>(_ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        bytes.withUnsafeBufferPointer { buffer in
            let base = buffer.baseAddress!
            return body(starts.map { $0 < 0 ? nil : base + $0 })
        }
    }
}
