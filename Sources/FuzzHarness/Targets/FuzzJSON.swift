import PriceJSON

/// The JSON parser (every request body, every token segment, every feed). Beyond not crashing: an
/// accepted document serializes to text that parses back to the same value; a refusal points inside
/// the input; an integer literal reads back as itself.
func fuzzJSON(_ input: UnsafeRawBufferPointer) {
    let parser = JSONParser(maxBytes: 1 << 20)
    let value: JSONValue
    do {
        value = try parser.parse(input)
    } catch {
        fuzzRequire((0...input.count).contains(error.offset), "error offset \(error.offset) outside \(input.count) bytes: \(error)")
        return
    }
    let text = value.serializedBytes()
    do {
        let again = try JSONParser(maxBytes: Int.max, maxDepth: parser.maxDepth).parse(text)
        fuzzRequire(again == value, "serialize(parse(x)) parses to another value: \(printable(text))")
        fuzzRequire(again.serializedBytes() == text, "serialization is not stable: \(printable(text))")
    } catch {
        fuzzRequire(false, "serialize(parse(x)) does not parse (\(error)): \(printable(text))")
    }
    checkNumbers(value)
    return
}

private func checkNumbers(_ value: JSONValue) {
    switch value {
    case .number(let number):
        if let integer = number.asInt64 {
            fuzzRequire(String(integer) == number.text || number.text == "-0", "asInt64 of \(number.text) is \(integer)")
        }
        _ = number.asDouble
    case .array(let elements):
        elements.forEach(checkNumbers)
    case .object(let object):
        object.forEach { checkNumbers($0.value) }
    default:
        break
    }
}
