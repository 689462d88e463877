/// ISO 8601 / PostgreSQL timestamps: `2026-11-29`, `2026-11-29T22:00:00Z`,
/// `2026-11-29 22:00:00.5+00`, `2026-11-29T23:00+01:00`. No offset means UTC (the sessions'
/// TimeZone). PostgreSQL's other spellings (`now`, `Nov 29 2026`, …) are refused, not guessed.
package enum Timestamp {
    package static func microseconds(_ text: String) -> Int64? {
        var scanner = Scanner(Array(text.utf8))
        guard let year = scanner.digits(exactly: 4), scanner.take("-"), let month = scanner.digits(exactly: 2),
              scanner.take("-"), let day = scanner.digits(exactly: 2),
              (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year) else { return nil }
        var seconds = Int64(daysFromCivil(year: year, month: month, day: day)) * 86_400
        var micros: Int64 = 0
        if scanner.take("T") || scanner.take("t") || scanner.take(" ") {
            guard let hour = scanner.digits(exactly: 2), scanner.take(":"), let minute = scanner.digits(exactly: 2),
                  hour <= 24, minute <= 59 else { return nil }
            var second = 0
            if scanner.take(":") {
                guard let value = scanner.digits(exactly: 2), value <= 60 else { return nil }
                second = value
                if scanner.take(".") {
                    guard let (fraction, count) = scanner.fraction() else { return nil }
                    micros = fraction.scaledToMicroseconds(digits: count)
                }
            }
            guard hour < 24 || (minute == 0 && second == 0 && micros == 0) else { return nil }
            seconds += Int64(hour * 3600 + minute * 60 + second)
        }
        if scanner.take("Z") || scanner.take("z") {
        } else if let sign = scanner.sign() {
            guard let hours = scanner.digits(exactly: 2), hours <= 15 else { return nil }
            var offset = hours * 3600
            let colon = scanner.take(":")
            if let minutes = scanner.digits(exactly: 2) {
                guard minutes <= 59 else { return nil }
                offset += minutes * 60
                if colon, scanner.take(":") {
                    guard let extra = scanner.digits(exactly: 2), extra <= 59 else { return nil }
                    offset += extra
                }
            } else if colon {
                return nil
            }
            seconds -= Int64(sign * offset)
        }
        guard scanner.atEnd else { return nil }
        return seconds * 1_000_000 + micros
    }

    /// PostgreSQL's text output of a timestamptz (`2026-11-29 22:00:00+00`) as its JSON output
    /// (`2026-11-29T22:00:00+00:00`), the form `to_json` and PostgREST give.
    package static func jsonForm(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 3)
        appendJSONForm(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `jsonForm`'s bytes appended to `output`, without a String in between: the renderer writes a
    /// timestamp per row. PostgreSQL's output is ASCII; anything else is written unchanged.
    package static func appendJSONForm(_ text: String, to output: inout [UInt8]) {
        var text = text
        text.withUTF8 { appendJSONForm(utf8: $0, to: &output) }
    }

    package static func appendJSONForm(utf8 text: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        let start = output.count
        output.append(contentsOf: text)
        let count = output.count - start
        guard count >= 19, output[start + 10] == UInt8(ascii: " "),
              !output[start...].contains(where: { $0 >= 0x80 }) else { return }
        output[start + 10] = UInt8(ascii: "T")
        // An offset of hours only (`+00`, `-05`) gains its minutes, as to_json writes it.
        var sign = output.count - 1
        while sign > start + 10, output[sign] != UInt8(ascii: "+"), output[sign] != UInt8(ascii: "-") { sign -= 1 }
        if sign > start + 10, output.count - sign == 3 {
            output.append(contentsOf: [UInt8(ascii: ":"), UInt8(ascii: "0"), UInt8(ascii: "0")])
        }
    }

    package static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
    package static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private struct Scanner {
        package let bytes: [UInt8]
        package var index = 0

        package init(_ bytes: [UInt8]) { self.bytes = bytes }

        package var atEnd: Bool { index == bytes.count }

        package mutating func take(_ character: Character) -> Bool {
            guard index < bytes.count, let ascii = character.asciiValue, bytes[index] == ascii else { return false }
            index += 1
            return true
        }

        package mutating func sign() -> Int? {
            if take("+") { return 1 }
            if take("-") { return -1 }
            return nil
        }

        package mutating func digits(exactly count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + count] {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            index += count
            return value
        }

        /// Up to 18 fractional digits (more are refused rather than rounded differently).
        package mutating func fraction() -> (Int64, Int)? {
            var value: Int64 = 0
            var count = 0
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                guard count < 18 else { return nil }
                value = value * 10 + Int64(bytes[index] - 0x30)
                count += 1
                index += 1
            }
            return count == 0 ? nil : (value, count)
        }
    }
}

private extension Int64 {
    /// A fraction of `digits` decimal digits as microseconds, rounded half up like PostgreSQL.
    func scaledToMicroseconds(digits: Int) -> Int64 {
        if digits <= 6 {
            var value = self
            for _ in digits..<6 { value *= 10 }
            return value
        }
        var divisor: Int64 = 1
        for _ in 6..<digits { divisor *= 10 }
        return (self + divisor / 2) / divisor
    }
}
