import AttestationPKI
import Testing

/// The strict DER reader: what DER allows reads, what only BER allows is refused.
@Suite struct DERReaderTests {
    func element(_ bytes: [UInt8]) throws -> DERElement { try DERReader.single(bytes) }

    @Test func readsMinimalIntegersOfEitherSign() throws {
        #expect(try element([0x02, 0x01, 0x00]).int64() == 0)
        #expect(try element([0x02, 0x01, 0x7f]).int64() == 127)
        #expect(try element([0x02, 0x02, 0x00, 0x80]).int64() == 128)
        #expect(try element([0x02, 0x01, 0xff]).int64() == -1)
        #expect(try element([0x02, 0x02, 0xff, 0x7f]).int64() == -129)
        #expect(try element([0x0a, 0x01, 0x02]).int64() == 2) // ENUMERATED
    }

    @Test func refusesIntegersThatAreNotInTheirShortestForm() throws {
        #expect(throws: DERError.self) { try element([0x02, 0x02, 0x00, 0x01]).int64() }
        #expect(throws: DERError.self) { try element([0x02, 0x02, 0xff, 0x80]).int64() }
        #expect(throws: DERError.self) { try element([0x02, 0x00]).int64() }
        #expect(throws: DERError.self) { try element([0x02, 0x09, 0x01, 0, 0, 0, 0, 0, 0, 0, 0]).int64() }
    }

    @Test func aBooleanIsZeroOrAllOnes() throws {
        #expect(try element([0x01, 0x01, 0x00]).boolean() == false)
        #expect(try element([0x01, 0x01, 0xff]).boolean() == true)
        #expect(throws: DERError.self) { try element([0x01, 0x01, 0x01]).boolean() }
        #expect(throws: DERError.self) { try element([0x01, 0x02, 0xff, 0xff]).boolean() }
    }

    @Test func lengthsAreDefiniteAndShortest() throws {
        #expect(throws: DERError.self) { try element([0x04, 0x80, 0x00, 0x00]) }          // indefinite
        #expect(throws: DERError.self) { try element([0x04, 0x81, 0x05, 1, 2, 3, 4, 5]) } // long form for 5
        #expect(throws: DERError.self) { try element([0x04, 0x82, 0x00, 0x81] + [UInt8](repeating: 0, count: 0x81) ) }
        let long = [0x04, 0x81, 0x80] + [UInt8](repeating: 7, count: 0x80)
        #expect(try element(long).octets().count == 0x80)
        #expect(throws: DERError.self) { try element([0x04, 0x05, 1, 2]) }                // runs past the end
        #expect(throws: DERError.self) { try element([0x04, 0x01, 1, 0x00]) }             // trailing byte
    }

    @Test func highTagNumbersReadInTheirShortestForm() throws {
        // [709] EXPLICIT { NULL }: 0xbf 0x85 0x45.
        let tagged = try element([0xbf, 0x85, 0x45, 0x02, 0x05, 0x00])
        #expect(tagged.tag == .explicit(709))
        try tagged.explicitInner().null()
        #expect(throws: DERError.self) { try element([0xbf, 0x80, 0x85, 0x45, 0x00]) } // leading 0x80
        #expect(throws: DERError.self) { try element([0xbf, 0x1e, 0x00]) }             // 30 in the long form
    }

    @Test func objectIdentifiersReadAsDottedText() throws {
        // 1.3.6.1.4.1.11129.2.1.17, the KeyDescription extension.
        let oid = try element([0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01, 0xd6, 0x79, 0x02, 0x01, 0x11])
        #expect(try oid.objectIdentifier() == "1.3.6.1.4.1.11129.2.1.17")
        #expect(throws: DERError.self) { try element([0x06, 0x02, 0x2b, 0x86]).objectIdentifier() }
    }

    @Test func aSequenceIsReadElementByElement() throws {
        let sequence = try element([0x30, 0x06, 0x02, 0x01, 0x05, 0x04, 0x01, 0xaa])
        var fields = try sequence.reader()
        #expect(try fields.read(.integer).int64() == 5)
        #expect(fields.peekTag() == .octetString)
        #expect(try fields.readIfPresent(.boolean) == nil)
        #expect(try fields.read(.octetString).octets() == [0xaa])
        try fields.finish()
        #expect(throws: DERError.self) { try element([0x04, 0x00]).reader() } // primitive
    }
}
