/// Reference forms of ISO 8601 values, written independently of the service's parsers so that the
/// targets can compare the two.
public enum ISO8601 {
    /// `YYYY-MM-DDTHH:MM:SS.ffffffZ` for an instant in years 1...9999; nil outside.
    public static func utcText(microseconds: Int64) -> String? {
        let (seconds, micros) = floorDivide(microseconds, 1_000_000)
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let (year, month, day) = civil(fromDays: days)
        guard (1...9999).contains(year) else { return nil }
        let hour = secondOfDay / 3600, minute = secondOfDay / 60 % 60, second = secondOfDay % 60
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))"
            + ".\(pad(micros, 6))Z"
    }

    /// Seconds of a duration written `P[nD][T[nH][nM][nS]]` (weeks, months and years are not fixed
    /// lengths here); nil for anything else. Saturates at `Int64.max`.
    public static func durationSeconds(_ text: String) -> Int64? {
        var bytes = Array(text.utf8)[...]
        guard bytes.popFirst() == UInt8(ascii: "P"), !bytes.isEmpty else { return nil }
        var total: Int64 = 0
        var inTime = false
        var units: [UInt8] = []
        var sawNumber = false
        var number: Int64 = 0
        var digits = 0
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                let (shifted, o1) = number.multipliedReportingOverflow(by: 10)
                let (next, o2) = shifted.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
                number = o1 || o2 ? Int64.max : next
                digits += 1
            case UInt8(ascii: "T"):
                guard !inTime, digits == 0 else { return nil }
                inTime = true
            case UInt8(ascii: "D"), UInt8(ascii: "H"), UInt8(ascii: "M"), UInt8(ascii: "S"):
                guard digits > 0 else { return nil }
                let unit: Int64
                switch (byte, inTime) {
                case (UInt8(ascii: "D"), false): unit = 86_400
                case (UInt8(ascii: "H"), true): unit = 3_600
                case (UInt8(ascii: "M"), true): unit = 60
                case (UInt8(ascii: "S"), true): unit = 1
                default: return nil
                }
                guard !units.contains(byte) else { return nil }
                units.append(byte)
                let (part, o1) = number.multipliedReportingOverflow(by: unit)
                let (sum, o2) = total.addingReportingOverflow(part)
                total = o1 || o2 ? Int64.max : sum
                number = 0
                digits = 0
                sawNumber = true
            default:
                return nil
            }
        }
        guard digits == 0, sawNumber, !(inTime && units.allSatisfy { $0 == UInt8(ascii: "D") }) else { return nil }
        return total
    }

    static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let quotient = value / divisor, remainder = value % divisor
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }

    /// Howard Hinnant's civil_from_days, the inverse of the service's days_from_civil.
    static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
