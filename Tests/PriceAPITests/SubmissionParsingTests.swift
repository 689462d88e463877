import PriceJSON
import Testing
@testable import PriceAPI

@Suite("Parsing a report submission")
struct SubmissionParsingTests {
    func parse(_ body: String, contentType: String? = "application/json", prefer: String? = nil)
        -> Result<ReportSubmission, APIError> {
        ReportSubmission.parse(body: Array(body.utf8), contentType: contentType, prefer: prefer)
    }

    func error(_ body: String, contentType: String? = "application/json") -> APIError? {
        if case .failure(let error) = parse(body, contentType: contentType) { return error }
        return nil
    }

    @Test("one object becomes one row with only the keys that were sent")
    func singleObject() throws {
        let submission = try parse(#"{"location_id":"sfmta:garage-1","rate_kind":"hourly","price_cents":350}"#).get()
        #expect(submission.rows.count == 1)
        #expect(!submission.returnRepresentation)
        #expect(submission.parameterJSON == #"[{"location_id":"sfmta:garage-1","rate_kind":"hourly","price_cents":350}]"#)
    }

    @Test("Prefer: return=representation is honoured among other preferences")
    func preferRepresentation() throws {
        let body = #"{"location_id":"a","rate_kind":"daily","price_cents":1}"#
        #expect(try parse(body, prefer: "count=exact, return=representation").get().returnRepresentation)
        #expect(!(try parse(body, prefer: "return=minimal").get().returnRepresentation))
    }

    @Test("an empty Prefer means no preference; an empty item in a list is refused by name")
    func preferEmptyItems() throws {
        let body = #"{"location_id":"a","rate_kind":"daily","price_cents":1}"#
        for nothing in ["", "  "] {
            #expect(!(try parse(body, prefer: nothing).get().returnRepresentation), "\(nothing.debugDescription)")
        }
        for list in ["return=minimal,", ",", "return=representation, ,count=exact", ",return=minimal"] {
            guard case .failure(let error) = parse(body, prefer: list) else {
                Issue.record("\(list.debugDescription) was accepted")
                continue
            }
            #expect(error.status == 400 && error.code == "PGRST122", "\(list.debugDescription)")
            #expect(error.details == "Invalid preferences: (an empty item)", "\(list.debugDescription)")
        }
    }

    @Test("content type must be JSON; charset parameters are fine")
    func contentType() {
        #expect(error("{}", contentType: "text/plain")?.code == "PGRST107")
        #expect(error("{}", contentType: nil)?.status == 400)
        #expect(error(#"{"location_id":"a","rate_kind":"flat","price_cents":5}"#,
                      contentType: "application/json; charset=utf-8") == nil)
        let row = #"{"location_id":"a","rate_kind":"flat","price_cents":5}"#
        for accepted in ["Application/JSON", " application/json\t", "APPLICATION/JSON;charset=utf-8", "application/json ;x=y"] {
            #expect(error(row, contentType: accepted) == nil, "\(accepted)")
        }
        for refused in ["application/jsonx", "application/json-patch+json", "application/jsön", "application /json",
                        "", ";application/json", "text/json"] {
            #expect(error(row, contentType: refused)?.code == "PGRST107", "\(refused)")
        }
    }

    @Test("malformed JSON, empty bodies and scalars are 400 with a message a person understands")
    func malformed() {
        #expect(error("{\"location_id\":")?.code == "PGRST102")
        #expect(error("")?.status == 400)
        #expect(error("42")?.message == "Body must be a JSON object or an array of objects")
        #expect(error("[]")?.status == 400)
        #expect(error("[1]")?.message == "Element 0 of the array is not a JSON object")
    }

    @Test("unknown columns, including reporter_id, are refused with PostgREST's PGRST204")
    func unknownColumns() {
        let forged = error(#"{"location_id":"a","rate_kind":"flat","price_cents":5,"reporter_id":"00000000-0000-0000-0000-000000000000"}"#)
        #expect(forged?.code == "PGRST204")
        #expect(forged?.message.contains("reporter_id") == true)
        #expect(error(#"{"created_at":"2020-01-01"}"#)?.code == "PGRST204")
    }

    @Test("price_cents must be a whole number in range")
    func priceCents() {
        #expect(error(#"{"location_id":"a","rate_kind":"flat","price_cents":"5"}"#)?.code == "22P02")
        #expect(error(#"{"location_id":"a","rate_kind":"flat","price_cents":5.5}"#)?.code == "22P02")
        #expect(error(#"{"location_id":"a","rate_kind":"flat","price_cents":1e400}"#)?.status == 400)
        #expect(error(#"{"location_id":"a","rate_kind":"flat","price_cents":0}"#)?.code == "23514")
        #expect(error(#"{"location_id":"a","rate_kind":"flat","price_cents":1000001}"#)?.code == "23514")
        #expect(error(#"{"location_id":"a","rate_kind":"flat","price_cents":1000000}"#) == nil)
    }

    @Test("strings must be strings and hold no NUL; client_report_id must be a UUID")
    func strings() {
        #expect(error(#"{"location_id":5,"rate_kind":"flat","price_cents":5}"#)?.code == "22P02")
        #expect(error(#"{"location_id":"a\u0000b","rate_kind":"flat","price_cents":5}"#)?.code == "22P05")
        #expect(error(#"{"location_id":"a","rate_kind":"flat","price_cents":5,"client_report_id":"nope"}"#)?.code == "22P02")
        #expect(error(#"{"location_id":"a","rate_kind":"flat","price_cents":5,"client_report_id":"6f1c1d8e-3b7a-4c52-9a55-0b9a1c2d3e4f"}"#) == nil)
    }

    @Test("lat and lng are numbers of degrees in range, both or neither, each error naming the field and bound")
    func coordinates() throws {
        let base = #""location_id":"a","rate_kind":"flat","price_cents":5"#
        let both = try parse("{\(base),\"lat\":37.7947,\"lng\":-122.393}").get()
        #expect(both.parameterJSON == #"[{"location_id":"a","rate_kind":"flat","price_cents":5,"lat":37.7947,"lng":-122.393}]"#)
        #expect(error("{\(base),\"lat\":90,\"lng\":-180}") == nil, "the bounds themselves are in range")
        #expect(error("{\(base),\"lat\":-90,\"lng\":180}") == nil)
        let nulls = error("{\(base),\"lat\":null,\"lng\":null}")
        #expect(nulls?.code == "22P02" && nulls?.message == "lat must be a number of degrees",
                "no coordinates is both keys left out, never null")
        #expect(nulls?.hint == "Leave lat and lng out for a report without coordinates")
        #expect(error("{\(base),\"lat\":1e2,\"lng\":0}")?.message == "lat must be between -90 and 90")

        let onlyLat = error("{\(base),\"lat\":37.7947}")
        #expect(onlyLat?.status == 400 && onlyLat?.code == "23514")
        #expect(onlyLat?.message == "lat and lng go together: give both or neither")
        #expect(onlyLat?.details == "Got lat without lng")
        #expect(error("{\(base),\"lng\":-122.4}")?.details == "Got lng without lat")
        #expect(error("{\(base),\"lat\":37.7,\"lng\":null}")?.message == "lng must be a number of degrees")

        let north = error("{\(base),\"lat\":90.000001,\"lng\":0}")
        #expect(north?.code == "23514" && north?.message == "lat must be between -90 and 90")
        #expect(north?.details == "Got 90.000001")
        #expect(error("{\(base),\"lat\":0,\"lng\":-180.5}")?.message == "lng must be between -180 and 180")
        #expect(error("{\(base),\"lat\":0,\"lng\":1e400}")?.message == "lng must be between -180 and 180")
        let text = error("{\(base),\"lat\":\"37.7\",\"lng\":0}")
        #expect(text?.code == "22P02" && text?.message.hasPrefix("lat must be a number of degrees") == true)
        #expect(error("{\(base),\"lat\":true,\"lng\":0}")?.code == "22P02")
    }

    @Test("the representation never returns the coordinates that were sent")
    func representationWithoutCoordinates() throws {
        let submission = try parse(#"{"location_id":"a","rate_kind":"flat","price_cents":5,"lat":1.5,"lng":2.5}"#).get()
        let text = ReportHandler.representation(submission, receipts:
            #"[{"id":7,"created_at":"2026-01-01T00:00:00+00:00","currency":"USD","replayed":false}]"#)
        #expect(!text.contains(#""lat""#) && !text.contains(#""lng""#) && !text.contains("1.5") && !text.contains("2.5"))
        #expect(text.contains(#""location_id":"a""#))
    }

    @Test("an array holds 1 to 10 objects with the same keys")
    func arrays() {
        let row = #"{"location_id":"a","rate_kind":"flat","price_cents":5}"#
        let ten = "[" + Array(repeating: row, count: 10).joined(separator: ",") + "]"
        let eleven = "[" + Array(repeating: row, count: 11).joined(separator: ",") + "]"
        #expect(error(ten) == nil)
        #expect(error(eleven)?.details == "11 reports sent, at most 10 allowed")
        #expect(error("[\(row),{\"location_id\":\"a\",\"rate_kind\":\"flat\",\"price_cents\":5,\"currency\":\"EUR\"}]")?.message
            == "All object keys must match")
    }

    @Test("rows without currency leave it to the table's default")
    func currencyDefault() throws {
        #expect(!(try parse(#"{"location_id":"a","rate_kind":"flat","price_cents":5}"#).get().sendsCurrency))
        #expect(try parse(#"{"location_id":"a","rate_kind":"flat","price_cents":5,"currency":"EUR"}"#).get().sendsCurrency)
    }

    @Test("the representation echoes what was sent plus the trigger's id and created_at, in order")
    func representation() throws {
        let submission = try parse(#"[{"location_id":"a","rate_kind":"flat","price_cents":5},{"location_id":"b","rate_kind":"flat","price_cents":6}]"#).get()
        let text = ReportHandler.representation(submission, receipts:
            #"[{"id":7,"created_at":"2026-01-01T00:00:00+00:00","currency":"CAD","replayed":false},{"id":8,"created_at":"2026-01-01T00:00:00+00:00","currency":"USD","replayed":false}]"#)
        let rows = try #require(try JSONValue.parse(Array(text.utf8), maxBytes: 1 << 16).arrayValue)
        #expect(rows.count == 2)
        #expect(rows[0]["id"] == 7)
        #expect(rows[1]["id"] == 8)
        #expect(rows[1]["location_id"] == "b")
        #expect(rows[0]["currency"] == "CAD", "a currency not sent is the database's default, from the receipt")
        #expect(rows[0]["created_at"] == "2026-01-01T00:00:00+00:00")
        #expect(text.hasPrefix(#"[{"id":7,"location_id":"a","rate_kind":"flat","price_cents":5,"currency":"CAD","#
                               + #""created_at":"2026-01-01T00:00:00+00:00"},{"id":8,"#))
    }

    @Test("the insert parameter lists each row's keys in column order, whatever order they were sent in")
    func parameterInColumnOrder() throws {
        let submission = try parse(#"{"price_cents":5,"currency":"EUR","location_id":"a","rate_kind":"flat"}"#).get()
        #expect(submission.parameterJSON == #"[{"location_id":"a","rate_kind":"flat","price_cents":5,"currency":"EUR"}]"#)
    }
}

@Suite("Parsing a median call")
struct MedianQueryTests {
    func parse(_ name: String, body: String = "", method: String = "POST",
               query: [(String, String)] = []) -> Result<MedianQuery, APIError> {
        guard let function = RPCFunction(rawValue: name) else {
            return .failure(MedianQuery.noSuchFunction(name, arguments: []))
        }
        return MedianQuery.parse(function: function, isRead: method == "GET", queryArguments: query,
                                 body: Array(body.utf8), contentType: "application/json")
    }

    @Test("named JSON arguments, with rate_kind optional")
    func jsonArguments() throws {
        let query = try parse("price_medians", body: #"{"location_ids":["a","b"]}"#).get()
        #expect(query.locations == .many(["a", "b"]))
        #expect(query.rateKinds == .functionDefault)
        #expect(query.locationsParameter == #"["a","b"]"#)
        let single = try parse("price_median", body: #"{"location_id":"x","rate_kind":"daily"}"#).get()
        #expect(single.locations == .one("x"))
        #expect(single.rateKinds == .one("daily"))
    }

    @Test("rate_kind null (an empty rate_kind= in the GET form) asks for every rate kind")
    func everyRateKind() throws {
        #expect(try parse("price_medians", body: #"{"location_ids":["a"],"rate_kind":null}"#).get().rateKinds == .all)
        #expect(try parse("price_median", method: "GET", query: [("location_id", "a"), ("rate_kind", "")]).get().rateKinds == .all)
        #expect(RateKind.arrayLiteral == "{hourly,daily,flat,monthly}")
    }

    @Test("GET arguments come from the query string, arrays as {a,b}")
    func getArguments() throws {
        let query = try parse("price_medians", method: "GET", query: [("location_ids", #"{a,"b,c"}"#)]).get()
        #expect(query.locations == .many(["a", "b,c"]))
    }

    @Test("an unknown function, an unknown argument or a missing one is PGRST202, as PostgREST resolves functions")
    func unknownFunctionOrArguments() {
        for result in [parse("drop_everything", body: "{}"),
                       parse("price_medians", body: #"{"location_ids":[],"limit":3}"#),
                       parse("price_median", body: #"{"rate_kind":"hourly"}"#)] {
            guard case .failure(let error) = result else { Issue.record("expected failure"); continue }
            #expect(error.status == 404)
            #expect(error.code == "PGRST202")
        }
    }

    @Test("wrong argument types are 400")
    func wrongTypes() {
        guard case .failure(let error) = parse("price_medians", body: #"{"location_ids":"a"}"#) else {
            Issue.record("expected failure"); return
        }
        #expect(error.status == 400)
        guard case .failure(let nested) = parse("price_medians", body: #"{"location_ids":[1]}"#) else {
            Issue.record("expected failure"); return
        }
        #expect(nested.status == 400)
    }
}
