/// Accumulates an upload that libmicrohttpd hands over in pieces, enforcing the size limit
/// without buffering past it: the excess is dropped and the request is answered with 413.
public struct RequestBody: Sendable, Equatable {
    public let limit: Int
    public private(set) var bytes: [UInt8] = []
    public private(set) var isTooLarge = false

    public init(limit: Int, declaredLength: Int? = nil) {
        self.limit = limit
        if let declared = declaredLength, declared > limit { isTooLarge = true }
    }

    public mutating func append(_ chunk: UnsafeRawBufferPointer) {
        guard !isTooLarge else { return }
        if bytes.count + chunk.count > limit {
            isTooLarge = true
            bytes = []
            return
        }
        bytes.append(contentsOf: chunk)
    }

    public mutating func append(_ chunk: [UInt8]) {
        chunk.withUnsafeBytes { append($0) }
    }
}
