import Testing
import PriceJSON

@Suite struct JSONNumberConversions {
    private func number(_ literal: String) -> JSONNumber {
        JSONNumber(literal: literal)!
    }

    @Test func integerLiteralsConvertExactly() {
        #expect(number("0").asInt64 == 0)
        #expect(number("-0").asInt64 == 0)
        #expect(number("1250").asInt64 == 1250)
        #expect(number("-42").asInt64 == -42)
        #expect(number("9223372036854775807").asInt64 == .max)
        #expect(number("-9223372036854775808").asInt64 == .min)
    }

    @Test func fractionsExponentsAndOutOfRangeValuesAreNotIntegers() {
        #expect(number("12.5").asInt64 == nil)
        #expect(number("12.0").asInt64 == nil)
        #expect(number("1e3").asInt64 == nil)
        #expect(number("9223372036854775808").asInt64 == nil)
        #expect(number("-9223372036854775809").asInt64 == nil)
        #expect(number("1e400").asInt64 == nil)
    }

    @Test func doublesAreNilBeyondTheirRange() {
        #expect(number("12.5").asDouble == 12.5)
        #expect(number("1e3").asDouble == 1000)
        #expect(number("1e400").asDouble == nil)
        #expect(number("-1e400").asDouble == nil)
    }

    @Test func literalInitializerAcceptsOnlyOneValidNumber() {
        #expect(JSONNumber(literal: "01") == nil)
        #expect(JSONNumber(literal: " 1") == nil)
        #expect(JSONNumber(literal: "NaN") == nil)
        #expect(JSONNumber(literal: "\"1\"") == nil)
        #expect(JSONNumber(literal: "1.5e-7")?.text == "1.5e-7")
    }

    @Test func doublesThatJSONCannotHoldAreRefused() {
        #expect(JSONNumber(Double.nan) == nil)
        #expect(JSONNumber(Double.infinity) == nil)
        #expect(JSONNumber(0.1)?.text == "0.1")
    }
}
