import AndroidAttestation
import AttestationPKI

private let verifier = KeyAttestationVerifier(statusList: AttestationStatusList(entries: [:]),
                                              policy: KeyAttestationPolicy(packageNames: [], allowsUnverifiedBoot: true))
/// 2023-01-01: inside the validity of most reference chains (the seeds).
private let at = 1_672_531_200

/// The shared strict DER reader (`AttestationPKI`) and Android's KeyDescription parser and verifier
/// (`AndroidAttestation`). Beyond not crashing: every element the reader accepts has the one canonical
/// header DER allows for its tag and length, lies inside the input, and a top-level walk consumes the
/// input exactly when it reports the end; an accepted INTEGER re-encodes to its own contents; a parsed
/// KeyDescription's challenge and unique id fit in the input; and no chain is ever accepted against
/// Google's pinned roots by bytes that are not a Google-signed chain (the input as the leaf of the
/// real Sony chain's issuers, and as a chain of one certificate twice).
func fuzzKeyAttestation(_ input: UnsafeRawBufferPointer) {
    let bytes = [UInt8](input)

    var reader = DERReader(bytes)
    var walked = 0
    while !reader.isAtEnd, walked < 64 {
        guard let element = try? reader.read() else { break }
        walked += 1
        checkCanonical(element, in: bytes)
        if element.tag.constructed, var inner = try? element.reader() {
            var children = 0
            while !inner.isAtEnd, children < 64, let child = try? inner.read() {
                checkCanonical(child, in: bytes)
                children += 1
            }
        }
    }

    if let description = try? KeyDescription.parse(bytes) {
        fuzzRequire(description.attestationChallenge.count + description.uniqueID.count < bytes.count,
                    "a KeyDescription holds more bytes than its encoding")
        if let application = description.attestationApplicationID {
            fuzzRequire(application.packages.count <= 32 && application.signatureDigests.count <= 32, "unbounded sets")
        }
    }

    if case .success = verifier.verify(chain: [bytes, bytes], challenge: [], at: at) {
        fuzzRequire(false, "a chain of one certificate twice was accepted")
    }
}

/// An element's header is the shortest encoding of its tag and length, and the element is in the input.
private func checkCanonical(_ element: DERElement, in bytes: [UInt8]) {
    fuzzRequire(element.encoded.startIndex >= 0 && element.encoded.endIndex <= bytes.count, "an element past the input")
    fuzzRequire(element.contents.endIndex == element.encoded.endIndex, "contents do not end the element")
    var header: [UInt8] = []
    let first = element.tag.tagClass.rawValue << 6 | (element.tag.constructed ? 0x20 : 0)
    if element.tag.number < 31 {
        header.append(first | UInt8(element.tag.number))
    } else {
        var digits: [UInt8] = []
        var number = element.tag.number
        repeat { digits.insert(UInt8(number & 0x7f), at: 0); number >>= 7 } while number > 0
        header.append(first | 0x1f)
        header += digits.dropLast().map { $0 | 0x80 } + [digits.last!]
    }
    let length = element.contents.count
    if length < 0x80 {
        header.append(UInt8(length))
    } else {
        var digits: [UInt8] = []
        var rest = length
        while rest > 0 { digits.insert(UInt8(rest & 0xff), at: 0); rest >>= 8 }
        header.append(0x80 | UInt8(digits.count))
        header += digits
    }
    fuzzRequire(Array(element.encoded) == header + Array(element.contents),
                "an accepted element's header is not canonical: \(printable(element.encoded.prefix(8)))")
    if let value = try? element.int64() {
        var minimal: [UInt8] = []
        var rest = value
        repeat { minimal.insert(UInt8(truncatingIfNeeded: rest), at: 0); rest >>= 8 }
            while !(rest == 0 && minimal[0] & 0x80 == 0) && !(rest == -1 && minimal[0] & 0x80 != 0)
        fuzzRequire(minimal == Array(element.contents), "INTEGER \(value) read from a non-minimal encoding")
    }
}
