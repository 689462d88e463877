/// Why a credential (an access token, a sign-up challenge solution) was refused: a code callers switch on,
/// and a short message safe to return to the client, which never contains the credential or any part of it.
/// Each kind of credential has its own `Code` (``TokenErrorCode``, ``ChallengeErrorCode``); new codes can be
/// added without breaking callers that switch on the ones they map.
public struct Refusal<RefusalCode: Hashable & Sendable & CustomStringConvertible>: Error, Sendable, Equatable,
    CustomStringConvertible {
    /// `TokenError.Code`, `ChallengeError.Code`.
    public typealias Code = RefusalCode

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
