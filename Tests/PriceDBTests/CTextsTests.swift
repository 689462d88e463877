import Testing
@testable import PriceDB

/// The C strings handed to libpq: one buffer, one pointer per text, NULL for SQL NULL.
@Suite struct CTextsTests {
    private func strings(_ texts: CTexts) -> [String?] {
        texts.withPointers { pointers in pointers.map { $0.map { String(cString: $0) } } }
    }

    @Test func everyTextComesBackAsItWentInWithNilAsNull() {
        let texts = CTexts("pricesvc_insert", ["authenticated", nil, "", "zürich ☕", String(repeating: "x", count: 5000)])
        #expect(texts.count == 6)
        #expect(strings(texts) == ["pricesvc_insert", "authenticated", nil, "", "zürich ☕", String(repeating: "x", count: 5000)])
        #expect(!texts.containsNUL)
    }

    @Test func aStatementWithoutParametersIsOnePointer() {
        let texts = CTexts("select 1", [])
        #expect(strings(texts) == ["select 1"])
    }

    @Test(arguments: [0, 1, 2])
    func aNULByteAnywhereIsReported(position: Int) {
        var parts: [String?] = ["a", "b"]
        if position == 0 {
            #expect(CTexts("sel\u{0}ect", parts).containsNUL)
        } else {
            parts[position - 1] = "tok\u{0}en"
            #expect(CTexts("select", parts).containsNUL)
        }
    }

    @Test func pointersAreDistinctAndEachTextIsTerminated() {
        let texts = CTexts("ab", ["c", "de"])
        texts.withPointers { pointers in
            let addresses = pointers.map { Int(bitPattern: $0) }
            #expect(Set(addresses).count == 3)
            #expect(addresses[1] - addresses[0] == 3, "\"ab\" and its NUL")
            #expect(addresses[2] - addresses[1] == 2, "\"c\" and its NUL")
        }
    }
}
