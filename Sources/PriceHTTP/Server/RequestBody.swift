/// Accumulates an upload that libmicrohttpd hands over in pieces, enforcing the size limit
/// without buffering past it: the excess is dropped and the request is answered with 413.
///
/// A body without a declared length (chunked) is only known to be too large mid-upload. Answering
/// then makes libmicrohttpd close a socket with unread data, and the client sees a reset instead
/// of the 413; so up to `drainLimit` further bytes are read and dropped, and the 413 is sent when
/// the upload ends. Past that, the connection is answered and closed at once.
struct RequestBody: Sendable, Equatable {
    let limit: Int
    let drainLimit: Int
    private(set) var bytes: [UInt8] = []
    private(set) var isTooLarge = false
    private(set) var discardedBytes = 0

    init(limit: Int, declaredLength: Int? = nil, drainLimit: Int = 1 << 20) {
        self.limit = limit
        self.drainLimit = drainLimit
        if let declared = declaredLength, declared > limit { isTooLarge = true }
    }

    /// Too large and too much already drained: answer now rather than read on.
    var mustAnswerNow: Bool { isTooLarge && discardedBytes > drainLimit }

    mutating func append(_ chunk: UnsafeRawBufferPointer) {
        guard !isTooLarge else {
            discardedBytes += chunk.count
            return
        }
        if bytes.count + chunk.count > limit {
            isTooLarge = true
            discardedBytes = bytes.count + chunk.count
            bytes = []
            return
        }
        bytes.append(contentsOf: chunk)
    }

    mutating func append(_ chunk: [UInt8]) {
        chunk.withUnsafeBytes { append($0) }
    }
}
